"""The specialist's curve: hands won against OpenSpiel's bot during training (its episodes,
one hand each, in our engine against the compiled bot) and at OpenSpiel's own table
(``eval.peer`` folders of its checkpoints, held-out deals).

    python docs/runs/peer53/curve.py OUT_DIR PEER_DIR LABEL=RUN_DIR [LABEL=RUN_DIR ...]

Each RUN_DIR is a training run (its ``episodes.csv``: one row per hand), PEER_DIR holds ``eval.peer``
folders (their ``summary.json``); those whose agent label is the first run's LABEL are its
checkpoints; writes ``curve.png`` to OUT_DIR and prints the tables (README.md has them).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

BIN = 250_000  # training steps per point of the training curve


def training_points(run: Path) -> list[tuple[int, int, float, float]]:
    """(end step, hands, won, lost) per ``BIN`` steps of the training episodes."""
    rows = list(csv.DictReader(open(run / "episodes.csv", newline="")))
    steps = np.array([int(r["timesteps"]) for r in rows])
    won = np.array([int(r["won"]) for r in rows])
    lost = np.array([int(r["lost"]) for r in rows])
    out = []
    for end in range(BIN, int(steps.max()) + 1, BIN):
        sel = (steps > end - BIN) & (steps <= end)
        if sel.any():
            out.append((end, int(sel.sum()), float(won[sel].mean()), float(lost[sel].mean())))
    return out


def table_points(peer: Path, agent: str) -> list[tuple[int, dict]]:
    """(checkpoint step, eval.peer summary) of the folders in ``peer`` whose agent label is
    ``agent`` (the first run's: its checkpoints; the step read from the checkpoint's name,
    the warm start's weights are step 0), by step."""
    out = []
    for folder in sorted(peer.iterdir()):
        summary = json.loads((folder / "summary.json").read_text())
        label, _, spec = summary["agents"][0].partition("=")
        if label != agent:
            continue
        step = re.search(r"ppo_(\d+)_steps", spec)
        out.append((int(step.group(1)) if step else 0, {**summary["summaries"][0], "first_deal": summary["seed"]}))
    return sorted(out, key=lambda p: (p[0], p[1]["deals"]))


def main(out: Path, peer: Path, runs: list[tuple[str, Path]]) -> None:
    table = table_points(peer, runs[0][0])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    lines = []
    for label, run in runs:
        train = training_points(run)
        ax.plot([p[0] / 1e6 for p in train], [100 * p[2] for p in train], marker=".",
                label=f"{label}: training hands won")
        lines += [f"**{label}** (training hands, the policy sampled, our engine against the compiled bot)", "",
                  "| steps | hands | won / lost % |", "|---:|---:|---|"]
        lines += [f"| {e:,} | {n:,} | {100 * w:.1f} / {100 * lo:.1f} |" for e, n, w, lo in train] + [""]
    if table:
        x = [s / 1e6 for s, _ in table]
        ax.errorbar(x, [100 * t["won"] for _, t in table],
                    yerr=[[100 * 1.96 * np.sqrt(t["won"] * (1 - t["won"]) / t["hands"]) for _, t in table]] * 2,
                    fmt="o-", capsize=3, label=f"{runs[0][0]}: held-out hands won at OpenSpiel's table")
    ax.axhline(81, color="grey", ls="--", lw=1, label="the peer: 81% after 30M steps")
    ax.axhline(54.6, color="grey", ls=":", lw=1, label="our shipped generalist: 54.6%")
    ax.set_xlabel("learner steps (millions)")
    ax.set_ylabel("hands won against SimpleGinRummyBot (%)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "curve.png", dpi=110)
    lines += [f"**{runs[0][0]}** at OpenSpiel's table (`eval.peer`: deterministic, duplicate held-out deals)", "",
              "| checkpoint | deals (hands) | won / lost % | points per hand (95% CI) |", "|---:|---|---|---|"]
    lines += [f"| {s:,} | {t['deals']} ({t['hands']}) from seed {t['first_deal']:,} | "
              f"{100 * t['won']:.1f} / {100 * t['lost']:.1f} | "
              f"{t['points_per_hand']:+.2f} ({t['ci_low']:+.2f} to {t['ci_high']:+.2f}) |" for s, t in table]
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]),
         [(label, Path(folder)) for label, _, folder in (a.partition("=") for a in sys.argv[3:])])
