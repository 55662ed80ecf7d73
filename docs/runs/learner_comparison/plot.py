"""Learning per step of five 1M-step runs from scratch against Simple (same seed, same
steps): training-match win rate in bins of 100k steps (about 1,400-3,000 matches each, 95%
Wilson intervals) and the held-out evaluations (100 duplicate matches, seeds 10,000+).

    python docs/runs/learner_comparison/plot.py   # writes learning_per_step.png and summary.csv
"""

from __future__ import annotations

import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from arena.stats import wilson_interval  # noqa: E402

HERE = Path(__file__).parent
RUNS = {
    "cmp_old": "today's recipe (two trunks, 4 epochs x 1024)",
    "cmp_old_priv": "today's recipe + privileged critic",
    "cmp_shared4": "--shared-trunk (4 epochs x 1024)",
    "cmp_fast": "--shared-trunk, 2 epochs x 2048",
    "cmp_fast_priv": "--shared-trunk, 2 epochs x 2048 + privileged critic",
}
BIN = 100_000


def main() -> None:
    plot(HERE, RUNS)


def plot(here: Path, runs: dict[str, str]) -> None:
    """The figure and the table of ``runs`` (folder: label) under ``here`` (each folder with
    ``episodes_won.csv`` and ``eval.csv``): ``learning_per_step.png`` and ``summary.csv``
    there. docs/runs/leaner_update/plot.py draws its runs with it."""
    fig, (ax_train, ax_eval) = plt.subplots(1, 2, figsize=(12, 4.5))
    rows = []
    for run, label in runs.items():
        bins: dict[int, list[float]] = {}
        with (here / run / "episodes_won.csv").open() as f:
            for r in csv.DictReader(f):
                bins.setdefault(int(r["timesteps"]) // BIN, []).append(float(r["won"]))
        xs, ys, lo, hi = [], [], [], []
        for b in sorted(bins):
            won = bins[b]
            if len(won) < 200:  # the last, partial bin
                continue
            low, high = wilson_interval(sum(won), len(won))
            xs.append((b + 0.5) * BIN / 1e6)
            ys.append(100 * sum(won) / len(won))
            lo.append(100 * low)
            hi.append(100 * high)
            rows.append({"run": run, "steps_from": b * BIN, "matches": len(won), "train_win_rate": round(ys[-1], 2)})
        line, = ax_train.plot(xs, ys, marker="o", ms=3, label=label)
        ax_train.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15)
        with (here / run / "eval.csv").open() as f:
            ev = list(csv.DictReader(f))
        ax_eval.errorbar([int(r["timesteps"]) / 1e6 for r in ev], [100 * float(r["win_rate"]) for r in ev],
                         yerr=[[100 * (float(r["win_rate"]) - float(r["ci_low"])) for r in ev],
                               [100 * (float(r["ci_high"]) - float(r["win_rate"])) for r in ev]],
                         marker="o", ms=3, capsize=2, color=line.get_color(), label=label)
    ax_train.set(title="training matches won vs Simple (per 100k steps)", xlabel="million steps", ylabel="%")
    ax_eval.set(title="held-out evaluation vs Simple (100 matches)", xlabel="million steps", ylabel="%")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    handles, labels = ax_train.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.savefig(here / "learning_per_step.png", dpi=110, bbox_inches="tight")
    with (here / "summary.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
