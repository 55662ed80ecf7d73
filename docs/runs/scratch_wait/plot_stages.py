"""Draw stages.png and write stages.csv from the five stages' episodes.csv (README, "PPO
from scratch", second round). Reads the run folders under runs/ (not shipped: the numbers
are kept in stages.csv). Run from the repository root:

    python docs/runs/scratch_wait/plot_stages.py
"""

from __future__ import annotations

import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = "docs/runs/scratch_wait"
WINDOW = 500  # training matches against Simple per point
#: (label, episodes.csv, steps before the stage, steps of the stage used)
STAGES = [("1 card network, deadwood shaping", "runs/scratch_shaping/episodes.csv", 0, 18501632),
          ("2 + relations", "runs/widen_relations/episodes.csv", 18501632, 5500928),
          ("3 + lookahead potential", "runs/widen_lookahead/episodes.csv", 24002560, 6000640),
          ("4 + knock bound (50/50 start)", "runs/widen_knock/episodes.csv", 30003200, 2502656),
          ("5 + start that plays on", "runs/wait_3_0/episodes.csv", 32505856, 4001792)]


def rolling(x: np.ndarray) -> np.ndarray:
    return np.convolve(x, np.ones(WINDOW), "valid")


def main() -> None:
    table = []
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.2))
    for name, path, offset, length in STAGES:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["opponent"] == "simple" and int(r["timesteps"]) <= length]
        step = np.array([offset + int(r["timesteps"]) for r in rows]) / 1e6
        won = rolling(np.array([int(r["won"]) for r in rows], float)) / WINDOW
        hands = rolling(np.array([int(r["hands"]) for r in rows], float))
        knock = rolling(np.array([int(r["my_knock"]) + int(r["my_gin"]) + int(r["my_big_gin"]) for r in rows],
                                 float)) / hands
        undercut = rolling(np.array([int(r["my_undercut"]) for r in rows], float)) / hands
        s = step[WINDOW - 1:]
        (line,) = axes[0].plot(s, won, label=name)
        axes[1].plot(s, knock, color=line.get_color())
        axes[1].plot(s, undercut, color=line.get_color(), linestyle=":")
        for i in range(0, len(s), 250):
            table.append((name[0], f"{s[i]:.3f}", f"{won[i]:.3f}", f"{knock[i]:.3f}", f"{undercut[i]:.3f}"))
    axes[0].axhline(0.5, color="grey", lw=0.8, ls="--")
    axes[0].axhline(0.55, color="black", lw=0.8, ls=":", label="target 55%")
    axes[0].set(title="Training matches against Simple (sampled policy, mean of 500)",
                xlabel="learner steps (millions)", ylabel="match win rate", ylim=(0, 0.8))
    axes[0].legend(fontsize=8, loc="lower right")
    axes[1].set(title="Hands ended by the learner's knock or gin (solid), undercuts won (dotted)",
                xlabel="learner steps (millions)", ylabel="share of hands", ylim=(0, 0.6))
    fig.tight_layout()
    fig.savefig(f"{OUT}/stages.png", dpi=110)
    with open(f"{OUT}/stages.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["stage", "million_steps", "win_rate_vs_simple_500", "knock_share", "undercut_share"])
        writer.writerows(table)


if __name__ == "__main__":
    main()
