"""A person's seat in the terminal: :class:`SeatPrompt` (the table as the person sees it,
the legal moves in words, the prompt that reads a move and the reasons a move is refused)
and its help text. The match around it, of any format, is :mod:`hgin_cli.play`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hgin_env import actions as A
from hgin_env.cards import format_card, format_cards
from hgin_env.game import Hand, Phase
from hgin_env.match import Match
from hgin_env.render import grouped_hand, hand_order, render_seat_table

from .common import _card, _out, _say

HELP_TEXT = """\
Moves:
  draw            draw the top card of the stock
  take            take the top card of the discard pile (or the first upcard)
  pass            pass on the first upcard
  7H              discard 7H (ranks A 2..9 T/10 J Q K, suits C D H S or ♣ ♦ ♥ ♠)
  knock 7H        knock, discarding 7H face down (deadwood must be within the knock limit)
  big gin         lay down all 11 cards (only if the rules allow big gin)
Also: help (this text, and the deadwood after each discard), show (the table again), quit."""


class Quit(Exception):
    """The person ended the match (``quit`` or the end of input); ``reason`` says which."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class SeatPrompt:
    """The person at ``seat`` of ``match`` (any format): before each prompt the caller sets
    :attr:`game` to the table's ``Hand`` the seat plays at and :attr:`player` to the seat's
    player index there (a format's table changes every hand)."""

    def __init__(self, match: Match, seat: int, symbols: bool = True):
        self.match = match
        self.seat = seat
        self.symbols = symbols
        self.game: Hand = match.current_game
        self.player = 0

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
            hand = grouped_hand(g.hands[self.player], self.symbols)
            _say(f"Your hand: {hand}", self.legal_moves_text())
            return
        _say("", render_seat_table(self.match, self.seat, self.symbols, you=True))
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
                raise Quit("end of input")
            text = line.strip()
            low = text.lower()
            if not text:
                _say(self.legal_moves_text())
                continue
            if low in ("quit", "exit", "q", "resign"):
                raise Quit("you quit")
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

    # ------------------------------------------------------------------ telling
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
