"""Learning per step with the lean update step against the step before it (6508919, whose
runs are docs/runs/rollout53's parts_s*: 6508919 trains to their bits): 1M steps against
Simple, the same seeds, drawn by docs/runs/sparse53/plot.py (each seed a thin line, each
code's mean a thick one), and the table of docs/runs/step53/README.md printed: the share of
training matches won per 250k steps and the held-out evaluation at 1M, mean (standard
deviation), and the differences with 95% intervals (Welch's, and paired by seed).

    python docs/runs/step53/plot.py            # seeds 21 to 28; writes learning_per_step.png here
    python docs/runs/step53/plot.py 21 36      # another range of seeds
"""

from __future__ import annotations

import csv
import importlib.util
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
RUNS = HERE.parent


def _sparse_plot():
    spec = importlib.util.spec_from_file_location("sparse53_plot", RUNS / "sparse53" / "plot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quarters(run: Path) -> list[float]:
    """% of training matches won in each 250k steps (the last rollout's, past 1M, left out)."""
    bins: dict[int, list[float]] = {}
    with (run / "episodes_won.csv").open() as f:
        for row in csv.DictReader(f):
            bins.setdefault(int(row["timesteps"]) // 250_000, []).append(float(row["won"]))
    return [100 * statistics.fmean(bins[q]) for q in range(4)]


def held_out(run: Path) -> float:
    with (run / "eval.csv").open() as f:
        return 100 * float(list(csv.DictReader(f))[-1]["win_rate"])


def interval(a: list[float], b: list[float], paired: bool = False) -> str:
    """b − a with a normal 95% interval (Welch's standard error, or the paired differences')."""
    if paired:
        d = [y - x for x, y in zip(a, b, strict=True)]
        se = statistics.stdev(d) / len(d) ** 0.5
        mean = statistics.fmean(d)
    else:
        se = (statistics.variance(a) / len(a) + statistics.variance(b) / len(b)) ** 0.5
        mean = statistics.fmean(b) - statistics.fmean(a)
    return f"{mean:+.1f} ({mean - 1.96 * se:+.1f} to {mean + 1.96 * se:+.1f})"


def main() -> None:
    first, last = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (21, 28)
    seeds = range(first, last + 1)
    codes = {"6508919 (the step before)": ("tab:blue", [RUNS / "rollout53" / f"parts_s{s}" for s in seeds]),
             "the lean step": ("tab:orange", [HERE / f"lean_s{s}" for s in seeds])}
    _sparse_plot().main(codes, HERE / "learning_per_step.png")
    table = {label: ([quarters(r) for r in runs], [held_out(r) for r in runs]) for label, (_, runs) in codes.items()}
    print("| code | 0–250k | 250–500k | 500–750k | 750k–1M | held-out at 1M |\n|---|---|---|---|---|---|")
    for label, (qs, held) in table.items():
        cells = [f"{statistics.fmean(c):.2f}% ({statistics.stdev(c):.2f})" for c in zip(*qs, strict=True)]
        print(f"| {label} | {' | '.join(cells)} | {statistics.fmean(held):.1f}% ({statistics.stdev(held):.1f}) |")
    (before_q, before_h), (after_q, after_h) = table.values()
    last_before, last_after = [q[3] for q in before_q], [q[3] for q in after_q]
    print(f"last quarter, lean − before: {interval(last_before, last_after)}; "
          f"paired by seed {interval(last_before, last_after, paired=True)}")
    print(f"held-out at 1M, lean − before: {interval(before_h, after_h)}; "
          f"paired by seed {interval(before_h, after_h, paired=True)}")


if __name__ == "__main__":
    main()
