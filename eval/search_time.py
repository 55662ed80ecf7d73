"""CPU time per searched decision of a search agent, in any format (a script, not a test).

Why: the issue's budget is "≤ 100 ms of CPU per searched decision on one core", and a
tournament does not report it (its agents live in worker processes). Here the search sits
at seat 0 of matches against the Expert at every other seat, dealt from ``seed``,
``seed + 1``, ..., until it has made ``--decisions`` searched decisions (those with more
than one candidate); the process CPU time and wall time of each come from the agent's own
counters (``SearchAgent.decision_cpu_ms``, ``decision_ms``), after ``--warmup`` searched
decisions that are not counted (the first ones load the policy and compile the engine).
Run it on a quiet machine: a shared one inflates CPU time too (caches, frequency).

    python -m eval.search_time --rules hollywood_three_hand --decisions 200 --seed 990000
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.matches import as_spec, derive_seed, reset_agent
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import get_rules


class _Enough(Exception):
    """Raised by the move hook once enough decisions were searched: it ends the match."""


def measure(spec: str = "search", rules: str = "hollywood", decisions: int = 200, seed: int = 990000,
            warmup: int = 5) -> dict[str, Any]:
    """Summary of ``decisions`` searched decisions of ``spec`` (seat 0) against the Expert,
    after ``warmup`` searched decisions not counted."""
    if decisions < 1 or warmup < 0:
        raise ValueError(f"decisions must be >= 1 and warmup >= 0, got {decisions} and {warmup}")
    wanted = warmup + decisions
    rules_ = get_rules(rules)
    agent = as_spec(spec).build(rules_)
    if not hasattr(agent, "decision_cpu_ms"):
        raise ValueError(f"{spec!r} is not a search agent (it keeps no decision_cpu_ms)")
    experts = [as_spec("expert").build(rules_) for _ in range(rules_.num_players - 1)]

    def enough(*_: Any) -> None:
        if len(agent.decision_cpu_ms) >= wanted:
            raise _Enough

    matches = 0
    while len(agent.decision_cpu_ms) < wanted:
        match_seed = seed + matches
        for i, player in enumerate([agent, *experts]):
            reset_agent(player, derive_seed(match_seed, i + 1))
        try:
            run_match(Match(rules_, seed=match_seed), [agent, *experts], on_move=enough)
        except _Enough:
            pass
        matches += 1
    cpu = np.asarray(agent.decision_cpu_ms[warmup:wanted])
    wall = np.asarray(agent.decision_ms[warmup:wanted])
    worlds = np.asarray(agent.worlds[warmup:wanted])
    return {"spec": spec, "rules": rules_.name, "seed": seed, "matches": matches, "decisions": int(cpu.size),
            "cpu_ms_mean": float(cpu.mean()), "cpu_ms_median": float(np.median(cpu)),
            "cpu_ms_p95": float(np.percentile(cpu, 95)), "wall_ms_mean": float(wall.mean()),
            "worlds_mean": float(worlds.mean())}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m eval.search_time", description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", default="search", help="the search agent's spec (default search)")
    p.add_argument("--rules", default="hollywood")
    p.add_argument("--decisions", type=int, default=200, help="searched decisions to time (default 200)")
    p.add_argument("--seed", type=int, default=990000, help="the first match's seed")
    p.add_argument("--warmup", type=int, default=5, help="searched decisions not counted first (default 5)")
    args = p.parse_args(argv)
    try:
        out = measure(args.agent, args.rules, args.decisions, args.seed, args.warmup)
    except ValueError as exc:
        p.error(str(exc))
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
