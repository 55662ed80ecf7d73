"""Synchronous against pipelined learning per step (docs/runs/pipeline53/README.md): the
last quarter's training matches won, the evaluations, and both curves in one plot.

    python docs/runs/pipeline53/compare.py RUNS_DIR OUT_DIR   (RUNS_DIR holds the runs off/ and on/)
"""

import sys
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from train.plots import hand_outcomes

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

RUNS = {"synchronous (--pipeline off --torch-threads 1)": "off", "pipelined (default)": "on"}


def main(root: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows = []
    for label, name in RUNS.items():
        run = root / name
        episodes = pd.read_csv(run / "episodes.csv")
        last = episodes[episodes.timesteps > 0.75 * episodes.timesteps.max()]
        won = last.won.mean()
        hands_won = sum(hand_outcomes(r)[0] for r in last.to_dict("records")) / last.hands.sum()
        evals = ", ".join(f"{int(r.timesteps):,}: {r.win_rate:.1%} ({r.ci_low:.1%}-{r.ci_high:.1%})"
                          for r in pd.read_csv(run / "eval.csv").itertuples())
        half_width = 1.96 * np.sqrt(won * (1 - won) / len(last))
        rows.append(f"| {label} | {len(last)} | {won:.1%} ± {half_width:.1%} | {hands_won:.1%} | {evals} |")
        axes[0].plot(episodes.timesteps, episodes.won.rolling(300, min_periods=50).mean(), label=label)
        per_match = [hand_outcomes(r)[0] / max(1, r["hands"]) for r in episodes.to_dict("records")]
        axes[1].plot(episodes.timesteps, pd.Series(per_match).rolling(300, min_periods=50).mean(), label=label)
    axes[0].set_title("training matches won vs Simple (rolling 300)")
    axes[1].set_title("hands won (rolling 300 matches)")
    for ax in axes:
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "learning_per_step.png", dpi=100)
    print("| run | matches in the last quarter | won (95% CI) | hands won | evaluations vs Simple |")
    print("|---|---:|---:|---:|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
