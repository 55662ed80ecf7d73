"""The batched engine's seating layer: how each format puts its seats at the tables of
:mod:`hgin_env.batch.tables`, deals, and turns a finished hand into a sheet entry.

Every rule here is the scalar :class:`~hgin_env.match.Match`'s, called from
:mod:`hgin_env.match` (not a second copy): the first dealer (``first_dealer_of``), each
table's deal (``draw_deal``), the three-hand
table (``three_hand_seats``, ``THREE_HAND_DEALER_PART``), the next dealer
(``Rules.next_dealer``), the partnership tables of each round (``partnership_tables``),
its round score (``round_score``) and teams (``TEAMS``), and the sheets (``new_sheet``).

- :class:`DuelSeating`: one table per match, seats = the table's players.
- :class:`ThreeHandSeating`: one table per match; the dealer sits out, the seat after
  it plays the non-dealer's part, the other the dealer's; the loser deals next, a dead
  hand is redealt by the same dealer.
- :class:`PartnershipSeating`: two tables per match (tables ``2i`` and ``2i + 1``); each
  round deals both, one team dealing at both; play alternates between the tables turn by
  turn while both run; the round's score goes on the team sheet when both hands are over.

A seating keeps its format's per-match state (who sits out, the round, its points so far)
and holds nothing of the batch: :class:`hgin_env.batch.BatchGame` passes down what a call
reads (a match's generator and the finished hand; the table state; the sheets for the
contexts) and applies what it returns (the deals to make, the sheet entry, the contexts).
So a batched step reads one way, engine -> formats -> sheets: the tables step, the seating
turns each finished hand into a :class:`SheetEntry`, and :func:`record_entry` puts it on
the match's sheet; nothing here calls back up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codes import PHASE_HAND_OVER
from ..match import (
    TEAMS,
    THREE_HAND_DEALER_PART,
    draw_deal,
    first_dealer_of,
    partnership_tables,
    round_score,
    three_hand_seats,
)
from ..observation import format_context_rows, sheet_arrays, sheet_context_rows
from ..rules import Rules
from ..sheets import Sheet
from .state import TableState


@dataclass
class Deal:
    """A hand to deal: at ``table``, from ``deck`` (52 card ids), ``dealer`` the player
    (0 or 1) with the dealer's part."""

    table: int
    deck: np.ndarray
    dealer: int


@dataclass
class SheetEntry:
    """What a finished hand (duel, three-hand) or round (partnership) puts on the sheet:
    the winning row and its points (None, 0: a dead hand or a round with a net of 0), and
    the seats that played the hand (duel, three-hand): its winner and loser."""

    row: int | None
    points: int
    winner_seat: int | None = None
    loser_seat: int | None = None


def record_entry(sheet: Sheet, entry: SheetEntry) -> list[int]:
    """Put ``entry`` on ``sheet`` (the scalar ``Match``'s calls: ``record``, or
    ``record_void`` for a dead hand or a round with a net of 0); returns the columns it
    decided. The one place a batched step writes a sheet."""
    if entry.row is None:
        sheet.record_void()
        return []
    return sheet.record(entry.row, entry.points)


class Seating:
    """The interface :class:`~hgin_env.batch.BatchGame` drives (see the module docstring):
    every method takes what it reads and returns what changes outside the seating's own
    arrays."""

    #: Tables per match.
    tables_per_match = 1
    #: Whether table ``i`` is match ``i`` and the acting table never changes.
    one_table = True

    def __init__(self, n: int, rules: Rules, engine: str = "numpy"):
        self.rules = rules
        #: The engine of the context rows ("numba": their compiled mirror; the batch's engine).
        self.engine = engine
        t = n * self.tables_per_match
        #: The seat of each table's players 0 and 1.
        self.table_seats = np.tile(np.array([0, 1], dtype=np.int64), (t, 1))
        #: The table that acts next in each match.
        self.acting_table = np.arange(n) * self.tables_per_match

    def row_seats(self, row: int) -> tuple[int, ...]:
        """The seats of a sheet row: a player, or a partnership's team."""
        return (row,)

    def start(self, i: int, rng: np.random.Generator) -> list[Deal]:
        """Match ``i`` starts (``rng`` its fresh generator, its sheet fresh): draw the first
        dealer and return its first deal(s)."""
        raise NotImplementedError

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None, points: int,
                  state: TableState) -> SheetEntry | None:
        """The hand at table ``t`` of match ``i`` ended (``winner``/``loser`` seats, None for
        a dead hand): the entry for the sheet, or None if the sheet waits (a partnership
        table whose partner table plays on: the batch marks the table ``PHASE_HAND_OVER``
        until the round's next deal)."""
        raise NotImplementedError

    def next_deals(self, i: int, entry: SheetEntry, rng: np.random.Generator, state: TableState) -> list[Deal]:
        """The deal(s) after ``entry`` when match ``i`` goes on (``rng`` its generator)."""
        raise NotImplementedError

    def after_moves(self, moved: np.ndarray, player_before: np.ndarray, state: TableState) -> None:
        """After a step, matches ``moved`` whose hand went on: switch the acting table where
        the format alternates tables."""

    def contexts(self, idx: np.ndarray, sheets: list[Sheet], state: TableState,
                 hands_played: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The observation contexts of matches ``idx`` (``sheets[k]`` match ``idx[k]``'s
        sheet; ``hands_played`` every match's finished hands): float32 [k, seats, ...]
        (every seat's part after the table slices) and the sheets' column totals
        (int64 [k, rows, C]), recomputed after their sheet or seating changed; the batch
        stores them."""
        raise NotImplementedError


class DuelSeating(Seating):
    """The duel: match ``i`` is table ``i``, seat ``p`` is player ``p`` of every hand."""

    def start(self, i: int, rng: np.random.Generator) -> list[Deal]:
        dealer = first_dealer_of(self.rules, rng)
        return [Deal(i, draw_deal(rng, "duel"), dealer)]

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None, points: int,
                  state: TableState) -> SheetEntry:
        return SheetEntry(None, 0) if winner is None else SheetEntry(winner, points, winner, loser)

    def next_deals(self, i: int, entry: SheetEntry, rng: np.random.Generator, state: TableState) -> list[Deal]:
        dealer = self.rules.next_dealer(int(state.dealer[i]), entry.winner_seat, entry.loser_seat)
        return [Deal(i, draw_deal(rng, "duel"), dealer)]

    def contexts(self, idx: np.ndarray, sheets: list[Sheet], state: TableState,
                 hands_played: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        columns, wins, winners = sheet_arrays(sheets)
        k = idx.size
        both = np.concatenate([np.zeros(k, dtype=np.int64), np.ones(k, dtype=np.int64)])
        ctx = sheet_context_rows(np.concatenate([columns, columns]), np.concatenate([wins, wins]),
                                 np.concatenate([winners, winners]), both, 1 - both, self.rules.target,
                                 engine=self.engine)
        return ctx.reshape(2, k, -1).swapaxes(0, 1), columns


class ThreeHandSeating(Seating):
    """Three-hand (RULES.md §13): one table; ``sitting_out[i]`` is match ``i``'s dealer."""

    def __init__(self, n: int, rules: Rules, engine: str = "numpy"):
        super().__init__(n, rules, engine)
        self.sitting_out = np.zeros(n, dtype=np.int64)

    def _deal(self, i: int, dealer: int, rng: np.random.Generator) -> list[Deal]:
        self.sitting_out[i] = dealer
        self.table_seats[i] = three_hand_seats(dealer)
        deck = draw_deal(rng, self.rules.format)
        return [Deal(i, deck, THREE_HAND_DEALER_PART)]

    def start(self, i: int, rng: np.random.Generator) -> list[Deal]:
        return self._deal(i, first_dealer_of(self.rules, rng), rng)

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None, points: int,
                  state: TableState) -> SheetEntry:
        return SheetEntry(None, 0) if winner is None else SheetEntry(winner, points, winner, loser)

    def next_deals(self, i: int, entry: SheetEntry, rng: np.random.Generator, state: TableState) -> list[Deal]:
        dealer = self.rules.next_dealer(int(self.sitting_out[i]), entry.winner_seat, entry.loser_seat)
        return self._deal(i, dealer, rng)

    def contexts(self, idx: np.ndarray, sheets: list[Sheet], state: TableState,
                 hands_played: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = idx.size
        columns, wins, winners = sheet_arrays(sheets)
        seat = np.repeat(np.arange(3), k)  # rows: every match's seat 0, then seat 1, then 2
        rows = np.tile(np.arange(k), 3)
        seats = self.table_seats[idx][rows]  # the table's two seats, per row
        opponent = np.where(seats[:, 0] == seat, seats[:, 1], np.where(seats[:, 1] == seat, seats[:, 0], -1))
        ctx = format_context_rows("three_hand", columns[rows], wins[rows], winners[rows], self.rules.target,
                                  seat, opponent=opponent, sitting_out=self.sitting_out[idx][rows],
                                  hands_played=hands_played[idx][rows], engine=self.engine)
        return ctx.reshape(3, k, -1).swapaxes(0, 1), columns


class PartnershipSeating(Seating):
    """Partnership (RULES.md §13): tables ``2i`` and ``2i + 1``, teams ``TEAMS``; the state
    of each match's round (``round_number``, ``dealing_team``, ``round_points``: the points
    each team won in the finished hands of the round)."""

    tables_per_match = 2
    one_table = False

    def __init__(self, n: int, rules: Rules, engine: str = "numpy"):
        super().__init__(n, rules, engine)
        self.round_number = np.zeros(n, dtype=np.int64)
        self.dealing_team = np.zeros(n, dtype=np.int64)
        self.round_points = np.zeros((n, 2), dtype=np.int64)
        #: Round scores each team put on the sheet this match (for the summaries).
        self.team_points = np.zeros((n, 2), dtype=np.int64)

    def row_seats(self, row: int) -> tuple[int, ...]:
        return TEAMS[row]

    def _deal_round(self, i: int, rng: np.random.Generator) -> list[Deal]:
        deals = []
        for k, seats in enumerate(partnership_tables(int(self.round_number[i]))):
            self.table_seats[2 * i + k] = seats
            deck = draw_deal(rng, self.rules.format)
            deals.append(Deal(2 * i + k, deck, int(self.dealing_team[i])))
        self.acting_table[i] = 2 * i
        self.round_points[i] = 0
        return deals

    def start(self, i: int, rng: np.random.Generator) -> list[Deal]:
        self.round_number[i] = 0
        self.team_points[i] = 0
        self.dealing_team[i] = first_dealer_of(self.rules, rng)
        return self._deal_round(i, rng)

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None, points: int,
                  state: TableState) -> SheetEntry | None:
        if winner is not None:
            self.round_points[i, winner % 2] += points
        other = t ^ 1
        if state.phase[other] != PHASE_HAND_OVER:  # the other table plays on: it acts next
            self.acting_table[i] = other
            return None
        team, net = round_score(self.round_points[i])
        if team is None:
            return SheetEntry(None, 0)
        self.team_points[i, team] += net
        return SheetEntry(team, net)

    def next_deals(self, i: int, entry: SheetEntry, rng: np.random.Generator, state: TableState) -> list[Deal]:
        self.round_number[i] += 1
        self.dealing_team[i] = 1 - self.dealing_team[i]
        return self._deal_round(i, rng)

    def after_moves(self, moved: np.ndarray, player_before: np.ndarray, state: TableState) -> None:
        """``Match._next_table``: after a turn (the acting player at the table changed:
        a discard, or a pass on the first upcard) the other table acts, while it runs."""
        t = self.acting_table[moved]
        other = t ^ 1
        phase = state.phase
        switch = (state.current_player[t] != player_before) & (phase[other] != PHASE_HAND_OVER) \
            & (phase[t] != PHASE_HAND_OVER)
        self.acting_table[moved[switch]] = other[switch]

    def contexts(self, idx: np.ndarray, sheets: list[Sheet], state: TableState,
                 hands_played: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = idx.size
        columns, wins, winners = sheet_arrays(sheets)
        seat = np.repeat(np.arange(4), k)
        rows = np.tile(np.arange(k), 4)
        match = idx[rows]
        partner = (seat + 2) % 4
        first = 2 * match
        partner_table = np.where((self.table_seats[first] == partner[:, None]).any(axis=1), first, first + 1)
        ctx = format_context_rows("partnership", columns[rows], wins[rows], winners[rows], self.rules.target,
                                  seat, partner_running=state.phase[partner_table] != PHASE_HAND_OVER,
                                  round_points=self.round_points[match], round_number=self.round_number[match],
                                  engine=self.engine)
        return ctx.reshape(4, k, -1).swapaxes(0, 1), columns


SEATINGS: dict[str, type[Seating]] = {"duel": DuelSeating, "three_hand": ThreeHandSeating,
                                      "partnership": PartnershipSeating}
