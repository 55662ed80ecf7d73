"""Learning curves of a run folder: training win rate and evaluations over time.

    python -m train.plots runs/<run>
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open() as f:
        return list(csv.DictReader(f))


def _read_imitation(run_dir: Path) -> list[dict]:
    path = run_dir / "imitation.json"
    if not path.exists():
        return []
    import json

    return json.loads(path.read_text()).get("history", [])


def plot_learning_curves(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``learning_curve.png``: rolling training win rate per opponent, eval win rates."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    run_dir = Path(run_dir)
    out = Path(out) if out else run_dir / "learning_curve.png"
    episodes = _read_csv(run_dir / "episodes.csv")
    evals = _read_csv(run_dir / "eval.csv")
    imitation = _read_imitation(run_dir)
    fig, axes = plt.subplots(1, 3 if imitation else 2, figsize=(18 if imitation else 12, 4.5))
    ax = axes[0]
    by_opp: dict[str, list[tuple[int, float]]] = {}
    for r in episodes:
        opp = r["opponent"] if not r["opponent"].startswith("ppo:") else "self-play"
        by_opp.setdefault(opp, []).append((int(r["timesteps"]), float(r["won"])))
    for opp, pts in sorted(by_opp.items()):
        t = np.array([p[0] for p in pts])
        w = np.array([p[1] for p in pts])
        k = max(1, min(200, len(w) // 5))
        smooth = np.convolve(w, np.ones(k) / k, mode="valid")
        ax.plot(t[k - 1:], smooth, label=f"vs {opp}")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set(title="training matches: win rate (rolling)", xlabel="timesteps", ylabel="match win rate",
           ylim=(0, 1))
    if by_opp:
        ax.legend(loc="lower right")
    ax = axes[1]
    by_eval: dict[str, list[tuple[int, float, float, float]]] = {}
    for r in evals:
        by_eval.setdefault(r["opponent"], []).append(
            (int(r["timesteps"]), float(r["win_rate"]), float(r["ci_low"]), float(r["ci_high"])))
    for opp, pts in sorted(by_eval.items()):
        t = [p[0] for p in pts]
        ax.plot(t, [p[1] for p in pts], marker="o", label=f"vs {opp}")
        ax.fill_between(t, [p[2] for p in pts], [p[3] for p in pts], alpha=0.15)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set(title="evaluation: duplicate matches (95% CI)", xlabel="timesteps", ylabel="match win rate",
           ylim=(0, 1))
    if by_eval:
        ax.legend(loc="lower right")
    if imitation:
        ax = axes[2]
        epochs = [h["epoch"] for h in imitation]
        ax.plot(epochs, [h["accuracy"] for h in imitation], marker="o", label="agreement with teacher")
        ax.plot(epochs, [h["loss"] for h in imitation], marker="s", label="loss")
        ax.set(title="imitation warm start", xlabel="epoch", ylim=(0, max(1.0, imitation[0]["loss"])))
        ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


if __name__ == "__main__":
    print(plot_learning_curves(sys.argv[1]))
