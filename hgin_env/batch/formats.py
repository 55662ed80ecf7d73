"""The batched engine's seating layer: how each format puts its seats at the tables of
:mod:`hgin_env.batch.tables`, deals, and turns a finished hand into a sheet entry.

Every rule here is the scalar :class:`~hgin_env.match.Match`'s, called from
:mod:`hgin_env.match` (not a second copy): the first dealer (``first_dealer_of``), each
table's deal (``draw_deal``; the duel's ``Game`` draws only the deck), the three-hand
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
and is driven by :class:`hgin_env.batch.BatchGame`, which owns the generic match state
(generators, sheets, tallies, the acting seat), the table state and the step. A seating
reads the batch's arrays and writes only its own: what changes in the batch it returns (the
deals to make, the sheet entry, the contexts), and the batch applies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..cards import NUM_CARDS
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


class MatchArrays(Protocol):
    """What a seating reads of the batch that drives it: the tables' arrays
    (:class:`~hgin_env.batch.state.TableState`) and the matches' sheets and generators
    (it records hands on the sheets and draws deals from the generators).
    :class:`~hgin_env.batch.BatchGame` is the one implementation; naming the interface here,
    not that class, keeps this module below ``core``."""

    n: int
    rules: Rules
    boards: list[Sheet]
    rngs: list[np.random.Generator]
    phase: np.ndarray
    current_player: np.ndarray
    hands_played: np.ndarray


@dataclass
class Deal:
    """A hand to deal: at ``table``, from ``deck`` (52 card ids), ``dealer`` the player
    (0 or 1) with the dealer's part."""

    table: int
    deck: np.ndarray
    dealer: int


@dataclass
class SheetEntry:
    """What a finished hand (duel, three-hand) or round (partnership) put on the sheet:
    the winning row and its points (None, 0: a dead hand or a round with a net of 0), the
    columns it decided, and the seats of each row."""

    row: int | None
    points: int
    decided: list[int]
    #: The seats that played the hand (duel, three-hand): its winner and loser.
    winner_seat: int | None = None
    loser_seat: int | None = None


class Seating:
    """The interface :class:`~hgin_env.batch.BatchGame` drives (see the module docstring)."""

    #: Tables per match.
    tables_per_match = 1
    #: Whether table ``i`` is match ``i`` and the acting table never changes.
    one_table = True

    def __init__(self, batch: MatchArrays):
        self.batch = batch
        n = batch.n
        t = n * self.tables_per_match
        #: The seat of each table's players 0 and 1.
        self.table_seats = np.tile(np.array([0, 1], dtype=np.int64), (t, 1))
        #: The table that acts next in each match.
        self.acting_table = np.arange(n) * self.tables_per_match

    def row_seats(self, row: int) -> tuple[int, ...]:
        """The seats of a sheet row: a player, or a partnership's team."""
        return (row,)

    def start(self, i: int) -> list[Deal]:
        """Match ``i`` starts (its generator and sheet are fresh): draw the first dealer and
        return its first deal(s)."""
        raise NotImplementedError

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None,
                  points: int) -> SheetEntry | None:
        """The hand at table ``t`` of match ``i`` ended (``winner``/``loser`` seats, None for
        a dead hand): record it on the sheet and return the entry, or None if the sheet
        waits (a partnership table whose partner table plays on: the batch marks the table
        ``PHASE_HAND_OVER`` until the round's next deal)."""
        raise NotImplementedError

    def next_deals(self, i: int, entry: SheetEntry) -> list[Deal]:
        """The deal(s) after ``entry`` when match ``i`` goes on."""
        raise NotImplementedError

    def after_moves(self, moved: np.ndarray, player_before: np.ndarray) -> None:
        """After a step, matches ``moved`` whose hand went on: switch the acting table where
        the format alternates tables."""

    def contexts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The observation contexts of matches ``idx`` (float32 [k, seats, ...]: every seat's
        part after the table slices) and their sheets' column totals (int64 [k, rows, C]),
        recomputed after their sheet or seating changed; the batch stores them."""
        raise NotImplementedError


class DuelSeating(Seating):
    """The duel: match ``i`` is table ``i``, seat ``p`` is player ``p`` (``Game``)."""

    def start(self, i: int) -> list[Deal]:
        rng = self.batch.rngs[i]
        dealer = first_dealer_of(self.batch.rules, rng)
        return [Deal(i, rng.permutation(NUM_CARDS), dealer)]

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None,
                  points: int) -> SheetEntry:
        board = self.batch.boards[i]
        if winner is None:
            board.record_dead()
            return SheetEntry(None, 0, [])
        return SheetEntry(winner, points, board.record(winner, points), winner, loser)

    def next_deals(self, i: int, entry: SheetEntry) -> list[Deal]:
        batch = self.batch
        dealer = batch.rules.next_dealer(int(batch.dealer[i]), entry.winner_seat, entry.loser_seat)
        return [Deal(i, batch.rngs[i].permutation(NUM_CARDS), dealer)]

    def contexts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        batch = self.batch
        columns, wins, winners = sheet_arrays([batch.boards[i] for i in idx])
        k = idx.size
        both = np.concatenate([np.zeros(k, dtype=np.int64), np.ones(k, dtype=np.int64)])
        ctx = sheet_context_rows(np.concatenate([columns, columns]), np.concatenate([wins, wins]),
                                 np.concatenate([winners, winners]), both, 1 - both, batch.rules.target)
        return ctx.reshape(2, k, -1).swapaxes(0, 1), columns


class ThreeHandSeating(Seating):
    """Three-hand (RULES.md §13): one table; ``sitting_out[i]`` is match ``i``'s dealer."""

    def __init__(self, batch: MatchArrays):
        super().__init__(batch)
        self.sitting_out = np.zeros(batch.n, dtype=np.int64)

    def _deal(self, i: int, dealer: int) -> list[Deal]:
        self.sitting_out[i] = dealer
        self.table_seats[i] = three_hand_seats(dealer)
        deck, _ = draw_deal(self.batch.rngs[i])
        return [Deal(i, deck, THREE_HAND_DEALER_PART)]

    def start(self, i: int) -> list[Deal]:
        return self._deal(i, first_dealer_of(self.batch.rules, self.batch.rngs[i]))

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None,
                  points: int) -> SheetEntry:
        sheet = self.batch.boards[i]
        if winner is None:
            sheet.record_void()
            return SheetEntry(None, 0, [])
        return SheetEntry(winner, points, sheet.record(winner, points), winner, loser)

    def next_deals(self, i: int, entry: SheetEntry) -> list[Deal]:
        dealer = self.batch.rules.next_dealer(int(self.sitting_out[i]), entry.winner_seat, entry.loser_seat)
        return self._deal(i, dealer)

    def contexts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        batch = self.batch
        k = idx.size
        columns, wins, winners = sheet_arrays([batch.boards[i] for i in idx])
        seat = np.repeat(np.arange(3), k)  # rows: every match's seat 0, then seat 1, then 2
        rows = np.tile(np.arange(k), 3)
        seats = self.table_seats[idx][rows]  # the table's two seats, per row
        opponent = np.where(seats[:, 0] == seat, seats[:, 1], np.where(seats[:, 1] == seat, seats[:, 0], -1))
        ctx = format_context_rows("three_hand", columns[rows], wins[rows], winners[rows], batch.rules.target,
                                  seat, opponent=opponent, sitting_out=self.sitting_out[idx][rows],
                                  hands_played=batch.hands_played[idx][rows])
        return ctx.reshape(3, k, -1).swapaxes(0, 1), columns


class PartnershipSeating(Seating):
    """Partnership (RULES.md §13): tables ``2i`` and ``2i + 1``, teams ``TEAMS``; the state
    of each match's round (``round_number``, ``dealing_team``, ``round_points``: the points
    each team won in the finished hands of the round)."""

    tables_per_match = 2
    one_table = False

    def __init__(self, batch: MatchArrays):
        super().__init__(batch)
        n = batch.n
        self.round_number = np.zeros(n, dtype=np.int64)
        self.dealing_team = np.zeros(n, dtype=np.int64)
        self.round_points = np.zeros((n, 2), dtype=np.int64)
        #: Round scores each team put on the sheet this match (for the summaries).
        self.team_points = np.zeros((n, 2), dtype=np.int64)

    def row_seats(self, row: int) -> tuple[int, ...]:
        return TEAMS[row]

    def _deal_round(self, i: int) -> list[Deal]:
        rng = self.batch.rngs[i]
        deals = []
        for k, seats in enumerate(partnership_tables(int(self.round_number[i]))):
            self.table_seats[2 * i + k] = seats
            deck, _ = draw_deal(rng)
            deals.append(Deal(2 * i + k, deck, int(self.dealing_team[i])))
        self.acting_table[i] = 2 * i
        self.round_points[i] = 0
        return deals

    def start(self, i: int) -> list[Deal]:
        self.round_number[i] = 0
        self.team_points[i] = 0
        self.dealing_team[i] = first_dealer_of(self.batch.rules, self.batch.rngs[i])
        return self._deal_round(i)

    def hand_over(self, i: int, t: int, winner: int | None, loser: int | None,
                  points: int) -> SheetEntry | None:
        batch = self.batch
        if winner is not None:
            self.round_points[i, winner % 2] += points
        other = t ^ 1
        if batch.phase[other] != PHASE_HAND_OVER:  # the other table plays on: it acts next
            self.acting_table[i] = other
            return None
        team, net = round_score(self.round_points[i])
        sheet = batch.boards[i]
        if team is None:
            sheet.record_void()
            return SheetEntry(None, 0, [])
        self.team_points[i, team] += net
        return SheetEntry(team, net, sheet.record(team, net))

    def next_deals(self, i: int, entry: SheetEntry) -> list[Deal]:
        self.round_number[i] += 1
        self.dealing_team[i] = 1 - self.dealing_team[i]
        return self._deal_round(i)

    def after_moves(self, moved: np.ndarray, player_before: np.ndarray) -> None:
        """``Match._next_table``: after a turn (the acting player at the table changed:
        a discard, or a pass on the first upcard) the other table acts, while it runs."""
        batch = self.batch
        t = self.acting_table[moved]
        other = t ^ 1
        switch = (batch.current_player[t] != player_before) & (batch.phase[other] != PHASE_HAND_OVER) \
            & (batch.phase[t] != PHASE_HAND_OVER)
        self.acting_table[moved[switch]] = other[switch]

    def contexts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        batch = self.batch
        k = idx.size
        columns, wins, winners = sheet_arrays([batch.boards[i] for i in idx])
        seat = np.repeat(np.arange(4), k)
        rows = np.tile(np.arange(k), 4)
        match = idx[rows]
        partner = (seat + 2) % 4
        first = 2 * match
        partner_table = np.where((self.table_seats[first] == partner[:, None]).any(axis=1), first, first + 1)
        ctx = format_context_rows("partnership", columns[rows], wins[rows], winners[rows], batch.rules.target,
                                  seat, partner_running=batch.phase[partner_table] != PHASE_HAND_OVER,
                                  round_points=self.round_points[match], round_number=self.round_number[match])
        return ctx.reshape(4, k, -1).swapaxes(0, 1), columns


SEATINGS: dict[str, type[Seating]] = {"duel": DuelSeating, "three_hand": ThreeHandSeating,
                                      "partnership": PartnershipSeating}
