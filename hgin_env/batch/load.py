"""Rows of a :class:`~hgin_env.batch.BatchGame` set to given states: the scalar states a
search samples (determinized worlds), each continued by the batched engine from exactly
that state. One loader, :func:`load_matches`, for every format: a :class:`~hgin_env.match.Match`,
a duel world's ``Hand`` (a hand with its scoreboard), or a :class:`MatchState` (the same
facts without the match's history: what a format world is); :func:`batch_of_matches` makes a new batch of them.

What a table takes from its game: both hands, the stock in drawing order, the discard pile,
what each player is known to hold and has discarded, who passed the upcard, the dealer,
the player to act, the phase, the knock limit and multiplier, the card taken this turn,
the forced stock draw, the turn count. What a row takes from its match: its table(s), the
sheet (a copy), the hands dealt and played, and the format's seating: three-hand who sits
out and which seat plays which part; partnership the round number, the dealing team, the
points each team won in the round's finished hands, the two tables' seats and the table
that acts. What it cannot take: the match's generator. The hands dealt after this one come
from the row's own generator, seeded by ``seeds`` (a search gives every world its seed, so
candidates in one world see the same later deals). The row's tallies (hand kinds, points
won, a partnership's round scores) start at zero: they count from the load on, for the
episode summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..cards import NUM_CARDS
from ..game import Hand
from ..match import Match, partnership_tables, three_hand_seats
from ..melds import deadwood_of_mask
from ..rules import Rules
from ..sheets import Sheet
from .core import BatchGame
from .state import TableState


def _check_rows(batch: BatchGame, rows: np.ndarray, states: Sequence, seeds: Sequence[int] | np.ndarray,
                what: str) -> None:
    """Refuse rows, states and seeds of different lengths, or rows that are not distinct
    matches of ``batch``."""
    if not (len(rows) == len(states) == len(seeds)):
        raise ValueError(f"rows, {what} and seeds differ in length: {len(rows)}, {len(states)}, {len(seeds)}")
    if len(rows) and (rows.min() < 0 or rows.max() >= batch.n or np.unique(rows).size != rows.size):
        raise ValueError(f"rows must be distinct matches 0..{batch.n - 1}, got {rows.tolist()}")


def _start_row(batch: BatchGame, i: int, seed: int, hand_number: int, hands_played: int) -> None:
    """Match ``i``'s own generator (its later deals), hand counters, and tallies from zero."""
    batch.rngs[i] = np.random.default_rng(int(seed))
    batch.match_seeds[i] = int(seed)
    batch.hand_number[i] = hand_number
    batch.hands_played[i] = hands_played
    for tally in (batch.kind_counts, batch.opponent_kind_counts, batch.points_won, batch.points_lost,
                  batch.seat_hands, batch.seat_dead_hands):
        tally[i] = 0
    batch.dead_hands[i] = 0


def _finish(batch: BatchGame, rows: np.ndarray, loaded: list[tuple[int, Hand]],
            copies: list[tuple[int, int]]) -> None:
    """Put the tables of the games read into the batch's state (``loaded``: (table, game)),
    copy the tables of each (row, source row) in ``copies`` (a state given for several rows
    is read once), then refresh the rows' contexts and derived state as a step does."""
    per = batch.seating.tables_per_match

    def tables_of(matches: np.ndarray) -> np.ndarray:
        return (per * matches[:, None] + np.arange(per)[None, :]).ravel()

    if loaded:
        batch.state.put(np.array([t for t, _ in loaded], dtype=np.int64), table_state_of([g for _, g in loaded]))
    if copies:
        dst, src = np.array(copies, dtype=np.int64).T
        batch.state.put(tables_of(dst), batch.state, tables_of(src))
    batch.update_contexts(rows)
    batch._after_step(np.sort(tables_of(rows)))


def table_state_of(games: Sequence[Hand]) -> TableState:
    """The table state of ``games`` (table k plays ``games[k]``'s hand, any phase), built
    through :meth:`TableState.zeros`: what :func:`load_matches` puts
    into a batch's rows (the derived fields are refreshed there)."""
    st = TableState.zeros(len(games))
    for t, game in enumerate(games):
        stock = game.stock  # stock.pop() draws: the next card is the last
        in_stock = set(stock)
        dealt = [c for c in range(NUM_CARDS) if c not in in_stock]
        st.decks[t, :len(dealt)] = dealt  # the cards out of the stock, in any order
        st.decks[t, len(dealt):] = stock[::-1]
        st.stock_pos[t] = len(dealt)
        pile = game.discard_pile
        st.pile[t, :len(pile)] = pile
        st.pile_len[t] = len(pile)
        st.pile_mask[t] = np.uint64(sum(1 << c for c in pile))
        for p in (0, 1):
            st.hands[t, p] = np.uint64(game.hands[p])
            st.known[t, p] = np.uint64(game.known_cards[p])
            st.discarded[t, p] = np.uint64(game.discarded[p])
            st.passed[t, p] = game.passed_upcard[p]
            st.dw10[t, p] = deadwood_of_mask(game.hands[p])  # read for 10 cards; an 11th is discarded first
        st.dealer[t] = game.dealer
        st.current_player[t] = game.current_player
        st.phase[t] = int(game.phase)
        st.knock_limit[t] = game.knock_limit
        st.multiplier[t] = game.multiplier
        st.taken[t] = game.taken_card
        st.forced[t] = game.forced_stock_draw
        st.turns[t] = game.turns
    return st


@dataclass
class MatchState:
    """What a row takes from a match of any format (:func:`load_matches`): the facts of
    :class:`~hgin_env.match.Match` that play and the observations read, without its history
    or generator. :meth:`of` reads them off a real match (or a duel world's ``Hand``); a
    determinized format world (:mod:`hgin_env.format_worlds`) builds one from a seat's
    observation.

    ``games[k]`` is table k's hand (a ``Hand`` of the match's rules; a
    finished partnership table's is over) and ``seats[k]`` its seats (``seats[k][p]`` plays player p).
    """

    rules: Rules
    games: tuple[Hand, ...]
    seats: tuple[tuple[int, int], ...]
    sheet: Sheet
    #: Hands finished in the match, and dealt (a partnership round deals two).
    hands_played: int
    hand_number: int
    #: Three-hand: the seat sitting out (the dealer). None in a partnership.
    sitting_out: int | None = None
    #: Partnership: the round, its dealing team, the hand points each team won in the
    #: round's finished hands, and the table that acts next.
    round_number: int = 0
    dealing_team: int = 0
    round_points: tuple[int, int] = (0, 0)
    current_table: int = 0

    @classmethod
    def of(cls, state: Hand | Match) -> MatchState:
        """The state of a live ``Match`` of any format, or of a duel world: a ``Hand`` of
        the duel with its scoreboard (a determinized world; the hand and its ``Scoreboard``
        are the duel's one table and sheet, its ``hand_number`` counts the hands dealt).
        The games and sheet are shared, not copied: :func:`load_matches` only reads them."""
        if isinstance(state, Hand):
            if state.is_over:
                raise ValueError(f"hand {state.hand_number} is over: a row holds a live hand")
            if state.scoreboard is None or state.rules.format != "duel":
                raise ValueError("a Hand loads as a duel's world: a duel hand with its scoreboard")
            return cls(rules=state.rules, games=(state,), seats=((0, 1),), sheet=state.scoreboard,
                       hands_played=state.hand_number - 1, hand_number=state.hand_number)
        match = state
        if match.is_over:
            raise ValueError(f"match {match.seed} is over: a row holds a live hand")
        points = [0, 0]
        if match.format == "partnership":
            for hand in match.hand_history[-2:]:  # the finished hands of this round
                if hand.round == match.round_number and hand.winner is not None:
                    points[hand.winner % 2] += hand.points
        return cls(rules=match.rules, games=tuple(t.game for t in match.tables),
                   seats=tuple(t.seats for t in match.tables), sheet=match.sheet,
                   hands_played=len(match.hand_history), hand_number=match.hand_number,
                   sitting_out=match.sitting_out, round_number=match.round_number,
                   dealing_team=match.dealing_team or 0, round_points=(points[0], points[1]),
                   current_table=match.current_table)

    def check(self) -> None:
        """Raise ValueError when the state cannot be a live match of its format."""
        fmt = self.rules.format
        if fmt == "duel":
            if len(self.games) != 1 or tuple(self.seats[0]) != (0, 1):
                raise ValueError("a duel state has one table, seats (0, 1)")
            if self.games[0].is_over:
                raise ValueError("the duel's hand is over: a row holds a live hand")
        elif fmt == "three_hand":
            if len(self.games) != 1 or self.sitting_out not in (0, 1, 2):
                raise ValueError("a three-hand state has one table and a seat sitting out (0..2)")
            if tuple(self.seats[0]) != three_hand_seats(self.sitting_out):
                raise ValueError(f"three-hand seats {self.seats[0]} do not follow the dealer {self.sitting_out} "
                                 f"(expected {three_hand_seats(self.sitting_out)})")
            if self.games[0].is_over:
                raise ValueError("the three-hand table's hand is over: a row holds a live hand")
        elif fmt == "partnership":
            if len(self.games) != 2 or self.current_table not in (0, 1):
                raise ValueError("a partnership state has two tables and an acting table (0 or 1)")
            if tuple(map(tuple, self.seats)) != partnership_tables(self.round_number):
                raise ValueError(f"partnership seats {self.seats} are not round {self.round_number}'s "
                                 f"{partnership_tables(self.round_number)}")
            if self.games[self.current_table].is_over:
                raise ValueError("the acting partnership table's hand is over")
        if self.sheet.match_over:
            raise ValueError("the sheet says the match is over: a row holds a live hand")
        for game in self.games:
            if game.rules != self.rules:
                raise ValueError(f"a table plays {game.rules.name!r}, the match {self.rules.name!r}")


def batch_of_matches(states: Sequence[Hand | Match | MatchState], seeds: Sequence[int] | np.ndarray,
                     reward: str = "match", match_bonus: float = 0.0, engine: str | None = None) -> BatchGame:
    """A :class:`BatchGame` of the states' rules whose match ``k`` goes on from
    ``states[k]`` (see :func:`load_matches`); ``reward``, ``match_bonus`` and ``engine`` as
    ``BatchGame``'s."""
    if not states:
        raise ValueError("batch_of_matches needs at least one state")
    batch = BatchGame(len(states), rules=states[0].rules, seeds=np.asarray(seeds, dtype=np.int64), reward=reward,
                      match_bonus=match_bonus, engine=engine)
    load_matches(batch, np.arange(len(states)), states, seeds)
    return batch


def load_matches(batch: BatchGame, rows: Sequence[int] | np.ndarray, states: Sequence[Hand | Match | MatchState],
                 seeds: Sequence[int] | np.ndarray) -> None:
    """THE loader: set match ``rows[k]`` of ``batch`` to ``states[k]`` (a live ``Match`` of the
    batch's rules, any format; a duel world's ``Hand``; or a :class:`MatchState`), its
    later deals drawn from a generator seeded by ``seeds[k]``. A state given for several
    rows in a row (a search's world, once per candidate) is read once and copied. Python per
    row (a few per decision of a search), never on the stepping path."""
    rows = np.asarray(rows, dtype=np.int64)
    _check_rows(batch, rows, states, seeds, "states")
    seating = batch.seating
    per = seating.tables_per_match
    partnership = batch.format == "partnership"
    copies: list[tuple[int, int]] = []  # (row, source row): a state given for several rows is read once
    loaded: list[tuple[int, Hand]] = []  # (table, game) of the states read
    previous: tuple[object, int] = (None, -1)
    previous_state: MatchState | None = None
    for i, m, seed in zip(rows.tolist(), states, seeds, strict=True):
        if m is previous[0]:
            copies.append((i, previous[1]))
            batch.boards[i] = batch.boards[previous[1]].copy()
            assert previous_state is not None
            state = previous_state
        else:
            if isinstance(m, Hand) and batch.format != "duel":
                raise ValueError(f"a {type(m).__name__} is a duel's table; a format={batch.format!r} batch loads "
                                 "Matches or MatchStates")
            if isinstance(m, Match) and m.rules != batch.rules:
                raise ValueError(f"match {m.seed} plays {m.rules.name!r}, the batch {batch.rules.name!r}")
            state = MatchState.of(m) if isinstance(m, (Hand, Match)) else m
            if not isinstance(state, MatchState):
                raise ValueError(f"load_matches takes duel Hands, Matches or MatchStates, got {type(m).__name__}")
            if state.rules != batch.rules:
                raise ValueError(f"a state plays {state.rules.name!r}, the batch {batch.rules.name!r}")
            state.check()
            loaded += [(per * i + k, game) for k, game in enumerate(state.games)]
            batch.boards[i] = state.sheet.copy()
            previous, previous_state = (m, i), state
        for k, seats in enumerate(state.seats):
            seating.table_seats[per * i + k] = seats
        seating.acting_table[i] = per * i + state.current_table
        if partnership:
            seating.round_number[i] = state.round_number
            seating.dealing_team[i] = state.dealing_team
            seating.round_points[i] = state.round_points
            seating.team_points[i] = 0
        elif batch.format == "three_hand":
            seating.sitting_out[i] = state.sitting_out
        _start_row(batch, i, seed, state.hand_number, state.hands_played)
    _finish(batch, rows, loaded, copies)
