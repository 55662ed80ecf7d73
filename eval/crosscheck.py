"""The cross-engine check at scale: hands in lockstep in hgin_env and OpenSpiel's
``gin_rummy`` (:mod:`arena.crosscheck`), counts of every difference by category.

Command line::

    python -m eval.crosscheck --hands 20000
    python -m eval.crosscheck --hands 2000 --param oklahoma=true --seed 100000 --out runs/crosscheck

It prints the totals (hands, legal-move sets and hand results compared, how many agreed)
and the differences by category; the exit code is 1 when any difference is unexplained.
``--out DIR`` also writes ``crosscheck.json`` there. docs/openspiel.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.crosscheck import CATEGORIES, DEFAULT_AGENTS, CrosscheckReport, crosscheck


def parse_param(text: str) -> tuple[str, Any]:
    """``name=value`` of an OpenSpiel game parameter: ``true``/``false`` or an int."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise ValueError(f"--param {text!r}: expected name=value, e.g. knock_card=7 or oklahoma=true")
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    try:
        return name, int(value)
    except ValueError:
        raise ValueError(f"--param {text!r}: the value must be true, false or an int") from None


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.crosscheck", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hands", type=int, default=1000, help="hands to play in lockstep (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="first hand's seed; hand i plays seed + i (default 0)")
    p.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS),
                   help=f"make_agent names whose play drives the check, every ordered pair in turn "
                        f"(default {' '.join(DEFAULT_AGENTS)})")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="an OpenSpiel gin_rummy parameter (repeatable), e.g. oklahoma=true, knock_card=7")
    p.add_argument("--out", default=None, help="folder for crosscheck.json (optional)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see ``--help``): 0 when every difference is explained, 1
    otherwise, 2 after a one-line error on stderr."""
    args = _parse_args(argv)
    try:
        if args.hands < 1:
            raise ValueError(f"--hands {args.hands}: must be >= 1")
        params = dict(parse_param(t) for t in args.param)
        from agents.openspiel import load_openspiel_game

        load_openspiel_game(params)  # bad parameters and a missing pyspiel fail here, in one line
    except (ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=args.hands, unit="hand", smoothing=0.05)

    def tick(report: CrosscheckReport) -> None:
        if bar is not None:
            bar.update(1)
            if report.hands % 100 == 0:
                bar.set_postfix(unexplained=report.unexplained)

    try:
        report = crosscheck(args.hands, seed=args.seed, agents=args.agents, params=params, on_hand=tick)
    except ValueError as exc:  # e.g. an unknown agent name
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    params_text = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    print(f"OpenSpiel gin_rummy ({params_text}), seeds {args.seed}..{args.seed + args.hands - 1}, "
          f"agents {' '.join(args.agents)}, {seconds:.0f} s")
    print("\n".join(report.lines()))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        data = {"hands": report.hands, "seed": args.seed, "agents": args.agents, "params": params,
                "moves": report.moves, "legal_sets": report.legal_sets, "equal_sets": report.equal_sets,
                "results": report.results, "equal_results": report.equal_results,
                "by_category": {name: report.by_category.get(name, 0) for name in [*CATEGORIES, "unexplained"]},
                "examples": [vars(d) for d in report.found], "seconds": round(seconds, 1)}
        (out / "crosscheck.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 1 if report.unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
