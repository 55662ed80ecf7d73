"""What ``hgin play`` and ``hgin replay`` say about a match, in each format's words.

The match is played and replayed by one path for every format (:mod:`hgin_cli.play`,
:mod:`hgin_cli.replay`); only its words differ. A duel speaks of hands and their dealer
(``=== Hand 2: player_0 deals, upcard 7♥ ===``), its results name the columns decided and
draw the two-row scoreboard; three-hand and partnership name the tables, who dealt and who
sits out (``=== Table 0: player_2 dealt and sits out; ... ===``), count the match's hands
over every table, and draw the match sheet after each hand (three-hand) or round
(partnership). :func:`narration_for` picks the words of a match: :class:`DuelNarration` or
:class:`TablesNarration`, both answering :class:`Narration`'s questions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from hgin_env import actions as A
from hgin_env.game import Hand
from hgin_env.match import Match, RoundResult, SeatHand
from hgin_env.render import deal_text, grouped_hand, render_hand_result

from .common import _card, _column_names

#: What ``Match.apply`` returns: the hands (and the partnership round) an action finished.
Finished = Sequence[SeatHand | RoundResult]


def seat_names(labels: Sequence[str]) -> list[str]:
    """The seats as the fronts name them: ``player_1 (expert)``, or ``player_1`` when its
    label is its name (a file that names no players)."""
    return [label if label == f"player_{s}" else f"player_{s} ({label})" for s, label in enumerate(labels)]


class Narration(ABC):
    """The words of one match (``names[seat]``: how each seat is named; ``symbols``: ♣ ♦ ♥ ♠
    or C D H S)."""

    def __init__(self, match: Match, names: Sequence[str], symbols: bool):
        self.match = match
        self.names = list(names)
        self.symbols = symbols

    @abstractmethod
    def greeting(self, human: int) -> str:
        """The first line of ``hgin play`` (``human``: the person's seat)."""
        raise NotImplementedError

    @abstractmethod
    def opening(self, resumed_from: str | None) -> list[str]:
        """What ``hgin play`` says before the first prompt: the deal, or (``resumed_from``,
        a saved match played on) where the match stands."""
        raise NotImplementedError

    @abstractmethod
    def deal(self) -> list[str]:
        """The announcement of the deal now at the tables."""
        raise NotImplementedError

    @abstractmethod
    def results(self, finished: Finished) -> list[str]:
        """The results of the hands (and round) one action finished."""
        raise NotImplementedError

    @abstractmethod
    def winner(self) -> str:
        """The last line of a finished match."""
        raise NotImplementedError

    @abstractmethod
    def abandoned(self, reason: str) -> list[str]:
        """What ``hgin play`` says when the person quits or the input ends."""
        raise NotImplementedError

    @abstractmethod
    def replay_header(self, path: str, actions: int) -> str:
        """The first line of ``hgin replay`` (``path``: the file; ``actions``: how many it holds)."""
        raise NotImplementedError

    def replayed_move(self, text: str, action: int, game: Hand, player: int, before: int) -> str:
        """``hgin replay --moves``'s line of a move (``text``: :func:`arena.records.describe_move`
        before it; ``game``'s ``player`` held ``before`` then)."""
        return text

    def replayed_deal(self, moves: bool) -> list[str]:
        """What ``hgin replay`` says of a new deal (``moves``: with ``--moves``): nothing by
        default (a format's replay tells the results, and with ``--moves`` the moves)."""
        return []

    @abstractmethod
    def unfinished(self) -> str:
        """The last line of the replay of a match that was not finished."""
        raise NotImplementedError


class DuelNarration(Narration):
    """A duel's words: hands, their dealer and upcard, columns and the scoreboard."""

    def greeting(self, human: int) -> str:
        m = self.match
        return (f"Hollywood Gin, rules '{m.rules.name}', seed {m.seed}. You are player_{human}; "
                f"{self.names[1 - human]} is your opponent.")

    def opening(self, resumed_from: str | None) -> list[str]:
        m = self.match
        if resumed_from is None:
            return self.deal()[1:]  # the first deal follows the greeting without a blank line
        return [f"Resuming {resumed_from} in hand {m.hand_number} (player_{m.tables[0].dealer} deals), "
                f"after {len(m.hand_history)} finished hand(s) and {len(m.action_history)} moves.",
                str(m.sheet)]

    def deal(self) -> list[str]:
        m = self.match
        return ["", f"=== Hand {m.hand_number}: player_{m.tables[0].dealer} deals, "
                    f"upcard {_card(m.current_game.discard_top, self.symbols)} ==="]

    def results(self, finished: Finished) -> list[str]:
        """The hand's result, the knock's face-down card, the columns it decided and the
        scoreboard."""
        record = finished[0].record  # type: ignore[union-attr]
        board = self.match.sheet
        lines = ["", render_hand_result(record, self.symbols)]
        if record.knock_discard is not None:
            lines.append(f"  (knock discard, face down: {_card(record.knock_discard, self.symbols)})")
        for j in record.columns_decided:
            w = board.column_winners[j]
            lines.append(f"  Column {_column_names(board.num_columns)[j]} is decided: "
                         f"won by {self.names[w] if w is not None else '-'}")
        lines.append(str(board))
        return lines

    def winner(self) -> str:
        """How many hands, who won by how many columns (or points, with one column or a
        short session); a settling profile (004, 001) adds the settlement."""
        m, names = self.match, self.names
        board = m.sheet
        won = board.columns_won
        hands = len(m.hand_history)
        head = (f"Match stopped after {hands} hands (the rules' max_hands cap)" if m.truncated
                else f"Match over after {hands} hands")
        winner = board.match_winner
        settled = f"; {board.settlement_text(names)}" if board.is_settled else ""
        if winner is None:
            return f"{head}: a draw, columns {won[0]}-{won[1]}{settled}."
        if board.num_columns == 1 or board.rules.short_session:
            totals = board.columns.sum(axis=1)
            return (f"{head}: {names[winner]} wins, {int(totals[winner])} to "
                    f"{int(totals[1 - winner])}{settled}.")
        return f"{head}: {names[winner]} wins, {won[winner]} columns to {won[1 - winner]}{settled}."

    def abandoned(self, reason: str) -> list[str]:
        m = self.match
        return [f"Match abandoned ({reason}) in hand {m.hand_number}, after "
                f"{len(m.hand_history)} finished hand(s).", str(m.sheet)]

    def replay_header(self, path: str, actions: int) -> str:
        m = self.match
        return (f"Replaying {path}: rules '{m.rules.name}', seed {m.seed}, {actions} actions; "
                f"{self.names[0]} vs {self.names[1]}")

    def replayed_move(self, text: str, action: int, game: Hand, player: int, before: int) -> str:
        if action == A.DRAW_STOCK:
            return text + f" ({_card((game.hands[player] & ~before).bit_length() - 1, self.symbols)})"
        if A.KNOCK <= action < A.DRAW_STOCK:
            return text + f" [{_card(A.action_card(action), self.symbols)}]"
        return text

    def replayed_deal(self, moves: bool) -> list[str]:
        game = self.match.current_game
        hands = [f"  {self.names[p]}: {grouped_hand(game.hands[p], self.symbols)}" for p in (0, 1)]
        return self.deal() + (hands if moves else [])

    def unfinished(self) -> str:
        return f"The saved match stops in hand {self.match.hand_number} (it was not finished)."


class TablesNarration(Narration):
    """Three-hand's and partnership's words: tables, who dealt and sits out, the sheet."""

    def greeting(self, human: int) -> str:
        m = self.match
        partner = f"; your partner is player_{m.partner_of(human)}" if m.format == "partnership" else ""
        return f"Hollywood Gin, {m.format}, rules '{m.rules.name}', seed {m.seed}. You are player_{human}{partner}."

    def opening(self, resumed_from: str | None) -> list[str]:
        return self.deal()

    def deal(self) -> list[str]:
        lines: list[str] = []
        for t in self.match.tables:
            lines += ["", f"=== Table {t.index}: {deal_text(t, self.names)} ==="]
        return lines

    def results(self, finished: Finished) -> list[str]:
        m = self.match
        lines: list[str] = []
        for item in finished:
            if isinstance(item, SeatHand):
                names = [f"player_{s}" for s in item.seats]  # the table's players by seat
                lines += ["", f"--- Table {item.table}: {names[0]} v {names[1]} ---",
                          render_hand_result(item.record, self.symbols, names, item.number)]
            else:
                who = "nobody (net 0)" if item.winner is None else f"team_{item.winner}"
                lines.append(f"Round {item.number + 1}: team points {item.team_points[0]}-"
                             f"{item.team_points[1]}; {who} scores {item.points}")
        if any(isinstance(i, RoundResult) for i in finished) or m.format == "three_hand":
            lines.append(str(m.sheet))
        return lines

    def winner(self) -> str:
        """Which seat or team won; a settling profile (004) adds the settlement."""
        m, names = self.match, self.names
        if m.truncated:
            return "Match stopped at the rules' max_hands cap: no winner."
        w = m.match_winner
        settled = f"; {m.sheet.settlement_text()}" if m.sheet.is_settled else ""
        if w is None:
            return f"Match over: a draw{settled}."
        if m.format == "partnership":
            a, b = m.teams[w]  # type: ignore[index]
            return f"Match over: team_{w} ({names[a]} and {names[b]}) wins{settled}."
        return f"Match over: {names[w]} wins{settled}."

    def abandoned(self, reason: str) -> list[str]:
        m = self.match
        return [f"Match abandoned ({reason}) after {len(m.hand_history)} hand(s).", str(m.sheet)]

    def replay_header(self, path: str, actions: int) -> str:
        m = self.match
        return (f"Replaying {path}: {m.format}, rules '{m.rules.name}', seed {m.seed}, {actions} actions; "
                + ", ".join(self.names))

    def unfinished(self) -> str:
        return "The saved match stops here (it was not finished)."


def narration_for(match: Match, names: Sequence[str], symbols: bool) -> Narration:
    """The words of ``match``'s format."""
    kind = DuelNarration if match.format == "duel" else TablesNarration
    return kind(match, names, symbols)
