"""Learning per step of the default recipe with the sparse first layers and the split
update against 7542a53 and 114b508: 1M steps against Simple, seeds 21 to 24 (7542a53's
seeds 21 and 22 are docs/runs/learning53's runs). One colour per code: each seed a thin
line, the mean of the four a thick one.

    python docs/runs/sparse53/plot.py   # writes learning_per_step.png here
"""

from __future__ import annotations

import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
SEEDS = (21, 22, 23, 24)
CODES = {  # label: (colour, the run folder of each seed)
    "7542a53": ("tab:gray", [HERE.parent / "learning53" / f"before_s{s}" if s < 23 else HERE / f"before_s{s}"
                             for s in SEEDS]),
    "114b508": ("tab:blue", [HERE / f"base114_s{s}" for s in SEEDS]),
    "sparse first layers + split update": ("tab:orange", [HERE / f"split_s{s}" for s in SEEDS]),
}
BIN = 100_000


def training_curve(run: Path) -> tuple[list[float], list[float]]:
    """Share of training matches won per BIN steps (the last, partial bin left out)."""
    bins: dict[int, list[float]] = {}
    with (run / "episodes_won.csv").open() as f:
        for row in csv.DictReader(f):
            bins.setdefault(int(row["timesteps"]) // BIN, []).append(float(row["won"]))
    keep = [b for b in sorted(bins) if len(bins[b]) >= 200]
    return [(b + 0.5) * BIN / 1e6 for b in keep], [100 * sum(bins[b]) / len(bins[b]) for b in keep]


def evaluations(run: Path) -> tuple[list[float], list[float]]:
    with (run / "eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    return [int(r["timesteps"]) / 1e6 for r in rows], [100 * float(r["win_rate"]) for r in rows]


def main(codes: dict | None = None, out: Path = HERE / "learning_per_step.png") -> None:
    """The plot of ``codes`` (label: colour and run folders; this run's by default), into ``out``
    (docs/runs/rollout53/plot.py draws its runs with it)."""
    fig, (ax_train, ax_eval) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, (colour, runs) in (codes or CODES).items():
        for ax, read in ((ax_train, training_curve), (ax_eval, evaluations)):
            curves = [read(run) for run in runs]
            for xs, ys in curves:
                ax.plot(xs, ys, color=colour, lw=0.8, alpha=0.45)
            n = min(len(xs) for xs, _ in curves)
            mean = [sum(ys[i] for _, ys in curves) / len(curves) for i in range(n)]
            ax.plot(curves[0][0][:n], mean, color=colour, lw=2.5, marker="o", ms=4,
                    label=f"{label} (mean of {len(curves)} seeds)")
    ax_train.set(title="training matches won vs Simple (per 100k steps)", xlabel="million steps", ylabel="%")
    ax_eval.set(title="held-out evaluation vs Simple (100 matches)", xlabel="million steps", ylabel="%")
    ax_train.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
