"""``hgin replay``: a saved match of any format, hand by hand (the one reader of
:mod:`arena.records`; the words of the match's format, :mod:`hgin_cli.narration`)."""

from __future__ import annotations

import argparse
from typing import Any

from arena.records import describe_move, load_match
from hgin_env.match import Match

from .common import _can_print_symbols, _say
from .narration import narration_for, seat_names


def cmd_replay(args: argparse.Namespace) -> int:
    data, final = load_match(args.file)  # checks everything before printing anything
    symbols = not args.ascii and _can_print_symbols()
    actions = data["actions"]
    match = Match(final.rules, seed=data["seed"], first_dealer=data["first_dealer"],
                  single_hand=final.single_hand)
    told = narration_for(match, seat_names(data["players"]), symbols)
    _say(told.replay_header(args.file, len(actions)))
    _say(*told.replayed_deal(args.moves))
    for action in actions:
        table = match.tables[match.current_table]
        seat, player, game = table.current_seat, table.game.current_player, table.game
        text = describe_move(game, action, told.names[seat], symbols)
        before = game.hands[player]
        finished = match.apply(action)
        if args.moves:
            _say("  " + told.replayed_move(text, action, game, player, before))
        if finished:
            _say(*told.results(finished))
            if match.dealt_anew(finished):
                _say(*told.replayed_deal(args.moves))
    _say("", told.winner() if match.is_over else told.unfinished())
    return 0


def register(sub: Any) -> None:
    """Add ``hgin replay`` to the subcommands."""
    p = sub.add_parser(
        "replay", help="replay a saved match hand by hand",
        description="Replay a match saved by 'hgin play --save' (or save_match): each hand's melds, "
                    "lay-offs and points, the scoreboard after each hand and the winner. A corrupt "
                    "file or one saved under another rules version is refused (exit code 2).")
    p.add_argument("file", help="saved match (JSON, format hgin-match; any match format)")
    p.add_argument("--moves", action="store_true", help="also show the deal and every move")
    p.add_argument("--ascii", action="store_true", help="suit letters C D H S instead of ♣ ♦ ♥ ♠")
    p.set_defaults(func=cmd_replay)
