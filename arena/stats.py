"""Statistics of duplicate matches: the pair summary and its confidence intervals.

A duplicate pair (one seed, both seatings) is the statistical unit: its games are
correlated, so the interval of the mean score counts pairs, not games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

OUTCOME_KINDS = ("knock", "gin", "undercut")
#: The fewest duplicate seeds whose interval a report prints. Below it the normal interval
#: over seeds means nothing: 2 seeds that each split their pair give 50.0-50.0, an interval
#: of zero width that reads as certainty (summaries still hold the numbers, flagged by
#: ``ci_too_few_seeds``).
MIN_SEEDS_FOR_CI = 10


def match_score(winner_side: str, side: str = "a") -> float:
    """A match's score for ``side`` ("a" or "b") from a row's ``winner_side``: 1 won, 0.5
    drawn (``""``), 0 lost; every win rate and its interval counts matches this way."""
    return 0.5 if winner_side == "" else float(winner_side == side)


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (draws counted as half a success)."""
    if n == 0:
        return (0.0, 1.0)
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """Normal interval of the mean of independent units (e.g. points per hand of each
    duplicate deal); (nan, nan) for fewer than two."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return (float("nan"), float("nan"))
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    m = float(x.mean())
    return (m - half, m + half)


def duplicate_interval(scores_by_seed: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """Normal interval of the mean score, each duplicate pair (one seed, both seatings) one
    unit, within 0..1 (0..1 itself for fewer than two pairs)."""
    if len(scores_by_seed) < 2:
        return (0.0, 1.0)
    lo, hi = mean_interval(scores_by_seed, z)
    return (max(0.0, lo), min(1.0, hi))


def interval_text(summary: dict[str, Any], kind: str = "ci") -> str:
    """A summary's 95% interval (``kind`` ``ci`` or ``wilson``) in percent, ``low–high``, or
    ``none (k seeds)`` when too few duplicate seeds were played for it to mean anything
    (``ci_too_few_seeds``); every report prints intervals through this."""
    if summary["ci_too_few_seeds"]:
        return f"none ({summary['seeds']} seeds)"
    return f"{100 * summary[kind + '_low']:.1f}–{100 * summary[kind + '_high']:.1f}"


def summarize_pair(rows: Sequence[dict[str, Any]], label_a: str, label_b: str) -> dict[str, Any]:
    """Win rate (duplicate-pair and Wilson 95% CIs), columns, hand outcomes for one pairing."""
    n = len(rows)
    score = [match_score(r["winner_side"]) for r in rows]
    by_seed: dict[int, list[float]] = {}
    for r, s in zip(rows, score, strict=True):
        by_seed.setdefault(r["seed"], []).append(s)
    seed_scores = [float(np.mean(v)) for v in by_seed.values()]
    wins_a = sum(1 for r in rows if r["winner_side"] == "a")
    wins_b = sum(1 for r in rows if r["winner_side"] == "b")
    draws = n - wins_a - wins_b
    rate = float(np.mean(score)) if n else float("nan")
    lo, hi = duplicate_interval(seed_scores)
    wlo, whi = wilson_interval(wins_a + 0.5 * draws, n)
    hands = sum(r["hands"] for r in rows)
    cols = sorted({k[2:] for r in rows[:1] for k in r if k.startswith("a_col") and k[5:].isdigit()})

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in rows])) if rows else float("nan")

    out: dict[str, Any] = {
        "agent_a": label_a, "agent_b": label_b, "matches": n, "seeds": len(by_seed),
        "a_wins": wins_a, "b_wins": wins_b, "draws": draws,
        "a_win_rate": rate, "ci_low": lo, "ci_high": hi, "wilson_low": wlo, "wilson_high": whi,
        "ci_too_few_seeds": len(by_seed) < MIN_SEEDS_FOR_CI,
        "a_columns_won": mean("a_columns_won"), "b_columns_won": mean("b_columns_won"),
        "a_column_total": float(np.mean([[r["a_" + c] for c in cols] for r in rows])) if rows else 0.0,
        "b_column_total": float(np.mean([[r["b_" + c] for c in cols] for r in rows])) if rows else 0.0,
        "hands_per_match": mean("hands"),
        "dead_rate": sum(r["dead_hands"] for r in rows) / hands if hands else 0.0,
        "truncated": sum(1 for r in rows if r["truncated"]),
        "seconds_per_match": mean("seconds"),
    }
    if rows and "a_luck" in rows[0]:  # played with the variance-reduced estimate (arena.variance)
        from .variance import luck_summary

        luck = luck_summary([{**r, "score": x} for r, x in zip(rows, score, strict=True)], "score")
        if luck is not None:
            out.update({"reduced_win_rate": luck["reduced"], "reduced_low": luck["reduced_ci"][0],
                        "reduced_high": luck["reduced_ci"][1], "luck_beta": luck["beta"],
                        "ci_width_ratio": luck["width_ratio"], "luck_mean": luck["correction_mean"],
                        "luck_ci": list(luck["correction_ci"]), "luck_seconds_per_match": luck["luck_seconds"]})
    for side in "ab":
        for kind in OUTCOME_KINDS:
            key = f"{side}_{kind}_wins"
            out[f"{side}_{kind}_rate"] = sum(r[key] for r in rows) / hands if hands else 0.0
        out[f"{side}_points_per_hand"] = sum(r[f"{side}_points"] for r in rows) / hands if hands else 0.0
    return out
