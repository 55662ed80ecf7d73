"""A match's seats and tables for every format (RULES.md §13): who plays at which table,
who deals, who sits out, who acts next, and the results and rewards per seat.

Every hand is a two-player :class:`~hgin_env.game.Hand` between two seats at one table;
this module only decides who sits where and how hand results reach the sheets.

- ``duel`` (2 seats, 1 table): seat ``p`` is player ``p`` of every hand; the loser deals
  the next hand (``Rules.next_dealer``), a dead hand is redealt by the same dealer. The
  sheet is a :class:`~hgin_env.scoring.Scoreboard`, which each ``Hand`` records its result
  onto (so its record names the columns it decided). ``single_hand=True`` plays one hand,
  ``deck`` stacks the first.
- ``three_hand`` (3 seats, 1 table): the dealer sits out; the seat after the dealer is the
  non-dealer, the other plays the dealer's part; the loser of a hand deals the next, a
  dead hand is redealt by the same dealer. One :class:`~hgin_env.sheets.Sheet` row per
  player.
- ``partnership`` (4 seats, 2 tables, teams {0, 2} and {1, 3}): each round is two hands at
  once, one per table, each with its own deck; even rounds 0 v 1 and 2 v 3, odd rounds
  0 v 3 and 2 v 1; play alternates between the tables turn by turn while both run; one
  team deals at both tables, and the dealing team alternates every round. One sheet row
  per team, fed with the round score of source 004.

Every random choice (first dealer, every deck) comes from one generator seeded by
``seed``. Use :attr:`Match.current_seat`, :meth:`Match.legal_actions` /
:meth:`Match.legal_action_mask` and :meth:`Match.apply`; the acting seat's own view of
its hand is :meth:`Match.seat_view` (the table's hand and the seat's player index
there). The engine knows no observers: a seat's observation dict is
:func:`hgin_env.observation.observe` ``(match, seat)``, and :func:`hgin_env.loop.run_match`
is the one loop that plays policies on those dicts against each other (the tournament, the
soak, ``hgin play`` and imitation recording all use it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from . import actions as A
from .cards import NUM_CARDS
from .game import (
    Hand,
    HandRecord,
    checked_seed,
    cut_for_deal,
    draw_first_dealer,
    draw_seed,
    stacked_deck,
)
from .rules import Rules, get_rules
from .scoring import Scoreboard
from .sheets import Sheet

#: Partnership teams: seat -> team is ``seat % 2``.
TEAMS: tuple[tuple[int, int], tuple[int, int]] = ((0, 2), (1, 3))


def partnership_tables(round_number: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two tables of a partnership round as (team-0 seat, team-1 seat) pairs: even
    rounds 0 v 1 and 2 v 3, odd rounds 0 v 3 and 2 v 1 (RULES.md §13)."""
    if round_number % 2 == 0:
        return (0, 1), (2, 3)
    return (0, 3), (2, 1)


def match_outcome(num_players: int, winning_seats: tuple[int, ...]) -> tuple[float, ...]:
    """THE match outcome per seat (OpenSpiel style, zero-sum), of ``Match.returns`` and the
    batched engine alike: +1 to each winning seat, the losers sharing the winners' total
    (duel −1; three-hand −1/2 each; partnership −1 each partner); 0 for all without winners
    (a draw or a truncated match)."""
    if not winning_seats:
        return (0.0,) * num_players
    lose = -len(winning_seats) / (num_players - len(winning_seats))
    return tuple(1.0 if s in winning_seats else lose for s in range(num_players))


def round_score(team_points: tuple[int, int] | list[int]) -> tuple[int | None, int]:
    """Source 004's round score from the hand points each team won this round (a team
    wins at most both hands, a dead hand adds nothing): (winning team, net points), or
    (None, 0) when the net is 0. Both hands won by one team: the sum; one each: the
    difference, to the team with the larger hand score."""
    net = int(team_points[0]) - int(team_points[1])
    if net == 0:
        return None, 0
    return (0, net) if net > 0 else (1, -net)


def three_hand_seats(dealer: int) -> tuple[int, int]:
    """The two seats at the table (players 0 and 1 of its ``Hand``) when ``dealer`` deals a
    three-hand hand and sits it out: the seat after the dealer (the non-dealer, first card
    and first option on the upcard), then the other one, who plays the dealer's part
    (:data:`THREE_HAND_DEALER_PART`)."""
    return (dealer + 1) % 3, (dealer + 2) % 3


#: The player of a three-hand table's ``Hand`` who plays the dealer's part (its
#: ``dealer``): the second seat of :func:`three_hand_seats`.
THREE_HAND_DEALER_PART = 1


def first_dealer_of(rules: Rules, rng: np.random.Generator) -> int:
    """The first dealer drawn from a match's generator: a seat (duel, three-hand) or the
    dealing team (partnership: the team of the seat that cuts lowest of four)."""
    if rules.format == "partnership":
        return cut_for_deal(rng, 4) % 2 if rules.first_dealer == "cut" else int(rng.integers(2))
    return draw_first_dealer(rules.first_dealer, rng, rules.num_players)


def draw_deal(rng: np.random.Generator, format: str) -> np.ndarray:
    """One table's deck, drawn from its match's generator (dealt as
    :class:`~hgin_env.game.Hand` deals it), the one place every format's deals are drawn
    (the scalar :class:`Match` and the batched engine): a permutation of the 52 cards. A
    three-hand or partnership table then draws one integer more, not used: those tables
    were once ``Game``s seeded from it, and the draw stays so that every seed keeps dealing
    the matches it dealt (the recorded figures were played on those deals)."""
    deck = rng.permutation(NUM_CARDS)
    if format != "duel":
        rng.integers(2**32)
    return deck


def new_sheet(rules: Rules) -> Sheet:
    """A match's empty sheet: the duel's two-row :class:`~hgin_env.scoring.Scoreboard`, one
    row per three-hand player (``player_i``), one per partnership team (``team_i``)."""
    if rules.format == "three_hand":
        return Sheet(rules, 3, tuple(f"player_{i}" for i in range(3)))
    if rules.format == "partnership":
        return Sheet(rules, 2, ("team_0", "team_1"))
    return Scoreboard(rules)


@dataclass
class Table:
    """One table: two seats playing one ``Hand`` (``seats[p]`` plays player p)."""

    index: int
    seats: tuple[int, int]
    game: Hand
    #: The seat sitting this hand out (three-hand), else None.
    sitting_out: int | None = None

    @property
    def running(self) -> bool:
        return not self.game.is_over

    @property
    def dealer(self) -> int:
        """The seat that dealt the current (or last) hand: in three-hand the seat sitting
        out (its ``Hand`` gives the dealer's part to the second player)."""
        if self.sitting_out is not None:
            return self.sitting_out
        return self.seats[self.game.dealer]

    @property
    def non_dealer(self) -> int:
        """The seat with the first card and the first option on the upcard."""
        return self.seats[1 - self.game.dealer]

    @property
    def current_seat(self) -> int:
        return self.seats[self.game.current_player]

    def player_of(self, seat: int) -> int:
        """The seat's player index (0 or 1) in this table's ``Hand``."""
        if seat not in self.seats:
            raise ValueError(f"seat {seat} does not play at table {self.index} (seats {self.seats})")
        return self.seats.index(seat)

    def opponent_of(self, seat: int) -> int:
        return self.seats[1 - self.player_of(seat)]


@dataclass(frozen=True)
class SeatHand:
    """One finished hand in seat terms. ``record`` is the table's ``HandRecord``, whose
    players are the table's 0/1 (``seats[p]`` is player p's seat)."""

    #: 1-based count of hands in the match.
    number: int
    table: int
    seats: tuple[int, int]
    #: The seat that dealt (in three-hand the seat sitting out).
    dealer: int
    #: Partnership round (0-based), else None.
    round: int | None
    sitting_out: int | None
    knocker: int | None
    winner: int | None
    loser: int | None
    points: int
    record: HandRecord

    @property
    def kind(self) -> str:
        return self.record.kind

    def to_dict(self) -> dict:
        return {"number": self.number, "table": self.table, "seats": list(self.seats),
                "dealer": self.dealer, "round": self.round, "sitting_out": self.sitting_out,
                "knocker": self.knocker, "winner": self.winner, "loser": self.loser,
                "points": self.points, "kind": self.kind, "result": self.record.result.to_dict()}


@dataclass(frozen=True)
class RoundResult:
    """A finished partnership round: both tables' hands and source 004's team score."""

    number: int
    dealing_team: int
    hands: tuple[SeatHand, SeatHand]
    #: Hand points won by each team this round.
    team_points: tuple[int, int]
    #: Team that scored the round (None: net 0, nobody's win).
    winner: int | None
    points: int
    columns_decided: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"number": self.number, "dealing_team": self.dealing_team,
                "hands": [h.to_dict() for h in self.hands],
                "team_points": list(self.team_points), "winner": self.winner,
                "points": self.points, "columns_decided": list(self.columns_decided)}


@dataclass
class Match:
    """A whole match of any format. ``first_dealer`` fixes the first dealing seat (duel,
    three-hand) or dealing team (partnership) instead of drawing it."""

    rules: Rules | str | dict | None = None
    seed: int | None = None
    first_dealer: int | None = None
    #: Duel only: play one hand, and stack its first deck (52 card ids or text).
    single_hand: bool = False
    deck: list[int] | None = None

    tables: list[Table] = field(init=False)
    sheet: Sheet = field(init=False)
    hand_history: list[SeatHand] = field(init=False)
    #: Partnership rounds played so far.
    round_history: list[RoundResult] = field(init=False)
    #: Every action applied, in order (with the seed, it replays the match).
    action_history: list[int] = field(init=False)
    #: Partnership: the current round (0-based) and the team dealing it.
    round_number: int = field(init=False, default=0)
    dealing_team: int | None = field(init=False, default=None)
    #: The table whose hand acts next.
    current_table: int = field(init=False, default=0)
    #: Per-seat rewards of the last ``apply`` (zero-sum; see :meth:`apply`).
    last_rewards: np.ndarray = field(init=False)
    truncated: bool = field(init=False, default=False)
    rng: np.random.Generator = field(init=False, repr=False)
    _over: bool = field(init=False, default=False)
    _paid: bool = field(init=False, default=False, repr=False)
    #: The notebook display (Jupyter calls ``_repr_html_`` when a match is a cell's value):
    #: installed by the render layer (:func:`hgin_env.render.text.match_html`, which
    #: ``import hgin_env`` loads); the engine itself draws nothing.
    _repr_html_: ClassVar[Callable[[Match], str] | None] = None

    def __post_init__(self) -> None:
        self.rules = get_rules(self.rules)
        self.hand_history = []
        self.round_history = []
        self.action_history = []
        self.last_rewards = np.zeros(self.num_players, dtype=np.float64)
        fmt = self.rules.format
        if fmt != "duel" and (self.single_hand or self.deck is not None):
            raise ValueError(f"single_hand and deck are options of the duel only, not of "
                             f"format={fmt!r}")
        limit = 2 if fmt == "partnership" else self.num_players
        if self.first_dealer is not None and (
                isinstance(self.first_dealer, bool | np.bool_)
                or not isinstance(self.first_dealer, int | np.integer)
                or not 0 <= self.first_dealer < limit):
            what = "a team, 0 or 1" if fmt == "partnership" else f"a seat in 0..{limit - 1}"
            raise ValueError(f"first_dealer for format={fmt!r} must be None or {what}, "
                             f"got {self.first_dealer!r}")
        first_deck = None if self.deck is None else stacked_deck(self.deck)
        self.seed = checked_seed(self.seed)
        if self.seed is None:
            self.seed = draw_seed()  # recorded: an unseeded match still replays from its seed
        self.rng = np.random.default_rng(self.seed)
        self.sheet = new_sheet(self.rules)
        first = int(self.first_dealer) if self.first_dealer is not None else \
            first_dealer_of(self.rules, self.rng)
        self.tables = []
        if fmt == "duel":
            self._deal_duel(first, first_deck)
        elif fmt == "three_hand":
            self._deal_three_hand(first)
        else:
            self.dealing_team = first
            self._deal_round()

    # ------------------------------------------------------------------ seats
    @property
    def format(self) -> str:
        return self.rules.format

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def num_tables(self) -> int:
        return 2 if self.rules.format == "partnership" else 1

    @property
    def teams(self) -> tuple[tuple[int, int], ...] | None:
        """Partnership teams (seats), else None."""
        return TEAMS if self.format == "partnership" else None

    def team_of(self, seat: int) -> int:
        self._check_seat(seat)
        if self.format != "partnership":
            raise ValueError(f"format={self.format!r} has no teams")
        return seat % 2

    def partner_of(self, seat: int) -> int:
        return TEAMS[self.team_of(seat)][1 - seat // 2]

    def sheet_row(self, seat: int) -> int:
        """The seat's row on the sheet: its team in a partnership, else the seat."""
        self._check_seat(seat)
        return seat % 2 if self.format == "partnership" else seat

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int | np.integer) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be an int in 0..{self.num_players - 1}, got {seat!r}")

    @property
    def sitting_out(self) -> int | None:
        """The seat sitting this hand out (three-hand), else None."""
        return self.tables[0].sitting_out

    @property
    def hand_number(self) -> int:
        """1-based number in the match of the latest hand dealt (the hand at the table in a
        duel or three-hand, the last hand once the match is over; a partnership round deals
        two, this counts both). A format table's ``Hand`` is numbered 1."""
        return len(self.hand_history) + sum(t.running for t in self.tables)

    def table_of(self, seat: int) -> int | None:
        """The table the seat plays at this hand (None: sitting out)."""
        self._check_seat(seat)
        for table in self.tables:
            if seat in table.seats:
                return table.index
        return None

    def seat_view(self, seat: int) -> tuple[Hand, int] | None:
        """The seat's table's ``Hand`` and its player index there (None: sitting out)."""
        index = self.table_of(seat)
        if index is None:
            return None
        table = self.tables[index]
        return table.game, table.player_of(seat)

    def seat_context(self, seat: int) -> dict:
        """What the seat knows of the match beyond its own table (RULES.md §13): its
        table and opponent (None while sitting out), who sits out, its partner and whether
        the partner's hand is still running (partnership), its sheet row, the round."""
        index = self.table_of(seat)
        table = None if index is None else self.tables[index]
        partnership = self.format == "partnership"
        partner = self.partner_of(seat) if partnership else None
        return {
            "seat": seat, "format": self.format, "table": index,
            "opponent": None if table is None else table.opponent_of(seat),
            "dealer": None if table is None else table.dealer,
            "sitting_out": self.sitting_out, "partner": partner,
            "partner_running": None if partner is None else
            self.tables[self.table_of(partner)].running,
            "row": self.sheet_row(seat),
            "round": self.round_number if partnership else None,
            "hand": len(self.hand_history) + (0 if self.is_over else 1),
        }

    # ------------------------------------------------------------------ acting
    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def current_seat(self) -> int | None:
        """The seat that acts next (None once the match is over)."""
        if self.is_over:
            return None
        return self.tables[self.current_table].current_seat

    @property
    def current_game(self) -> Hand:
        """The ``Hand`` of the table that acts next (the last hand once the match is over)."""
        return self.tables[self.current_table].game

    def legal_actions(self) -> list[int]:
        """Legal action ids of the acting seat (empty once the match is over)."""
        if self.is_over:
            return []
        return self.current_game.legal_actions()

    def legal_action_mask(self, seat: int | None = None) -> np.ndarray:
        """The acting seat's mask; for any other ``seat`` (waiting, sitting out, or the
        match over) all zeros."""
        if self.is_over or (seat is not None and seat != self.current_seat):
            return np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        return self.current_game.legal_action_mask()

    def apply(self, action: int, checked: bool = False) -> list[SeatHand | RoundResult]:
        """Apply the acting seat's action. Returns what it finished: the hand (and, in a
        partnership, the round) when it ended one, else an empty list.

        One path for every format (the duel is the two-seat, one-table case): the acting
        table's ``Hand`` plays the action, a finished hand goes to the format's bookkeeping.
        An illegal action raises ``ValueError`` naming the seat and the legal actions, and
        changes nothing; ``checked=True`` says the caller checked it already (the
        environments do, once per action) and it is trusted.

        ``last_rewards`` then holds each seat's reward for this step, zero-sum: at the end
        of a hand (duel, three-hand) the winner +points, the loser −points, a seat sitting
        out 0; at the end of a partnership round each partner of the scoring team +net,
        each of the other −net; 0 otherwise (dead hands, net-0 rounds, mid-hand steps).
        """
        table = self.tables[self.current_table]
        game = table.game
        if not checked:  # the table's game numbers its players 0 and 1; a refusal names the seat
            if self.is_over:
                raise ValueError("the match is over; no action is legal")
            if not game.is_legal(action):  # the refusal's text is built only for a refusal
                acting = table.current_seat
                game.check_legal(action, player=f"seat {acting} (player_{acting})")
        alternating = len(self.tables) > 1  # partnership: the tables take turns
        if alternating:
            acting = table.current_seat
        record = game.apply(action, checked=True)
        self.action_history.append(int(action))
        if self._paid:  # a fresh zero array only after a paying step (speed: most steps pay 0)
            self.last_rewards = np.zeros(self.num_players, dtype=np.float64)
            self._paid = False
        if record is None:
            if alternating:
                self._next_table(table, acting)
            return []
        hand = self._seat_hand(table, record)
        self.hand_history.append(hand)
        if self.format == "duel":
            return [hand, *self._end_duel_hand(hand)]
        if self.format == "three_hand":
            return [hand, *self._end_three_hand(hand)]
        return [hand, *self._end_partnership_hand(table)]

    def _seat_hand(self, table: Table, record: HandRecord) -> SeatHand:
        seats = table.seats
        winner = None if record.winner is None else seats[record.winner]
        return SeatHand(
            number=len(self.hand_history) + 1, table=table.index, seats=seats,
            dealer=table.sitting_out if table.sitting_out is not None else seats[record.dealer],
            round=self.round_number if self.format == "partnership" else None,
            sitting_out=table.sitting_out,
            knocker=None if record.knocker is None else seats[record.knocker],
            winner=winner, loser=None if winner is None else seats[1 - record.winner],
            points=record.points, record=record)

    def _pay(self) -> np.ndarray:
        """A fresh ``last_rewards`` array to write this step's payments into."""
        self.last_rewards = np.zeros(self.num_players, dtype=np.float64)
        self._paid = True
        return self.last_rewards

    def _hand_rewards(self, hand: SeatHand) -> None:
        if hand.winner is not None:
            self._pay()
            self.last_rewards[hand.winner] = hand.points
            self.last_rewards[hand.loser] = -hand.points

    def _end_match(self, hands_or_rounds: int) -> bool:
        """THE end of a match of any format: ``Rules.match_end`` of the sheet after
        ``hands_or_rounds`` hands (a partnership: rounds; a one-hand duel ends after its
        hand); sets ``is_over`` and ``truncated`` and says whether it ended."""
        end = self.rules.match_end(self.sheet.match_over, hands_or_rounds, self.single_hand)
        if end is not None:
            self._over, self.truncated = True, end == "truncated"
        return end is not None

    # ------------------------------------------------------------------ duel
    def _deal_duel(self, dealer: int, deck: list[int] | None = None) -> None:
        """Deal the duel's next hand (``deck``: the stacked first one), recorded onto the
        sheet by the hand itself."""
        deck = draw_deal(self.rng, "duel").tolist() if deck is None else deck
        hand = Hand(self.rules, dealer=dealer, deck=deck, hand_number=len(self.hand_history) + 1,
                    scoreboard=self.sheet)  # type: ignore[arg-type]  # the duel's sheet is a Scoreboard
        self.tables = [Table(0, (0, 1), hand)]

    def _end_duel_hand(self, hand: SeatHand) -> list[SeatHand | RoundResult]:
        self._hand_rewards(hand)  # the hand recorded itself onto the sheet
        if self._end_match(len(self.hand_history)):
            if self.truncated:  # the hand limit, not the hand's sheet, ended the match
                self.current_game.end_match()
        else:  # the loser deals next; a dead hand is redealt by the same dealer
            self._deal_duel(self.rules.next_dealer(hand.dealer, hand.winner, hand.loser))
        return []

    # ------------------------------------------------------------------ three-hand
    def _deal_three_hand(self, dealer: int) -> None:
        hand = Hand(self.rules, dealer=THREE_HAND_DEALER_PART,
                    deck=draw_deal(self.rng, self.format).tolist())
        self.tables = [Table(0, three_hand_seats(dealer), hand, sitting_out=dealer)]
        self.current_table = 0

    def _end_three_hand(self, hand: SeatHand) -> list[SeatHand | RoundResult]:
        self._hand_rewards(hand)
        if hand.winner is None:
            self.sheet.record_void()
        else:
            self.sheet.record(hand.winner, hand.points)
        # the format's rule: the loser deals next; a dead hand is redealt by the same dealer
        if not self._end_match(len(self.hand_history)):
            self._deal_three_hand(self.rules.next_dealer(hand.dealer, hand.winner, hand.loser))
        return []

    # ------------------------------------------------------------------ partnership
    def _deal_round(self) -> None:
        assert self.dealing_team is not None
        self.tables = []
        for index, seats in enumerate(partnership_tables(self.round_number)):
            hand = Hand(self.rules, dealer=self.dealing_team,
                        deck=draw_deal(self.rng, self.format).tolist())
            self.tables.append(Table(index, seats, hand))
        self.current_table = 0

    def _next_table(self, table: Table, acting: int) -> None:
        """Play alternates between the tables turn by turn while both hands run: after a
        turn (the acting seat at a table changes) or a hand's end, the other table acts."""
        other = self.tables[1 - table.index]
        if other.running and (not table.running or table.current_seat != acting):
            self.current_table = other.index

    def _end_partnership_hand(self, table: Table) -> list[SeatHand | RoundResult]:
        other = self.tables[1 - table.index]
        if other.running:
            self.current_table = other.index
            return []
        hands = tuple(sorted(self.hand_history[-2:], key=lambda h: h.table))
        team_points = [0, 0]
        for h in hands:
            if h.winner is not None:
                team_points[h.winner % 2] += h.points
        winner, points = round_score(team_points)
        if winner is None:
            self.sheet.record_void()
            decided: list[int] = []
        else:
            decided = self.sheet.record(winner, points)
            self._pay()
            for seat in range(4):
                self.last_rewards[seat] = points if seat % 2 == winner else -points
        assert self.dealing_team is not None
        result = RoundResult(number=self.round_number, dealing_team=self.dealing_team,
                             hands=(hands[0], hands[1]), team_points=(team_points[0], team_points[1]),
                             winner=winner, points=points, columns_decided=tuple(decided))
        self.round_history.append(result)
        if not self._end_match(len(self.round_history)):
            self.round_number += 1
            self.dealing_team = 1 - self.dealing_team
            self._deal_round()
        return [result]

    # ------------------------------------------------------------------ results
    def dealt_anew(self, finished: list[SeatHand | RoundResult]) -> bool:
        """Whether the :meth:`apply` that returned ``finished`` dealt new hands: after every
        hand of a duel or three-hand, after a partnership's round, unless the match ended
        (where the fronts announce a deal or mark one in a replay)."""
        return bool(finished) and not self.is_over and (
            self.format != "partnership" or any(isinstance(f, RoundResult) for f in finished))

    @property
    def match_winner(self) -> int | None:
        """The winning sheet row: a seat (duel, three-hand) or a team (partnership); None
        while running, for a draw, or for a truncated match."""
        return self.sheet.match_winner if self._over else None

    @property
    def winning_seats(self) -> tuple[int, ...]:
        winner = self.match_winner
        if winner is None:
            return ()
        return TEAMS[winner] if self.format == "partnership" else (winner,)

    def returns(self) -> np.ndarray:
        """Per-seat match outcome (OpenSpiel style), zero-sum: 0 for all while running,
        for a draw or a truncated match; else duel +1/−1, three-hand +1 to the winner and
        −1/2 to each other player, partnership +1 to each winner and −1 to each loser."""
        if not self.is_over:
            return np.zeros(self.num_players, dtype=np.float64)
        return np.array(match_outcome(self.num_players, self.winning_seats), dtype=np.float64)

    def card_count_ok(self) -> bool:
        """Every table holds its 52 cards exactly once."""
        return all(t.game.card_count_ok() for t in self.tables)

    def clone(self) -> Match:
        return copy.deepcopy(self)

    def to_dict(self) -> dict:
        """A summary: format, seats at each table, sheet, results so far."""
        return {
            "format": self.format, "num_players": self.num_players,
            "tables": [{"index": t.index, "seats": list(t.seats), "dealer": t.dealer,
                        "sitting_out": t.sitting_out, "running": t.running} for t in self.tables],
            "teams": [list(t) for t in TEAMS] if self.format == "partnership" else None,
            "round": self.round_number if self.format == "partnership" else None,
            "dealing_team": self.dealing_team,
            "sheet": self.sheet.to_dict(),
            "hands": len(self.hand_history),
            "is_over": self.is_over, "truncated": self.truncated,
            "match_winner": self.match_winner, "returns": self.returns().tolist(),
        }
