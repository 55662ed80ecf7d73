"""The ``hgin`` command line: play a match in the terminal, replay saved matches, and thin
fronts for the tournament, training and benchmark scripts.

    hgin play --opponent expert --seed 7 --save my_match.json
    hgin play --resume my_match.json                                 (play on from a saved match)
    hgin replay my_match.json --moves
    hgin rules [PROFILE]
    hgin tournament --agents expert simple random --matches 200     (= python -m eval.tournament)
    hgin train --total-timesteps 2000000 --run-name my_run          (= python -m train.ppo)
    hgin bench ...                                                   (= python -m eval.bench.run)

One module per subcommand, each with a ``register(sub)`` that adds its parser (and sets
``func``); :data:`SUBCOMMANDS` lists them, so a new subcommand is a new module plus one line
there. Below them: :mod:`hgin_cli.narration` (what a match says, in each format's words),
:mod:`hgin_cli.human` (the person's prompt at a table) and :mod:`hgin_cli.common` (errors,
printing, card text); every import points down. ``hgin play`` and ``hgin replay`` are one
path for every format. Saved matches are :mod:`arena.records`, shared with the web table.

Importing this module is light: torch is imported only when a PPO opponent is loaded.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena.records import MATCH_FORMAT, MatchFileError, load_match, save_match  # re-exported: hgin_cli.cli's API

from . import forwarded, play, replay, rules_cmd, web
from .common import REPORTED, CliError
from .forwarded import FORWARDED, forward

__all__ = ["MATCH_FORMAT", "SUBCOMMANDS", "CliError", "MatchFileError", "build_parser", "load_match",
           "main", "save_match"]

#: The subcommand modules, in the order ``hgin --help`` lists them (each has ``register(sub)``).
SUBCOMMANDS = [play, replay, rules_cmd, web, forwarded]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hgin",
        description="Hollywood Gin (gin rummy with three-column Hollywood scoring): play against an "
                    "agent in the terminal, replay saved matches, run tournaments, training and "
                    "benchmarks.",
        epilog="Examples:\n"
               "  hgin play --opponent expert --seed 7 --save match.json\n"
               "  hgin play --resume match.json\n"
               "  hgin replay match.json --moves\n"
               "  hgin rules\n"
               "  hgin tournament --agents expert simple random --matches 200 --workers 2\n"
               "  hgin train --help\n"
               "Run 'hgin COMMAND --help' for the options of a command.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hgin`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in FORWARDED:  # forwarded as is, so '--help' reaches the script
            return forward(argv[0], argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return int(args.func(args))
    except REPORTED as exc:
        print("hgin: error: " + " ".join(str(exc).split()), file=sys.stderr)  # always one line
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
