"""``hgin play``: a match against an agent in the terminal (the duel here, three-hand and
partnership through :mod:`hgin_cli.cli_formats`), new or resumed from a saved file."""

from __future__ import annotations

import argparse
import random
from typing import Any

from arena.records import is_format_match_file, load_match, save_match
from hgin_env.game import Game, draw_seed
from hgin_env.match import Match
from hgin_env.rules import PROFILES, get_rules

from .cli_formats import play_format
from .common import OPPONENT_KINDS, CliError, _can_print_symbols, _peek_json, end_of_play
from .human import HumanMatch
from .opponents import make_opponent


def _resume(args: argparse.Namespace) -> tuple[Match, int, str, list[str]]:
    """The saved match of ``--resume``: (match at its last move, human seat, opponent spec, labels)."""
    given = [flag for flag, value in (("--seed", args.seed), ("--rules", args.rules), ("--seat", args.seat))
             if value is not None]
    if given:
        raise CliError(f"--resume takes the seed, rules and seat from {args.resume}; drop {', '.join(given)}")
    data, game = load_match(args.resume)
    if game.is_over:
        raise CliError(f"{args.resume}: the match is already finished; watch it with: hgin replay {args.resume}")
    players = data.get("players")
    if not (isinstance(players, list) and len(players) == 2 and players.count("human") == 1):
        raise CliError(f"{args.resume}: no human seat in the saved match (players {players!r}); "
                       "only matches saved by 'hgin play --save' can be resumed")
    human = players.index("human")
    label = players[1 - human]
    opponent = args.opponent
    if opponent is None:
        known = isinstance(label, str) and (label in OPPONENT_KINDS
                                            or label.startswith(("ppo:", "search:")))
        if not known:
            raise CliError(f"{args.resume}: the opponent was {label!r}; say which agent to resume against "
                           "with --opponent (e.g. --opponent PATH.zip)")
        opponent = label
    return _duel_match(game), human, opponent, list(players)


def _duel_match(game: Game) -> Match:
    """The duel ``Match`` of a replayed saved ``game`` (its moves already checked by
    :func:`load_match`): the same seed and moves, so ``run_match`` can play on."""
    match = Match(game.rules, seed=game.seed, first_dealer=game.first_dealer, single_hand=game.single_hand)
    for action in game.action_history:
        match.apply(action)
    return match


def cmd_play(args: argparse.Namespace) -> int:
    """``hgin play``: a new match, or (``--resume FILE``) the rest of a saved unfinished one.
    Three-hand and partnership matches are played by :mod:`hgin_cli.cli_formats`."""
    if args.seed is not None and args.seed < 0:  # numpy takes seeds >= 0 only
        raise CliError(f"--seed {args.seed}: a seed is an integer >= 0")
    if args.resume is not None:
        data = _peek_json(args.resume)
        if is_format_match_file(data):
            return play_format(args, data)
    elif get_rules(args.rules or "hollywood").format != "duel":
        return play_format(args)
    if args.seat not in (None, "0", "1", "random"):
        raise CliError(f"--seat {args.seat}: the duel has seats 0 and 1")
    if args.resume is not None:
        duel, human, opponent, _ = _resume(args)
        rules = get_rules(duel.rules)
        seed = duel.seed if duel.seed is not None else 0
        save = args.save if args.save is not None else args.resume
    else:
        rules = get_rules(args.rules or "hollywood")
        seed = args.seed if args.seed is not None else draw_seed()
        seat = args.seat or "0"
        human = random.Random(seed).randrange(2) if seat == "random" else int(seat)
        opponent = args.opponent or "expert"
        duel = Match(rules, seed=seed)
        save = args.save
    agent, label = make_opponent(opponent, seed, rules)
    symbols = not args.ascii and _can_print_symbols()
    match = HumanMatch(duel, human, agent, label, symbols=symbols)
    return end_of_play(lambda: match.run(resumed_from=args.resume),
                       lambda: save_match(match.game, save, players=match.labels) if save else None)


def register(sub: Any) -> None:
    """Add ``hgin play`` to the subcommands."""
    p = sub.add_parser(
        "play", help="play a match against an agent in the terminal",
        description="Play a whole Hollywood Gin match against an agent. On each turn the table shows "
                    "your hand grouped into melds with its deadwood, the discard top, the stock, the "
                    "cards the opponent picked up, the three-column scoreboard and your legal moves. "
                    "Type moves as: draw, take, pass, 7H (discard 7H), knock 7H, big gin; also help, "
                    "show, quit. End of input (Ctrl-D) also ends the match.")
    p.add_argument("--opponent", default=None, metavar="AGENT",
                   help="random, simple, expert (default), search (the search valued by the shipped "
                        "policy's critic; search:KEY=VALUE,... for options), ppo (the shipped policy), or the "
                        "PATH of a PPO checkpoint .zip (also ppo:PATH); with --resume, the saved opponent")
    p.add_argument("--seed", type=int, default=None,
                   help="match seed: the same seed deals the same cards (default: a random seed, printed)")
    p.add_argument("--rules", default=None, choices=sorted(PROFILES), metavar="PROFILE",
                   help="rules profile (default: hollywood); one of: " + ", ".join(sorted(PROFILES)))
    p.add_argument("--seat", default=None, choices=("0", "1", "2", "3", "random"),
                   help="your seat: 0 (player_0, default), 1, or random (drawn from the seed); "
                        "2 in three-hand, 2 and 3 in a partnership (--rules hollywood_three_hand, "
                        "hollywood_partnership, gin_three_hand, gin_partnership)")
    p.add_argument("--save", metavar="FILE", default=None,
                   help="save the match (also an unfinished one) as JSON when it ends, for 'hgin replay' "
                        "and 'hgin play --resume'")
    p.add_argument("--resume", metavar="FILE", default=None,
                   help="play on from an unfinished match saved with --save (its seed, rules, seat and "
                        "opponent); saves back to FILE unless --save says otherwise")
    p.add_argument("--ascii", action="store_true", help="suit letters C D H S instead of ♣ ♦ ♥ ♠")
    p.set_defaults(func=cmd_play)
