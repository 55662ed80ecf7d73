"""The terminal duel: :class:`HumanMatch` (a person's seat as a policy that prompts, the
agent's moves told in words), its help text and the end-of-match lines."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from arena.records import describe_move
from hgin_env import actions as A
from hgin_env.cards import format_card, format_cards
from hgin_env.game import Game, HandRecord, Phase
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.render import grouped_hand, hand_order, render_hand_result, render_table
from hgin_env.rules import get_rules

from .common import CliError, _card, _column_names, _out, _say


def _winner_line(game: Game, names: Sequence[str]) -> str:
    board = game.scoreboard
    won = board.columns_won
    hands = len(game.hand_history)
    if game.truncated:
        head = f"Match stopped after {hands} hands (the rules' max_hands cap)"
    else:
        head = f"Match over after {hands} hands"
    winner = board.match_winner
    # Profiles with game, shutout and box bonuses (004, 001) are paid on the settlement.
    settled = f"; {board.settlement_text(names)}" if board.is_settled else ""
    if winner is None:
        return f"{head}: a draw, columns {won[0]}-{won[1]}{settled}."
    if board.num_columns == 1 or board.rules.short_session:
        totals = board.columns.sum(axis=1)
        return (f"{head}: {names[winner]} wins, {int(totals[winner])} to "
                f"{int(totals[1 - winner])}{settled}.")
    return f"{head}: {names[winner]} wins, {won[winner]} columns to {won[1 - winner]}{settled}."


def _hand_summary(record: HandRecord, game: Game, names: Sequence[str], symbols: bool) -> list[str]:
    lines = [render_hand_result(record, symbols)]
    if record.knock_discard is not None:
        lines.append(f"  (knock discard, face down: {_card(record.knock_discard, symbols)})")
    for j in record.columns_decided:
        w = game.scoreboard.column_winners[j]
        lines.append(f"  Column {_column_names(game.scoreboard.num_columns)[j]} is decided: "
                     f"won by {names[w] if w is not None else '-'}")
    lines.append(str(game.scoreboard))
    return lines


HELP_TEXT = """\
Moves:
  draw            draw the top card of the stock
  take            take the top card of the discard pile (or the first upcard)
  pass            pass on the first upcard
  7H              discard 7H (ranks A 2..9 T/10 J Q K, suits C D H S or ♣ ♦ ♥ ♠)
  knock 7H        knock, discarding 7H face down (deadwood must be within the knock limit)
  big gin         lay down all 11 cards (only if the rules allow big gin)
Also: help (this text, and the deadwood after each discard), show (the table again), quit."""


class _Quit(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class HumanMatch:
    """A terminal duel: the human in seat ``human`` against ``agent``, played by
    :func:`hgin_env.loop.run_match` (the human is a policy that prompts) on the match's one ``Game``."""

    def __init__(self, match: Match, human: int, agent: Any, agent_label: str, symbols: bool = True):
        self.match = match
        self.game = match.current_game
        self.human = human
        self.agent = agent
        self.symbols = symbols
        self.names = ["", ""]
        self.names[human] = f"player_{human} (you)"
        self.names[1 - human] = f"player_{1 - human} ({agent_label})"
        self.labels = ["", ""]
        self.labels[human] = "human"
        self.labels[1 - human] = agent_label
        #: The move being made, as said before it was applied, and the mover's hand then.
        self._told: tuple[str | None, int] = (None, 0)

    # ------------------------------------------------------------------ text
    def cards(self, cards: Sequence[int]) -> str:
        return format_cards(cards, self.symbols)

    def legal_moves_text(self) -> str:
        """The legal moves as the words to type, cards in the notation of the table (``3♥``,
        or ``3H`` with ``--ascii``; either is read back)."""
        g = self.game
        legal = g.legal_actions()
        top = _card(g.discard_top, self.symbols)
        if g.phase == Phase.FIRST_UPCARD:
            return f"legal moves: take (the upcard {top}), pass"
        if g.phase == Phase.DRAW:
            parts = ["draw (from the stock)"]
            if A.TAKE_DISCARD in legal:
                parts.append(f"take ({top})")
            return "legal moves: " + ", ".join(parts)
        order = hand_order(g.hands[g.current_player])  # as the hand is shown: melds, then loose cards
        discards = [format_card(c, self.symbols) for c in order if A.DISCARD + c in legal]
        knocks = [format_card(c, self.symbols) for c in order if A.KNOCK + c in legal]
        text = "legal moves: discard " + " ".join(discards)
        if knocks:
            text += " | knock " + " / knock ".join(knocks)
        if A.BIG_GIN in legal:
            text += " | big gin"
        return text

    def why_illegal(self, action: int) -> str:
        g = self.game
        text = A.describe_action(action)
        card = A.action_card(action)
        if g.phase == Phase.FIRST_UPCARD:
            return f"'{text}' is not possible now: take the first upcard or pass."
        if g.phase == Phase.DRAW:
            if action == A.PASS:
                if not g.rules.first_upcard_offer:
                    return ("These rules have no first-upcard offer (004): nobody passes; draw "
                            "from the stock or take the discard.")
                return "You can only pass on the first upcard; now draw a card."
            if action == A.TAKE_DISCARD:
                return "Both players passed the upcard: you must draw from the stock."
            return f"'{text}': draw a card first ('draw' from the stock or 'take' the discard)."
        if action in (A.DRAW_STOCK, A.TAKE_DISCARD, A.PASS):
            return "You have already drawn: now discard a card (e.g. '7H') or knock ('knock 7H')."
        if action == A.BIG_GIN:
            return "Big gin is not possible (not allowed by these rules, or not all 11 cards melded)."
        assert card is not None
        if not g.hands[g.current_player] >> card & 1:
            return f"You do not hold {format_card(card, self.symbols)}."
        if card == g.taken_card:
            return (f"You just took {format_card(card, self.symbols)} from the discard pile: it cannot go "
                    "back this turn.")
        if action >= A.KNOCK:
            dw = g.deadwood_after_discard()[card]
            return (f"Cannot knock with {format_card(card, self.symbols)}: your deadwood would be {dw}, "
                    f"above the knock limit {g.knock_limit}.")
        return f"'{text}' is not legal now."

    def bare_knock(self) -> str:
        """The answer to ``knock`` without a card, in any phase."""
        g = self.game
        if g.phase != Phase.DISCARD:
            return ("Knock after drawing: 'draw' or 'take' first, then e.g. 'knock 7H' "
                    "(discard 7H face down and knock).")
        if any(A.KNOCK <= a < A.DRAW_STOCK for a in g.legal_actions()):
            return "Say which card to discard face down, e.g. 'knock 7H'."
        best = min(dw for c, dw in g.deadwood_after_discard().items() if c != g.taken_card)
        return (f"You cannot knock: your deadwood after any discard is at least {best}, "
                f"above the knock limit {g.knock_limit}.")

    def show_table(self) -> None:
        g = self.game
        if g.phase == Phase.DISCARD:
            hand = grouped_hand(g.hands[self.human], self.symbols)
            _say(f"Your hand: {hand}", self.legal_moves_text())
            return
        _say("", render_table(g, self.human, self.symbols, you=True))
        _say(self.legal_moves_text())

    def show_help(self) -> None:
        _say(HELP_TEXT)
        g = self.game
        if g.phase == Phase.DISCARD:
            after = g.deadwood_after_discard()
            pairs = sorted(after.items(), key=lambda kv: (kv[1], kv[0]))
            _say("Deadwood after discarding: " + ", ".join(
                f"{_card(c, self.symbols)} {dw}" for c, dw in pairs if c != g.taken_card)
                + f"  (knock limit {g.knock_limit})")
        _say(self.legal_moves_text())

    # ------------------------------------------------------------------ input
    def read_line(self, prompt: str) -> str | None:
        out = _out()
        print(prompt, end="", file=out)
        out.flush()
        stdin = sys.stdin
        line = stdin.readline()
        if line == "":
            print(file=out)
            return None
        if not (hasattr(stdin, "isatty") and stdin.isatty()):
            print(line.rstrip("\r\n"), file=out)  # echo piped input, so transcripts read naturally
        return line

    def ask_move(self) -> int:
        self.show_table()
        while True:
            line = self.read_line("your move> ")
            if line is None:
                raise _Quit("end of input")
            text = line.strip()
            low = text.lower()
            if not text:
                _say(self.legal_moves_text())
                continue
            if low in ("quit", "exit", "q", "resign"):
                raise _Quit("you quit")
            if low in ("help", "h", "?"):
                self.show_help()
                continue
            if low in ("show", "table", "hand"):
                self.show_table()
                continue
            if low == "knock":
                _say(self.bare_knock(), self.legal_moves_text())
                continue
            try:
                action = A.parse_action(text)
            except ValueError as exc:
                _say(f"Cannot read {text!r}: {exc}. Type 'help' for the moves.", self.legal_moves_text())
                continue
            if action not in self.game.legal_actions():
                _say(self.why_illegal(action), self.legal_moves_text())
                continue
            return action

    # ------------------------------------------------------------------ loop
    def your_move(self, action: int) -> str | None:
        g = self.game
        top = _card(g.discard_top, self.symbols)
        if action == A.TAKE_DISCARD:
            return f"You take {top}"
        if action == A.PASS:
            return f"You pass on the upcard {top}"
        if A.KNOCK <= action < A.DRAW_STOCK:
            card = _card(A.action_card(action), self.symbols)
            gin = g.deadwood_after_discard().get(A.action_card(action)) == 0
            return f"You {'go gin' if gin else 'knock'}, discarding {card} face down"
        if action == A.BIG_GIN:
            return "You lay down big gin!"
        if A.DISCARD <= action < A.KNOCK:
            return f"You discard {_card(action - A.DISCARD, self.symbols)}"
        return None  # a draw is told after it, with the card drawn

    # The policies say what a move does before it is applied (the table changes with it);
    # after_move prints it once the match has applied it.
    def human_policy(self, obs: dict) -> int:
        """The human's seat: prompt until a legal move is typed."""
        action = self.ask_move()
        self._told = self.your_move(action), self.game.hands[self.human]
        return action

    def agent_policy(self, obs: dict) -> int:
        g = self.game
        action = int(self.agent(obs))
        if action not in g.legal_actions():
            raise CliError(f"the opponent agent chose an illegal action {action} "
                           f"({A.describe_action(action)}); this is a bug in the agent")
        self._told = describe_move(g, action, self.names[g.current_player], self.symbols), 0
        return action

    def after_move(self, seat: int, obs: dict, action: int, finished: list) -> None:
        g = self.game
        move, before = self._told
        if seat == self.human and action == A.DRAW_STOCK:
            drawn = (g.hands[seat] & ~before).bit_length() - 1
            move = f"You draw {_card(drawn, self.symbols)} from the stock"
        if move:
            _say(move)
        if finished:
            _say("", *_hand_summary(finished[0].record, g, self.names, self.symbols))
            if not g.is_over:
                _say("", f"=== Hand {g.hand_number}: player_{g.dealer} deals, "
                         f"upcard {_card(g.discard_top, self.symbols)} ===")

    def run(self, resumed_from: str | None = None) -> bool:
        """Play until the match ends (True) or the human quits / input ends (False).

        ``resumed_from`` names the saved match the game was loaded from: the greeting then
        says where the match stands instead of announcing the first deal.
        """
        g = self.game
        _say(f"Hollywood Gin, rules '{get_rules(g.rules).name}', seed {g.seed}. "
             f"You are player_{self.human}; {self.names[1 - self.human]} is your opponent.",
             "Type 'help' for the moves.")
        if resumed_from is None:
            _say(f"=== Hand 1: player_{g.dealer} deals, upcard {_card(g.discard_top, self.symbols)} ===")
        else:
            _say(f"Resuming {resumed_from} in hand {g.hand_number} (player_{g.dealer} deals), after "
                 f"{len(g.hand_history)} finished hand(s) and {len(g.action_history)} moves.",
                 str(g.scoreboard))
        policies = [self.agent_policy, self.agent_policy]
        policies[self.human] = self.human_policy
        try:
            run_match(self.match, policies, on_move=self.after_move)
        except _Quit as q:  # the match stays at its last applied move (it can be saved)
            _say(f"Match abandoned ({q.reason}) in hand {g.hand_number}, after "
                 f"{len(g.hand_history)} finished hand(s).", str(g.scoreboard))
            return False
        _say("", _winner_line(g, self.names))
        return True
