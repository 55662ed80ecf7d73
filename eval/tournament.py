"""The command line of :mod:`arena.tournament`: duplicate-deal tournaments between agents.

    python -m eval.tournament --agents expert simple random --matches 2000 --workers 2 \\
        --out runs/tournament_x --rules hollywood

The runner, its result and its files are :mod:`arena.tournament` (re-exported here for the
callers that import them from this module).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.matches import AgentSpec, as_spec, derive_seed, play_match, reset_agent, seatings
from arena.stats import OUTCOME_KINDS, duplicate_interval, summarize_pair, wilson_interval
from arena.tournament import MatchLog, TournamentResult, _typed_row, plot_summary, run_tournament
from hgin_env.rules import get_rules

__all__ = ["OUTCOME_KINDS", "AgentSpec", "MatchLog", "TournamentResult", "as_spec", "derive_seed",
           "duplicate_interval", "main", "play_match", "plot_summary", "reset_agent", "run_tournament", "seatings",
           "summarize_pair", "wilson_interval", "_typed_row"]


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m eval.tournament",
        description="Duplicate-deal Hollywood Gin tournament: every pair of agents plays the same seeds "
                    "twice with seats swapped; writes matches.csv, summary.md/json and summary.png.")
    p.add_argument("--agents", nargs="+", required=True,
                   help="agent specs: random, simple, expert, ppo:PATH (once registered); "
                        "'label=name' names a variant (give its kwargs with --agent-kwargs)")
    p.add_argument("--matches", type=int, default=200,
                   help="matches per pair (two per seed, seats swapped; odd counts round up)")
    p.add_argument("--seed", type=int, default=0, help="first match seed (seeds are seed, seed+1, ...)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="worker processes (1 = run in this process)")
    p.add_argument("--out", default="runs/tournament", help="output folder for CSV, markdown, JSON, plot")
    p.add_argument("--rules", default="hollywood", help="rules profile name (see hgin_env.rules.PROFILES)")
    p.add_argument("--agent-kwargs", default="{}",
                   help='JSON object {label: {kwarg: value}} passed to make_agent, e.g. '
                        '\'{"expert2": {"lookahead": 2.0}}\'')
    p.add_argument("--vs-first", action="store_true",
                   help="play only the first agent against each other one (not a full round-robin)")
    p.add_argument("--chunk", type=int, default=4, help="seeds per worker task")
    p.add_argument("--reduce-variance", action="store_true",
                   help="also the luck-adjusted win rate: the shipped critic values every deal and "
                        "stock card, and the luck is taken out of each match without bias (arena.variance; "
                        "docs/evaluation.md); adds a few tenths of a second per match")
    p.add_argument("--no-plot", action="store_true", help="skip the matplotlib plot")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted tournament in --out (a rerun into the same folder with "
                        "the same agents and rules does so too): matches already in matches.csv are kept")
    return p.parse_args(argv)


def played_line(result: TournamentResult, out: str | Path) -> str:
    """What this run played: nothing (a finished tournament run again), the rest of an earlier
    run, or everything."""
    earlier = len(result.rows) - result.played
    if result.played == 0:
        return f"nothing left to play: all {earlier} matches were already in {Path(out) / 'matches.csv'}"
    if earlier:
        return (f"{result.played} matches in {result.seconds:.1f} s, after {earlier} from an earlier run "
                f"({len(result.rows)} in all)")
    return f"{result.played} matches in {result.seconds:.1f} s"


def main(argv: Sequence[str] | None = None) -> TournamentResult | int:
    """Command-line entry point (see ``--help``). Returns the result, or an exit code: 2 after
    a one-line error on stderr (a bad agent spec or checkpoint, bad ``--agent-kwargs``), 130
    when interrupted (the matches played so far stay in ``matches.csv``; rerun to continue)."""
    args = _parse_args(argv)
    try:
        for flag, value in (("--matches", args.matches), ("--workers", args.workers), ("--chunk", args.chunk)):
            if value < 1:
                raise ValueError(f"{flag} {value}: must be >= 1")
        if len(args.agents) < 2:
            raise ValueError(f"--agents {' '.join(args.agents)}: a tournament needs at least two agents")
        extra = json.loads(args.agent_kwargs)
        if not isinstance(extra, dict):
            raise ValueError("--agent-kwargs must be a JSON object {label: {kwarg: value}}")
        specs = []
        for text in args.agents:
            spec = as_spec(text)
            kwargs = extra.get(spec.display, {})
            specs.append(AgentSpec(spec.name, tuple(sorted(kwargs.items())), spec.display))
        labels = [spec.display for spec in specs]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise ValueError(f"--agents names {', '.join(twice)} twice; name variants as 'label=name' "
                             f"(e.g. simple simple2=simple)")
        rules = get_rules(args.rules)
        for spec in specs:  # refuse bad specs and checkpoints here, not in the workers
            spec.build(rules)
        if args.resume and not (Path(args.out) / "matches.csv").is_file():
            raise ValueError(f"--resume: {args.out} holds no matches.csv to continue")
    except (ValueError, TypeError, KeyError) as exc:  # CheckpointError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pairs = [(0, j) for j in range(1, len(specs))] if args.vs_first else None
    try:
        result = run_tournament(specs, matches=args.matches, seed=args.seed, workers=args.workers,
                                rules=rules, pairs=pairs, chunk=args.chunk, progress=not args.quiet,
                                out=args.out, reduce_variance=args.reduce_variance)
    except KeyboardInterrupt:
        print(f"interrupted: the matches played so far are in {Path(args.out) / 'matches.csv'}; "
              "run the same command again (or add --resume) to play the rest", file=sys.stderr)
        return 130
    paths = result.save(args.out, plot=not args.no_plot)
    print(result.markdown())
    written = ", ".join(str(p) for p in paths.values())
    print(f"{played_line(result, args.out)}; wrote {written}")
    return result


if __name__ == "__main__":
    code = main()
    sys.exit(code if isinstance(code, int) else 0)
