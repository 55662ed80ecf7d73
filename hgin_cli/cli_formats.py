"""``hgin play`` and ``hgin replay`` for the three-hand and partnership formats.

A person takes any seat (``--seat``); every other seat is played by the ``--opponent``
agent (its own instance per seat, partners included). The human sees its own table as in
the duel (``HumanMatch``'s prompts and table), the moves made at that table, every hand's
result and the match sheet; never another seat's cards. A match is saved as
``hgin-format-match`` JSON (:mod:`arena.records`) and replayed hand by hand by ``hgin replay``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.records import describe_move, load_format_match, save_format_match
from hgin_env import actions as A
from hgin_env.game import Phase, draw_seed
from hgin_env.loop import run_match
from hgin_env.match import Match, RoundResult, SeatHand
from hgin_env.render import deal_text, render_hand_result, render_seat_table
from hgin_env.rules import get_rules

from .common import CliError, _can_print_symbols, _card, _say, end_of_play
from .human import HumanMatch, _Quit
from .opponents import make_opponent


def _sheet_text(match: Match) -> str:
    return str(match.sheet)


def _result_lines(finished: list[SeatHand | RoundResult], match: Match, symbols: bool) -> list[str]:
    lines: list[str] = []
    for item in finished:
        if isinstance(item, SeatHand):
            names = [f"player_{s}" for s in item.seats]  # the table's players by seat
            lines += ["", f"--- Table {item.table}: {names[0]} v {names[1]} ---",
                      render_hand_result(item.record, symbols, names, item.number)]
        else:
            who = "nobody (net 0)" if item.winner is None else f"team_{item.winner}"
            lines.append(f"Round {item.number + 1}: team points {item.team_points[0]}-"
                         f"{item.team_points[1]}; {who} scores {item.points}")
    if any(isinstance(i, RoundResult) for i in finished) or match.format == "three_hand":
        lines.append(_sheet_text(match))
    return lines


def _winner_text(match: Match, names: Sequence[str]) -> str:
    if match.truncated:
        return "Match stopped at the rules' max_hands cap: no winner."
    w = match.match_winner
    # Profiles with game, shutout and box bonuses are paid on the settlement (004).
    settled = f"; {match.sheet.settlement_text()}" if match.sheet.is_settled else ""
    if w is None:
        return f"Match over: a draw{settled}."
    if match.format == "partnership":
        a, b = match.teams[w]  # type: ignore[index]
        return f"Match over: team_{w} ({names[a]} and {names[b]}) wins{settled}."
    return f"Match over: {names[w]} wins{settled}."


class _SeatPrompt(HumanMatch):
    """``HumanMatch``'s prompts on the human's table ``Game``, with the table's players
    named by their seats and the match sheet instead of the table game's own board."""

    match: Match

    def show_table(self) -> None:
        g = self.game
        if g.phase == Phase.DISCARD:
            super().show_table()
            return
        _say("", render_seat_table(self.match, self.seat, self.symbols, you=True))
        _say(self.legal_moves_text())


class FormatHumanMatch:
    """A terminal match of a format: the human at seat ``human``, ``agents[seat]`` elsewhere."""

    def __init__(self, match: Match, human: int, agents: Sequence[Any], label: str, symbols: bool = True):
        self.match = match
        self.human = human
        self.agents = agents
        self.symbols = symbols
        self.names = [f"player_{s} (you)" if s == human else f"player_{s} ({label})"
                      for s in range(match.num_players)]
        self.labels = ["human" if s == human else label for s in range(match.num_players)]
        game, player = self._human_table()
        self.view = _SeatPrompt(match, player, None, label, symbols=symbols)
        self.view.game, self.view.seat = game, human
        #: The move being made, as said before it was applied; the mover's hand then; its table.
        self._told: tuple[str | None, int, int] = (None, 0, 0)

    def _human_table(self) -> tuple[Any, int]:
        view = self.match.seat_view(self.human)
        if view is None:  # sitting out: the table is watched, not played
            return self.match.tables[0].game, 0
        return view

    def _watching(self, table_index: int) -> bool:
        """Moves the human sees: those at its own table (three-hand: the one table)."""
        return self.match.format == "three_hand" or self.match.table_of(self.human) == table_index

    # The policies say what a move does before it is applied (the table changes with it);
    # after_move prints it once the match has applied it.
    def human_policy(self, obs: dict) -> int:
        """The human's seat: prompt on its table until a legal move is typed."""
        m = self.match
        table = m.tables[m.current_table]
        player = table.player_of(self.human)
        self.view.game, self.view.human = table.game, player
        action = self.view.ask_move()
        self._told = self.view.your_move(action), table.game.hands[player], table.index
        return action

    def agent_policy(self, seat: int) -> Callable[[dict], int]:
        def policy(obs: dict) -> int:
            m = self.match
            action = int(self.agents[seat](obs))
            if action not in m.legal_actions():
                raise ValueError(f"the agent at seat {seat} chose an illegal action {action}")
            self._told = (describe_move(m.current_game, action, self.names[seat], self.symbols), 0,
                          m.current_table)
            return action
        return policy

    def after_move(self, seat: int, obs: dict, action: int, finished: list) -> None:
        m = self.match
        move, before, table = self._told
        if seat == self.human and action == A.DRAW_STOCK:  # a draw never ends a hand: same table
            drawn = (self.view.game.hands[self.view.human] & ~before).bit_length() - 1
            move = f"You draw {_card(drawn, self.symbols)} from the stock"
        if move and self._watching(table):
            _say(move)
        if finished:
            _say(*_result_lines(finished, m, self.symbols))
            if not m.is_over and (m.format == "three_hand" or any(isinstance(f, RoundResult) for f in finished)):
                self._announce_deal()

    def _announce_deal(self) -> None:
        m = self.match
        for t in m.tables:
            _say("", f"=== Table {t.index}: {deal_text(t, self.names)} ===")

    def run(self) -> bool:
        m = self.match
        partner = f"; your partner is player_{m.partner_of(self.human)}" if m.format == "partnership" else ""
        _say(f"Hollywood Gin, {m.format}, rules '{m.rules.name}', seed {m.seed}. "
             f"You are player_{self.human}{partner}.", "Type 'help' for the moves.")
        self._announce_deal()
        policies = [self.human_policy if s == self.human else self.agent_policy(s)
                    for s in range(m.num_players)]
        try:
            run_match(m, policies, on_move=self.after_move)
        except _Quit as q:  # the match stays at its last applied move (it can be saved)
            _say(f"Match abandoned ({q.reason}) after {len(m.hand_history)} hand(s).", _sheet_text(m))
            return False
        _say("", _winner_text(m, self.names))
        return True


def replay_format(path: str | Path, data: dict, moves: bool, symbols: bool) -> int:
    """``hgin replay`` of a saved format match: every hand's result and the sheet."""
    final = load_format_match(path, data)  # checks everything before printing anything
    players = data["players"]
    names = [f"player_{s} ({p})" for s, p in enumerate(players)]
    _say(f"Replaying {path}: {final.format}, rules '{final.rules.name}', seed {data['seed']}, "
         f"{len(data['actions'])} actions; " + ", ".join(names))
    m = Match(final.rules, seed=data["seed"], first_dealer=data["first_dealer"])
    for action in data["actions"]:
        seat = m.current_seat
        table = m.tables[m.current_table]
        if moves:
            _say("  " + describe_move(table.game, action, names[seat], symbols))  # type: ignore[index]
        finished = m.apply(action)
        if finished:
            _say(*_result_lines(finished, m, symbols))
    _say("", _winner_text(m, names) if m.is_over else "The saved match stops here (it was not finished).")
    return 0


def play_format(args: Any, data: dict | None = None) -> int:
    """``hgin play`` for a format: a new match (``--rules``, ``--seed``, ``--seat``) or, with
    ``data``, the rest of the unfinished match saved in ``args.resume``."""
    if data is not None:
        given = [flag for flag, value in (("--seed", args.seed), ("--rules", args.rules), ("--seat", args.seat))
                 if value is not None]
        if given:
            raise CliError(f"--resume takes the seed, rules and seat from {args.resume}; drop {', '.join(given)}")
        match = load_format_match(args.resume, data)
        if match.is_over:
            raise CliError(f"{args.resume}: the match is already finished; watch it with: hgin replay {args.resume}")
        players = data["players"]
        if players.count("human") != 1:
            raise CliError(f"{args.resume}: no human seat in the saved match (players {players!r})")
        human = players.index("human")
        opponent = args.opponent or next(p for p in players if p != "human")
        save = args.save if args.save is not None else args.resume
        seed = match.seed if match.seed is not None else 0
    else:
        rules = get_rules(args.rules)
        seed = args.seed if args.seed is not None else draw_seed()
        seat = args.seat or "0"
        n = rules.num_players
        human = random.Random(seed).randrange(n) if seat == "random" else int(seat)
        if not 0 <= human < n:
            raise CliError(f"--seat {seat}: format {rules.format!r} has seats 0..{n - 1}")
        match = Match(rules, seed=seed)
        opponent = args.opponent or "expert"
        save = args.save
    agents: list[Any] = [None] * match.num_players
    label = opponent
    for s in range(match.num_players):
        if s != human:
            agents[s], label = make_opponent(opponent, seed + s, match.rules)
    play = FormatHumanMatch(match, human, agents, label, symbols=not args.ascii and _can_print_symbols())
    return end_of_play(play.run, lambda: save_format_match(match, save, play.labels) if save else None)
