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

``--forward eager traced --rounds 3`` times the policy's eager forward beside its traced
graph (:mod:`agents.traced_forward`; the same moves, so the same decisions), in turns.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arena.matches import as_spec, derive_seed, reset_agent
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import get_rules

#: The policy's forward: its traced graph (the default) or the eager one it was traced from.
FORWARDS = ("traced", "eager")


class _Enough(Exception):
    """Raised by the move hook once enough decisions were searched: it ends the match."""


def measure(spec: str = "search", rules: str = "hollywood", decisions: int = 200, seed: int = 990000,
            warmup: int = 5, forward: str = "traced") -> dict[str, Any]:
    """Summary of ``decisions`` searched decisions of ``spec`` (seat 0) against the Expert,
    after ``warmup`` searched decisions not counted. ``forward="eager"`` runs the policy's
    eager forward instead of its traced graph (:mod:`agents.traced_forward`; the same moves)."""
    if decisions < 1 or warmup < 0:
        raise ValueError(f"decisions must be >= 1 and warmup >= 0, got {decisions} and {warmup}")
    if forward not in FORWARDS:
        raise ValueError(f"forward must be one of {FORWARDS}, got {forward!r}")
    from agents.traced_forward import TRACED

    wanted = warmup + decisions
    rules_ = get_rules(rules)
    graphs_were = TRACED.enabled
    TRACED.enabled = forward == "traced"
    try:
        agent, matches = play_searched(spec, rules_, wanted, seed)
    finally:
        TRACED.enabled = graphs_were
    cpu = np.asarray(agent.decision_cpu_ms[warmup:wanted])
    wall = np.asarray(agent.decision_ms[warmup:wanted])
    worlds = np.asarray(agent.worlds[warmup:wanted])
    return {"spec": spec, "rules": rules_.name, "seed": seed, "matches": matches, "decisions": int(cpu.size),
            "cpu_ms_mean": float(cpu.mean()), "cpu_ms_median": float(np.median(cpu)),
            "cpu_ms_p95": float(np.percentile(cpu, 95)), "wall_ms_mean": float(wall.mean()),
            "worlds_mean": float(worlds.mean()), "forward": forward}


def play_searched(spec: str, rules_: Any, wanted: int, seed: int,
          prepare: Callable[[Any], None] | None = None) -> tuple[Any, int]:
    """The search agent after ``wanted`` searched decisions (seat 0, the Expert elsewhere),
    and the matches it took. ``prepare`` is called with the agent before the first match
    (a probe's way in: :mod:`eval.sitter_value`)."""
    agent = as_spec(spec).build(rules_)
    if not hasattr(agent, "decision_cpu_ms"):
        raise ValueError(f"{spec!r} is not a search agent (it keeps no decision_cpu_ms)")
    if prepare is not None:
        prepare(agent)
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
    return agent, matches


def side_by_side(spec: str, rules: str, decisions: int, seed: int, warmup: int, forwards: Sequence[str],
                 rounds: int = 1) -> dict[str, Any]:
    """:func:`measure` of each of ``forwards`` in turn, ``rounds`` times over (the same
    decisions each time: the same moves), in one process: each forward's mean over its
    rounds, and each one's ratio to the first's (a noisy machine moves all of them alike)."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    runs: dict[str, list[dict[str, Any]]] = {f: [] for f in forwards}
    for _ in range(rounds):
        for forward in forwards:
            runs[forward].append(measure(spec, rules, decisions, seed, warmup, forward))
    means = {f: float(np.mean([r["cpu_ms_mean"] for r in rs])) for f, rs in runs.items()}
    first = means[forwards[0]]
    return {"spec": spec, "rules": runs[forwards[0]][0]["rules"], "decisions": decisions, "rounds": rounds,
            "cpu_ms_mean": means, "cpu_ratio_to_first": {f: m / first for f, m in means.items()},
            "rounds_cpu_ms_mean": {f: [r["cpu_ms_mean"] for r in rs] for f, rs in runs.items()}}


def add_play_arguments(p: argparse.ArgumentParser, rules: str, decisions: int, seed: int) -> None:
    """The arguments of :func:`play_searched`'s matches (``--agent``, ``--rules``,
    ``--decisions``, ``--seed``), with these defaults; :mod:`eval.sitter_value` shares them."""
    p.add_argument("--agent", default="search", help="the search agent's spec (default search)")
    p.add_argument("--rules", default=rules, help=f"the rules profile (default {rules})")
    p.add_argument("--decisions", type=int, default=decisions, help=f"searched decisions (default {decisions})")
    p.add_argument("--seed", type=int, default=seed, help=f"the first match's seed (default {seed})")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m eval.search_time", description=__doc__.split("\n\n")[0])
    add_play_arguments(p, "hollywood", 200, 990000)
    p.add_argument("--warmup", type=int, default=5, help="searched decisions not counted first (default 5)")
    p.add_argument("--forward", choices=FORWARDS, nargs="+", default=["traced"],
                   help="the policy's traced graph (default) or its eager forward (same moves); both: "
                        "timed side by side, with their ratio")
    p.add_argument("--rounds", type=int, default=1, help="with several --forward: rounds of each in turn")
    args = p.parse_args(argv)
    try:
        if len(args.forward) == 1:
            out = measure(args.agent, args.rules, args.decisions, args.seed, args.warmup, args.forward[0])
        else:
            out = side_by_side(args.agent, args.rules, args.decisions, args.seed, args.warmup, args.forward,
                               args.rounds)
    except ValueError as exc:
        p.error(str(exc))
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
