"""``hgin replay``: a saved match (duel or format) hand by hand."""

from __future__ import annotations

import argparse
from typing import Any

from arena.records import describe_move, is_format_match_file, load_match
from hgin_env import actions as A
from hgin_env.game import Game
from hgin_env.render import grouped_hand
from hgin_env.rules import get_rules

from .cli_formats import replay_format
from .common import _can_print_symbols, _card, _peek_json, _say
from .human import _hand_summary, _winner_line


def cmd_replay(args: argparse.Namespace) -> int:
    data = _peek_json(args.file)
    if is_format_match_file(data):
        return replay_format(args.file, data, args.moves, not args.ascii and _can_print_symbols())
    data, final = load_match(args.file)  # checks everything before printing anything
    symbols = not args.ascii and _can_print_symbols()
    rules = get_rules(final.rules)
    players = data.get("players")
    if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
        players = ["player_0", "player_1"]
    names = [f"player_{i} ({players[i]})" if players[i] != f"player_{i}" else players[i] for i in (0, 1)]
    _say(f"Replaying {args.file}: rules '{rules.name}', seed {data['seed']}, {len(data['actions'])} actions; "
         f"{names[0]} vs {names[1]}")
    game = Game(rules=rules, seed=data["seed"], single_hand=final.single_hand,
                first_dealer=data["first_dealer"])
    _say("", f"=== Hand 1: player_{game.dealer} deals, upcard {_card(game.discard_top, symbols)} ===")
    if args.moves:
        _say(f"  {names[0]}: {grouped_hand(game.hands[0], symbols)}",
             f"  {names[1]}: {grouped_hand(game.hands[1], symbols)}")
    for action in data["actions"]:
        p = game.current_player
        text = describe_move(game, action, names[p], symbols)
        before = game.hands[p]
        record = game.apply(action)
        if args.moves:
            if action == A.DRAW_STOCK:
                text += f" ({_card((game.hands[p] & ~before).bit_length() - 1, symbols)})"
            elif A.KNOCK <= action < A.DRAW_STOCK:
                text += f" [{_card(A.action_card(action), symbols)}]"
            _say("  " + text)
        if record is not None:
            _say("", *_hand_summary(record, game, names, symbols))
            if not game.is_over:
                _say("", f"=== Hand {game.hand_number}: player_{game.dealer} deals, "
                         f"upcard {_card(game.discard_top, symbols)} ===")
                if args.moves:
                    _say(f"  {names[0]}: {grouped_hand(game.hands[0], symbols)}",
                         f"  {names[1]}: {grouped_hand(game.hands[1], symbols)}")
    if game.is_over:
        _say("", _winner_line(game, names))
    else:
        _say("", f"The saved match stops in hand {game.hand_number} (it was not finished).")
    return 0


def register(sub: Any) -> None:
    """Add ``hgin replay`` to the subcommands."""
    p = sub.add_parser(
        "replay", help="replay a saved match hand by hand",
        description="Replay a match saved by 'hgin play --save' (or save_match): each hand's melds, "
                    "lay-offs and points, the scoreboard after each hand and the winner. A corrupt "
                    "file or one saved under another rules version is refused (exit code 2).")
    p.add_argument("file", help="saved match (JSON, format hgin-match)")
    p.add_argument("--moves", action="store_true", help="also show the deal and every move")
    p.add_argument("--ascii", action="store_true", help="suit letters C D H S instead of ♣ ♦ ♥ ♠")
    p.set_defaults(func=cmd_replay)
