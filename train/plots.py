"""Learning curves of a run folder: training win rate and evaluations over time.

    python -m train.plots runs/<run>
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def hand_outcomes(row: Mapping[str, object]) -> tuple[float, float, float]:
    """One ``episodes.csv`` row's hand-level counts (numbers or their CSV text): hands the
    learner won, hands it ended by knocking (won by knock, gin or big gin, or undercut),
    and its net hand points. The one definition behind ``charts/hand_win_rate``,
    ``charts/knock_rate``, ``charts/points_per_hand`` and the plot's hand panel."""
    def num(key: str) -> float:
        return float(row.get(key) or 0)  # type: ignore[arg-type]

    by_knock = num("my_knock") + num("my_gin") + num("my_big_gin")
    return by_knock + num("my_undercut"), by_knock + num("opp_undercut"), num("points") - num("opp_points")


def opponent_label(spec: str) -> str:
    """The curve an opponent's training matches go to: the run's own self-play snapshots
    (``ppo:<run>/snapshots/...``, or ``snapshot:...`` in a league) share one, ``self-play``;
    any other spec keeps its name (a frozen ``ppo:PATH`` opponent, as in the exploitability
    probe, is not self-play)."""
    kind, _, path = spec.partition(":")
    if kind in ("ppo", "snapshot") and Path(path).parent.name == "snapshots":
        return "self-play"
    return spec


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
    """Write ``learning_curve.png``: rolling training win rate per opponent, then (when the
    run has them) the periodic evaluations and the imitation warm start.

    A panel is drawn only for data the run has: a run with ``--eval-every 0`` (like
    ``make demo``) gets no evaluation panel, a run without imitation no imitation panel.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    out = Path(out) if out else run_dir / "learning_curve.png"
    episodes = _read_csv(run_dir / "episodes.csv")
    evals = _read_csv(run_dir / "eval.csv")
    imitation = _read_imitation(run_dir)
    has_points = bool(episodes) and "points" in episodes[0]
    panels = (["train"] + (["hands"] if has_points else []) + (["eval"] if evals else [])
              + (["imitation"] if imitation else []))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5.4), squeeze=False)
    ax_of = dict(zip(panels, axes[0], strict=True))
    ax = ax_of["train"]
    by_opp: dict[str, list[tuple[int, float]]] = {}
    for r in episodes:
        opp = opponent_label(r["opponent"])
        by_opp.setdefault(opp, []).append((int(r["timesteps"]), float(r["won"])))
    for opp, pts in sorted(by_opp.items()):
        t, rate, low, high, per_bin = binned_win_rate([p[0] for p in pts], [p[1] for p in pts])
        line, = ax.plot(t, rate, marker="o", ms=3, label=f"vs {opp}: win rate of ~{per_bin} matches per point, 95% CI")
        ax.fill_between(t, low, high, alpha=0.15, color=line.get_color())
    ax.axhline(0.5, color="grey", lw=0.8, ls="--", label="50% (even)")
    ax.set(title="Training matches: win rate", xlabel="learner steps (decisions)",
           ylabel="match win rate (share of matches won)", ylim=(0, 1))
    if not by_opp:
        ax.text(0.5, 0.5, "no finished training match yet", ha="center", va="center", transform=ax.transAxes)
    _legend_below(ax)
    if has_points:
        _plot_hand_curves(ax_of["hands"], episodes)
    if evals:
        ax = ax_of["eval"]
        by_eval: dict[str, list[tuple[int, float, float, float]]] = {}
        for r in evals:
            by_eval.setdefault(r["opponent"], []).append(
                (int(r["timesteps"]), float(r["win_rate"]), float(r["ci_low"]), float(r["ci_high"])))
        matches = evals[0].get("matches", "?")
        for opp, pts in sorted(by_eval.items()):
            t = [p[0] for p in pts]
            line, = ax.plot(t, [p[1] for p in pts], marker="o", label=f"vs {opp}: win rate, 95% CI band")
            ax.fill_between(t, [p[2] for p in pts], [p[3] for p in pts], alpha=0.15, color=line.get_color())
        ax.axhline(0.5, color="grey", lw=0.8, ls="--", label="50% (even)")
        ax.set(title=f"Evaluation: {matches} duplicate matches per point", xlabel="learner steps (decisions)",
               ylabel="match win rate (share of matches won)", ylim=(0, 1))
        _legend_below(ax)
    if imitation:
        ax = ax_of["imitation"]
        epochs = [h["epoch"] for h in imitation]
        acc_line, = ax.plot(epochs, [h["accuracy"] for h in imitation], marker="o", color="tab:blue",
                            label="agreement: share of the teacher's moves predicted (left axis)")
        ax.set(title="Imitation warm start (cloning the Expert)", xlabel="epoch (passes over the recorded moves)",
               ylabel="agreement with the teacher (share of moves)", ylim=(0, 1))
        loss_ax = ax.twinx()
        loss_line, = loss_ax.plot(epochs, [h["loss"] for h in imitation], marker="s", color="tab:orange",
                                  label="loss per move: cross-entropy (nats) + value error (right axis)")
        loss_ax.set_ylabel("training loss per move (cross-entropy in nats + 0.5 x value MSE)")
        loss_ax.set_ylim(0, max(h["loss"] for h in imitation) * 1.1)
        _legend_below(ax, handles=[acc_line, loss_line])
    fig.suptitle(f"Learning curves of run '{run_dir.name}'", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return out


def _plot_hand_curves(ax, episodes: list[dict[str, str]]) -> None:
    """Hand-level curves over all training matches (they move long before the match win
    rate): share of hands won and share of hands the learner ended by knocking (left axis,
    0 to 1), and net hand points per hand on an axis of their own (right): a fresh learner
    loses 50 to 100 points a hand, which no shared axis could show beside the shares."""
    import numpy as np

    t = np.array([int(r["timesteps"]) for r in episodes])
    hands = np.array([max(1, int(r["hands"])) for r in episodes], dtype=float)

    won, knocked, net = np.array([hand_outcomes(r) for r in episodes], dtype=float).T
    # A wide window (a quarter of the run, at most 500 matches): a narrow one makes the
    # match-to-match noise of a steady run look like swings.
    k = max(1, min(500, len(t) // 4))

    def rolling(x: np.ndarray) -> np.ndarray:  # pooled over the last k matches
        return np.convolve(x, np.ones(k), mode="valid") / np.convolve(hands, np.ones(k), mode="valid")

    ax.plot(t[k - 1:], rolling(won), label="hands won (share, left axis)")
    ax.plot(t[k - 1:], rolling(knocked), label="hands ended by the learner's knock (share, left axis)")
    points = ax.twinx()
    points.plot(t[k - 1:], rolling(net), color="tab:green", label="net hand points per hand (right axis)")
    points.axhline(0.0, color="tab:green", lw=0.8, ls=":")
    points.set_ylabel("net hand points per hand")
    ax.set(title=f"Training hands (pooled over the last {k} matches)", xlabel="learner steps (decisions)",
           ylabel="share of hands", ylim=(0.0, 1.0))
    lines = ax.get_lines() + points.get_lines()[:1]
    _legend_below(ax, handles=lines, labels=[line.get_label() for line in lines])


def _legend_below(ax, **kwargs) -> None:  # noqa: ANN001, ANN003
    """The legend under the panel, so that it never covers a curve."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, fontsize=8, frameon=False, **kwargs)


def binned_win_rate(steps: Sequence[int], won: Sequence[float], max_points: int = 12, min_per_point: int = 20):
    """Training matches in consecutive bins, each bin one point: its mean step, its win rate
    and the rate's 95% Wilson interval, so the plot shows how much of a swing is noise.

    At most ``max_points`` bins of at least ``min_per_point`` matches (one bin when there are
    fewer). Returns ``(steps, rate, low, high, matches_per_bin)`` as arrays (the last an int).
    """
    import numpy as np

    from arena.stats import wilson_interval

    if len(steps) != len(won):
        raise ValueError(f"steps and won differ in length: {len(steps)} != {len(won)}")
    if not len(won):
        raise ValueError("no matches to bin")
    bins = max(1, min(max_points, len(won) // min_per_point))
    t_bins = np.array_split(np.asarray(steps, dtype=float), bins)
    w_bins = np.array_split(np.asarray(won, dtype=float), bins)
    intervals = [wilson_interval(float(w.sum()), len(w)) for w in w_bins]
    return (np.array([t.mean() for t in t_bins]), np.array([w.mean() for w in w_bins]),
            np.array([i[0] for i in intervals]), np.array([i[1] for i in intervals]), len(won) // bins)


if __name__ == "__main__":
    print(plot_learning_curves(sys.argv[1]))
