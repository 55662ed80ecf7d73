"""The few lines a training run prints when it ends: how far it got, how fast, how it
plays now, and where its learning curve is (docs/training.md's first run printed):

    run runs/first: 303,104 steps in 3 min 2 s of training, 1,669 steps/s (evaluations included)
    training matches: 2,696 finished; the last 100 won 7% (simple 7% of 100); their hands: 29% won, ...
    evaluation at step 300,032 (40 duplicate matches each): random 100.0% (100.0%-100.0%), simple 15.0% ...
    curve: runs/first/learning_curve.png (python -m train.plots runs/first redraws it)

Everything is read back from the run folder's ``episodes.csv`` and ``eval.csv``, so the
lines say what the logs hold.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from train.plots import hand_outcomes, opponent_label

#: Training matches the summary's win rates are taken over (the newest ones), as the
#: ``charts/`` scalars (``train.callbacks.HollywoodLogger``'s window).
RECENT_MATCHES = 100


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def training_line(episodes: list[dict[str, str]]) -> str:
    """The newest ``RECENT_MATCHES`` training matches: win rate overall and per opponent,
    with the hand-level figures that move long before the match win rate does."""
    if not episodes:
        return ("training matches: none finished yet (a match is many hands; early on, against "
                "an opponent that rarely knocks, one match can outlast a short run)")
    recent = episodes[-RECENT_MATCHES:]
    played: Counter[str] = Counter()
    won: Counter[str] = Counter()
    for row in recent:
        played[opponent_label(row["opponent"])] += 1
        won[opponent_label(row["opponent"])] += int(row["won"])
    per_opponent = ", ".join(f"{opp} {won[opp] / n:.0%} of {n}" for opp, n in sorted(played.items()))
    hands = sum(float(row["hands"]) for row in recent) or 1.0
    hands_won, _, points = (sum(column) for column in zip(*(hand_outcomes(row) for row in recent), strict=True))
    return (f"training matches: {len(episodes):,} finished; the last {len(recent)} won "
            f"{sum(won.values()) / len(recent):.0%} ({per_opponent}); their hands: "
            f"{hands_won / hands:.0%} won, {points / hands:+.1f} points per hand")


def evaluation_line(evals: list[dict[str, str]]) -> str:
    """The newest evaluation: each opponent's win rate with its 95% interval."""
    if not evals:
        return "evaluation: none (--eval-every 0)"
    last = evals[-1]["timesteps"]
    rows = [r for r in evals if r["timesteps"] == last]
    figures = ", ".join(f"{r['opponent']} {float(r['win_rate']):.1%} "
                        f"({float(r['ci_low']):.1%}-{float(r['ci_high']):.1%})" for r in rows)
    return f"evaluation at step {int(float(last)):,} ({rows[0]['matches']} duplicate matches each): {figures}"


def run_summary(run_dir: str | Path, steps: int, trained_steps: int, seconds: float,
                curve: str | Path | None = None) -> str:
    """The end-of-run lines: ``steps`` the model is at, ``trained_steps`` of them trained in
    ``seconds`` by this call (a resumed run trains from its checkpoint's step), the training
    and evaluation win rates from the run folder's logs, and where the learning curve is."""
    run_dir = Path(run_dir)
    if steps == 0:  # --total-timesteps 0: the imitation warm start alone, no PPO to report on
        imitated = " (the imitation warm start alone)" if (run_dir / "imitation.json").exists() else ""
        return f"run {run_dir}: no PPO steps{imitated}"
    rate = trained_steps / seconds if seconds > 0 else 0.0
    resumed = f" ({trained_steps:,} of them in this run, resumed at {steps - trained_steps:,})" \
        if trained_steps != steps else ""
    lines = [f"run {run_dir}: {steps:,} steps{resumed} in {_duration(seconds)} of training, "
             f"{rate:,.0f} steps/s (evaluations included)",
             training_line(_rows(run_dir / "episodes.csv")),
             evaluation_line(_rows(run_dir / "eval.csv"))]
    if curve is not None:
        lines.append(f"curve: {curve} (python -m train.plots {run_dir} redraws it)")
    return "\n".join(lines)
