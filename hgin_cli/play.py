"""``hgin play``: a match of any format against agents in the terminal, new or resumed
from a saved file. One path for every format: the person's seat prompts
(:class:`~hgin_cli.human.SeatPrompt`), the agents play every other seat, and
:func:`hgin_env.loop.run_match` plays the :class:`~hgin_env.match.Match` (a duel is its
two-seat case); only the words differ by format (:mod:`hgin_cli.narration`)."""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from typing import Any

from arena.records import describe_move, load_match, save_match
from hgin_env import actions as A
from hgin_env.game import draw_seed
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import PROFILES, Rules, get_rules

from .common import OPPONENT_KINDS, CliError, _can_print_symbols, _card, _say, end_of_play
from .human import Quit, SeatPrompt
from .narration import narration_for
from .opponents import make_opponent


class TerminalMatch:
    """A terminal match of any format: the person at seat ``human``, ``agents[seat]`` at
    every other seat (``labels[seat]`` names each seat's player: ``"human"`` or the agent)."""

    def __init__(self, match: Match, human: int, agents: Sequence[Any], labels: Sequence[str],
                 symbols: bool = True):
        self.match = match
        self.human = human
        self.agents = agents
        self.labels = list(labels)
        self.symbols = symbols
        self.names = [f"player_{s} (you)" if s == human else f"player_{s} ({labels[s]})"
                      for s in range(match.num_players)]
        self.prompt = SeatPrompt(match, human, symbols)
        self.narration = narration_for(match, self.names, symbols)
        #: The move being made, as said before it was applied; the mover's hand then; its table.
        self._told: tuple[str | None, int, int] = (None, 0, 0)

    def _watching(self, table_index: int) -> bool:
        """Moves the person sees: those at its own table (one table: every move)."""
        return len(self.match.tables) == 1 or self.match.table_of(self.human) == table_index

    # The policies say what a move does before it is applied (the table changes with it);
    # after_move prints it once the match has applied it.
    def human_policy(self, obs: dict) -> int:
        """The person's seat: prompt on its table until a legal move is typed."""
        table = self.match.tables[self.match.current_table]
        self.prompt.game, self.prompt.player = table.game, table.player_of(self.human)
        action = self.prompt.ask_move()
        self._told = self.prompt.your_move(action), table.game.hands[self.prompt.player], table.index
        return action

    def agent_policy(self, seat: int) -> Callable[[dict], int]:
        def policy(obs: dict) -> int:
            m = self.match
            action = int(self.agents[seat](obs))
            if action not in m.legal_actions():
                raise CliError(f"the opponent agent at player_{seat} chose an illegal action {action} "
                               f"({A.describe_action(action)}); this is a bug in the agent")
            self._told = (describe_move(m.current_game, action, self.names[seat], self.symbols), 0,
                          m.current_table)
            return action
        return policy

    def after_move(self, seat: int, obs: dict, action: int, finished: list) -> None:
        move, before, table = self._told
        if seat == self.human and action == A.DRAW_STOCK:  # a draw never ends a hand: same table
            drawn = (self.match.tables[table].game.hands[self.prompt.player] & ~before).bit_length() - 1
            move = f"You draw {_card(drawn, self.symbols)} from the stock"
        if move and self._watching(table):
            _say(move)
        if finished:
            _say(*self.narration.results(finished))
            if self.match.dealt_anew(finished):
                _say(*self.narration.deal())

    def run(self, resumed_from: str | None = None) -> bool:
        """Play until the match ends (True) or the person quits / the input ends (False).
        ``resumed_from`` names the saved match it was loaded from (a duel then says where
        the match stands instead of announcing the first deal)."""
        told = self.narration
        _say(told.greeting(self.human), "Type 'help' for the moves.")
        _say(*told.opening(resumed_from))
        policies = [self.human_policy if s == self.human else self.agent_policy(s)
                    for s in range(self.match.num_players)]
        try:
            run_match(self.match, policies, on_move=self.after_move)
        except Quit as q:  # the match stays at its last applied move (it can be saved)
            _say(*told.abandoned(q.reason))
            return False
        _say("", told.winner())
        return True


def _resume(args: argparse.Namespace) -> tuple[Match, int, str]:
    """The saved match of ``--resume`` (any format): (match at its last move, the person's
    seat, the opponent spec)."""
    given = [flag for flag, value in (("--seed", args.seed), ("--rules", args.rules), ("--seat", args.seat))
             if value is not None]
    if given:
        raise CliError(f"--resume takes the seed, rules and seat from {args.resume}; drop {', '.join(given)}")
    data, match = load_match(args.resume)
    if match.is_over:
        raise CliError(f"{args.resume}: the match is already finished; watch it with: hgin replay {args.resume}")
    players = data["players"]
    if players.count("human") != 1:
        raise CliError(f"{args.resume}: no human seat in the saved match (players {players!r}); "
                       "only matches saved by 'hgin play --save' can be resumed")
    human = players.index("human")
    opponent = args.opponent
    if opponent is None:
        label = next(p for s, p in enumerate(players) if s != human)
        if not (label in OPPONENT_KINDS or label.startswith(("ppo:", "search:"))):
            raise CliError(f"{args.resume}: the opponent was {label!r}; say which agent to resume against "
                           "with --opponent (e.g. --opponent PATH.zip)")
        opponent = label
    return match, human, opponent


def _human_seat(seat: str | None, rules: Rules, seed: int) -> int:
    """The person's seat of a new match: ``--seat`` (default 0; ``random``: drawn from the seed)."""
    n = rules.num_players
    human = random.Random(seed).randrange(n) if seat == "random" else int(seat or "0")
    if not 0 <= human < n:
        raise CliError(f"--seat {seat}: format {rules.format!r} has seats 0..{n - 1}")
    return human


def _opponents(spec: str, match: Match, human: int) -> tuple[list[Any], str]:
    """An instance of the ``spec`` agent at every seat but the person's (partners too), and
    its label. The duel's one opponent is seeded with the match's seed (so a duel's transcript
    is what it always was), a format's seat s with seed + s."""
    agents: list[Any] = [None] * match.num_players
    label = spec
    for s in range(match.num_players):
        if s != human:
            seed = match.seed if match.num_players == 2 else match.seed + s
            agents[s], label = make_opponent(spec, seed, match.rules)
    return agents, label


def cmd_play(args: argparse.Namespace) -> int:
    """``hgin play``: a new match of any format, or (``--resume FILE``) the rest of a saved
    unfinished one, saved (``--save``, or back to the resumed FILE) when it ends."""
    if args.seed is not None and args.seed < 0:  # numpy takes seeds >= 0 only
        raise CliError(f"--seed {args.seed}: a seed is an integer >= 0")
    if args.resume is not None:
        match, human, opponent = _resume(args)
        save = args.save if args.save is not None else args.resume
    else:
        rules = get_rules(args.rules or "hollywood")
        seed = args.seed if args.seed is not None else draw_seed()
        human = _human_seat(args.seat, rules, seed)
        match = Match(rules, seed=seed)
        opponent = args.opponent or "expert"
        save = args.save
    agents, label = _opponents(opponent, match, human)
    labels = ["human" if s == human else label for s in range(match.num_players)]
    play = TerminalMatch(match, human, agents, labels, symbols=not args.ascii and _can_print_symbols())
    return end_of_play(lambda: play.run(resumed_from=args.resume),
                       lambda: save_match(match, save, players=play.labels) if save else None)


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
