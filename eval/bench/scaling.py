"""Decisions per second of the batched engine against the batch size N, and where the time goes.

    python -m eval.bench.scaling                      # N = 1, 4, 16, ..., 4096; plot + CSV
    python -m eval.bench.scaling --profile 1024       # cProfile of random play at N = 1024

Each point is random legal play as in ``eval.bench.run``'s batched row: every step builds
all N observations and masks, draws one uniform legal action per game and steps, on one
core. The sizes run interleaved for ``--rounds`` rounds (median kept), so that a busy
machine slows every size alike. Writes ``scaling.csv`` and ``scaling.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from eval.bench.drivers import drive_batch

SIZES = (1, 4, 16, 64, 256, 1024, 4096)


def measure(sizes: Sequence[int], decisions: int, rounds: int, seed: int = 0) -> dict[int, float]:
    """Median decisions/s per batch size (about ``decisions`` decisions per size and round)."""
    rates: dict[int, list[float]] = {n: [] for n in sizes}
    for r in range(rounds):
        for n in sizes:
            steps = max(5, decisions // n)
            rep = drive_batch(n, steps, seed + r)
            rates[n].append(rep["steps"] / rep["seconds"])
    return {n: statistics.median(v) for n, v in rates.items()}


def plot(rates: dict[int, float], path: Path, reference: float | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ns = sorted(rates)
    ax.plot(ns, [rates[n] for n in ns], marker="o", label="BatchGame: observations + masks + random move + step")
    if reference:
        ax.axhline(reference, color="grey", ls="--", lw=1, label="OpenSpiel Python loop, obs tensor + mask")
    ax.set(xscale="log", yscale="log", xlabel="games in the batch N", ylabel="decisions per second (one core)",
           title="Batched engine throughput vs batch size")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def profile(n: int, steps: int, top: int = 25) -> str:
    """cProfile text (sorted by own time) of random play at batch size ``n``."""
    drive_batch(n, 3, 1)  # warm-up: imports, lookup tables
    prof = cProfile.Profile()
    prof.enable()
    drive_batch(n, steps, 0)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--decisions", type=int, default=40_000, help="decisions per size and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reference", type=float, default=None,
                        help="OpenSpiel decisions/s (obs tensor + mask) to draw as a line")
    parser.add_argument("--out", type=Path, default=Path("runs/bench"))
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile random play at this N")
    args = parser.parse_args(argv)
    if args.profile:
        print(profile(args.profile, max(5, 200_000 // args.profile)))
        return 0
    start = time.perf_counter()
    rates = measure(args.sizes, args.decisions, args.rounds)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = ["n,decisions_per_s"] + [f"{n},{rates[n]:.0f}" for n in sorted(rates)]
    (args.out / "scaling.csv").write_text("\n".join(lines) + "\n")
    path = plot(rates, args.out / "scaling.png", args.reference)
    print("| N | decisions/s |\n|---|---|")
    for n in sorted(rates):
        print(f"| {n} | {rates[n]:,.0f} |")
    print(f"wrote {args.out / 'scaling.csv'} and {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
