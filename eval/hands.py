"""Duplicate single hands between two agents: a fast, low-variance strength signal.

Why: a Hollywood match is ~10 hands, so a few dozen matches say little about a slow agent
(a search agent needs seconds per hand). Single hands on duplicate deals (each deal played
twice, seats swapped, the same shuffle) measure the difference that matters, points per
hand, with a confidence interval from the per-deal paired scores. The hand is the first
hand of a fresh match (empty scoreboard), under the given rules.

Command line::

    python -m eval.hands --agents search expert --deals 100 --seed 900000

``--reduce-variance`` adds the luck-adjusted points per hand (:mod:`arena.variance`: the
shipped critic's value of the deal and of every stock card taken out, without bias) with
its interval, the width ratio of the two intervals and the seconds the luck cost per hand.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.matches import as_spec, derive_seed, reset_agent
from arena.stats import wilson_interval
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import Rules, get_rules


def play_hand(agent_a: Any, agent_b: Any, seed: int, a_seat: int, rules: Rules, luck: Any = None) -> dict[str, Any]:
    """One hand (deal ``seed``), A in seat ``a_seat``; A's signed points and outcome (and, with
    ``luck``, an :class:`arena.variance.LuckRecorder`, the hand's luck for A)."""
    players = [agent_a, agent_b] if a_seat == 0 else [agent_b, agent_a]
    reset_agent(agent_a, derive_seed(seed, 1))
    reset_agent(agent_b, derive_seed(seed, 2))
    match = Match(rules, seed=seed, single_hand=True, first_dealer=0)
    if luck is not None:
        luck.start(match, (a_seat,), seed)
    run_match(match, players, on_move=None if luck is None else luck.on_move)
    record = match.hand_history[-1].record
    won = record.winner == a_seat
    lost = record.winner == 1 - a_seat
    row = {"seed": seed, "a_seat": a_seat, "a_points": record.points * (won - lost),
           "a_won": won, "a_lost": lost, "kind": record.kind,
           "a_knocked": record.knocker == a_seat}
    if luck is not None:
        row.update(luck.finish())
    return row


def duplicate_hands(agent_a: Any, agent_b: Any, deals: int, seed: int = 0,
                    rules: Rules | str | dict | None = "hollywood", reduce_variance: bool = False) -> dict[str, Any]:
    """Play ``deals`` deals twice (seats swapped); summary with 95% intervals. With
    ``reduce_variance`` also the luck-adjusted points per hand (module docstring)."""
    rules = get_rules(rules)
    rows = []
    luck = None
    if reduce_variance:
        from arena.variance import recorder_for

        luck = recorder_for(rules)
    start = time.perf_counter()
    for s in range(seed, seed + deals):
        rows += [play_hand(agent_a, agent_b, s, seat, rules, luck) for seat in (0, 1)]
    per_deal = np.array([rows[i]["a_points"] + rows[i + 1]["a_points"] for i in range(0, len(rows), 2)]) / 2
    mean = float(per_deal.mean())
    half = 1.96 * float(per_deal.std(ddof=1)) / math.sqrt(len(per_deal)) if len(per_deal) > 1 else math.inf
    won = sum(r["a_won"] for r in rows)
    lost = sum(r["a_lost"] for r in rows)
    decided = won + lost
    lo, hi = wilson_interval(won, decided) if decided else (0.0, 1.0)
    out = {"hands": len(rows), "points_per_hand": mean, "points_ci": [mean - half, mean + half],
           "hand_win_rate": won / decided if decided else math.nan, "hand_win_ci": [lo, hi],
           "dead_hands": len(rows) - decided, "seconds": time.perf_counter() - start}
    if luck is not None:
        from arena.variance import luck_summary

        reduced = luck_summary(rows, "a_points")
        assert reduced is not None
        out.update({"reduced_points_per_hand": reduced["reduced"], "reduced_points_ci": list(reduced["reduced_ci"]),
                    "points_ci_width_ratio": reduced["width_ratio"], "luck_beta": reduced["beta"],
                    "luck_mean": reduced["correction_mean"], "luck_ci": list(reduced["correction_ci"]),
                    "luck_seconds_per_hand": reduced["luck_seconds"]})
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m eval.hands", description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", nargs=2, required=True, help="two agent specs (A, B)")
    p.add_argument("--agent-kwargs", default="{}", help='JSON {label: {kwarg: value}}')
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default="hollywood")
    p.add_argument("--reduce-variance", action="store_true",
                   help="also the luck-adjusted points per hand (arena.variance, docs/evaluation.md)")
    args = p.parse_args(argv)
    extra = json.loads(args.agent_kwargs)
    rules = get_rules(args.rules)
    built = []
    for text in args.agents:
        spec = as_spec(text)
        kwargs = {**dict(spec.kwargs), **extra.get(spec.display, {})}
        built.append(type(spec)(spec.name, tuple(sorted(kwargs.items())), spec.display).build(rules))
    out = duplicate_hands(built[0], built[1], args.deals, args.seed, rules, args.reduce_variance)
    for agent, label in zip(built, args.agents, strict=True):
        for stat in ("mean_decision_ms", "mean_decision_cpu_ms"):
            if hasattr(agent, stat):
                out[f"{label}_{stat}"] = getattr(agent, stat)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
