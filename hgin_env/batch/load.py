"""Rows of a :class:`~hgin_env.batch.BatchGame` set to given states: the scalar duel ``Game``s
a search samples (determinized worlds), each continued by the batched engine from exactly
that state (:func:`load_games` into rows of a batch, :func:`batch_of_games` a new batch).

What a row takes from its game: both hands, the stock in drawing order, the discard pile,
what each player is known to hold and has discarded, who passed the upcard, the dealer,
the player to act, the phase, the knock limit and multiplier, the card taken this turn,
the forced stock draw, the turn count, the match sheet (a copy), the hands dealt and
played. What it cannot take: the game's generator. The hands dealt after this one come
from the row's own generator, seeded by ``seeds`` (a search gives every world its seed, so
candidates in one world see the same later deals). The row's tallies (hand kinds, points
won) start at zero: they count from the load on, for the episode summary.

Duel only: the formats' seating state (who sits out, the partnership round and the other
table) is not loaded yet; a three-hand or partnership batch is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cards import NUM_CARDS
from ..game import Game
from ..melds import deadwood_of_mask
from .core import BatchGame


def batch_of_games(games: Sequence[Game], seeds: Sequence[int] | np.ndarray, reward: str = "match",
                   match_bonus: float = 0.0, engine: str | None = None) -> BatchGame:
    """A duel :class:`BatchGame` whose match ``k`` goes on from ``games[k]`` (see
    :func:`load_games`); ``reward``, ``match_bonus`` and ``engine`` as ``BatchGame``'s."""
    if not games:
        raise ValueError("batch_of_games needs at least one game")
    batch = BatchGame(len(games), rules=games[0].rules, seeds=np.asarray(seeds, dtype=np.int64), reward=reward,
                      match_bonus=match_bonus, engine=engine)
    load_games(batch, np.arange(len(games)), games, seeds)
    return batch


def load_games(batch: BatchGame, rows: Sequence[int] | np.ndarray, games: Sequence[Game],
               seeds: Sequence[int] | np.ndarray) -> None:
    """Set match ``rows[k]`` of the duel ``batch`` to the state of ``games[k]`` (a live hand,
    any phase), its later deals drawn from a generator seeded by ``seeds[k]``. The games'
    rules must be the batch's."""
    rows = np.asarray(rows, dtype=np.int64)
    if batch.format != "duel":
        raise ValueError(f"load_games sets duel rows; format={batch.format!r} batches are not loadable yet")
    if not (len(rows) == len(games) == len(seeds)):
        raise ValueError(f"rows, games and seeds differ in length: {len(rows)}, {len(games)}, {len(seeds)}")
    if len(rows) and (rows.min() < 0 or rows.max() >= batch.n or np.unique(rows).size != rows.size):
        raise ValueError(f"rows must be distinct matches 0..{batch.n - 1}, got {rows.tolist()}")
    # A game given for several rows in a row (a search's world, once per candidate) is read
    # once; its other rows are copies of the first one's arrays.
    copies: list[tuple[int, int]] = []
    previous: tuple[Game | None, int] = (None, -1)
    for t, game, seed in zip(rows.tolist(), games, seeds, strict=True):
        if game is previous[0]:
            copies.append((t, previous[1]))
            batch.boards[t] = batch.boards[previous[1]].copy()
        else:
            if game.rules != batch.rules:
                raise ValueError(f"game {game.seed} plays {game.rules.name!r}, the batch {batch.rules.name!r}")
            if game.is_over:
                raise ValueError(f"game {game.seed} is over: a row holds a live hand")
            _load_table(batch, t, game)
            batch.boards[t] = game.scoreboard.copy()
            previous = (game, t)
        batch.rngs[t] = np.random.default_rng(int(seed))
        batch.match_seeds[t] = int(seed)
        batch.hand_number[t] = game.hand_number
        batch.hands_played[t] = len(game.hand_history)
        for tally in (batch.kind_counts, batch.opponent_kind_counts, batch.points_won, batch.points_lost,
                      batch.seat_hands, batch.seat_dead_hands):
            tally[t] = 0
        batch.dead_hands[t] = 0
    if copies:
        dst, src = np.array(copies, dtype=np.int64).T
        for name in _TABLE_FIELDS:
            array = getattr(batch, name)
            array[dst] = array[src]
    batch.seating.update_contexts(rows)
    batch.refresh_tables(rows)
    batch._obs_fresh = batch._mask_fresh = False


#: The table arrays :func:`_load_table` sets (``TableBatch``'s state; the rest is derived).
_TABLE_FIELDS = ("hands", "known", "discarded", "passed", "decks", "stock_pos", "pile", "pile_len", "pile_mask",
                 "_dw10", "dealer", "current_player", "phase", "knock_limit", "multiplier", "taken", "forced", "turns")


def _load_table(batch: BatchGame, t: int, game: Game) -> None:
    """The table arrays of ``t`` (``TableBatch``'s) from ``game``'s hand."""
    stock = game.stock  # stock.pop() draws: the next card is the last
    in_stock = set(stock)
    dealt = [c for c in range(NUM_CARDS) if c not in in_stock]
    batch.decks[t, :len(dealt)] = dealt  # the cards out of the stock, in any order
    batch.decks[t, len(dealt):] = stock[::-1]
    batch.stock_pos[t] = len(dealt)
    pile = game.discard_pile
    batch.pile[t, :len(pile)] = pile
    batch.pile_len[t] = len(pile)
    batch.pile_mask[t] = np.uint64(sum(1 << c for c in pile))
    for p in (0, 1):
        batch.hands[t, p] = np.uint64(game.hands[p])
        batch.known[t, p] = np.uint64(game.known_cards[p])
        batch.discarded[t, p] = np.uint64(game.discarded[p])
        batch.passed[t, p] = game.passed_upcard[p]
        batch._dw10[t, p] = deadwood_of_mask(game.hands[p])  # read for 10 cards; an 11th is discarded first
    batch.dealer[t] = game.dealer
    batch.current_player[t] = game.current_player
    batch.phase[t] = int(game.phase)
    batch.knock_limit[t] = game.knock_limit
    batch.multiplier[t] = game.multiplier
    batch.taken[t] = game.taken_card
    batch.forced[t] = game.forced_stock_draw
    batch.turns[t] = game.turns
