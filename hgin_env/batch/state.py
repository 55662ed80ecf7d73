"""THE table state of the batched engine: one record of the arrays T two-player tables are
(pgx's ``State`` is the model), defined here once. The numpy reference
(:class:`~hgin_env.batch.tables.TableBatch`, whose array attributes are this record's
arrays), the compiled kernels (:mod:`hgin_env.batch.kernels`, which take the record whole)
and the loader (:mod:`hgin_env.batch.load`, which builds one through :meth:`TableState.zeros`
and puts it into a batch's rows with :meth:`TableState.put`) all read it from here.

Why a NamedTuple, passed to the kernels as a plain tuple (:meth:`TableState.for_kernels`),
over a jitclass or a structured array: docs/architecture.md, "The table state record" (with
the figures). In short: a jitclass needs numba (the numpy reference must run without it); a
structured array makes every field a strided view; a NamedTuple keeps each field a
contiguous array, and as a plain tuple numba dispatches it as fast as separate arguments.

Hands and the other card sets are 52-bit masks in ``uint64``; the kernels' view holds them
as ``int64`` (mixing unsigned and signed integers turns Numba's arithmetic into floats).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..cards import NUM_CARDS
from ..codes import NO_DW


class TableState(NamedTuple):
    """The arrays of T tables, indexed by table; ``[t, p]`` for player p (0 or 1) of table t."""

    hands: np.ndarray  # uint64 [T, 2]
    known: np.ndarray  # uint64 [T, 2]: taken from the pile, still held
    discarded: np.ndarray  # uint64 [T, 2]
    passed: np.ndarray  # bool [T, 2]: passed the first upcard
    decks: np.ndarray  # int64 [T, 52]: this deal's card order
    stock_pos: np.ndarray  # int64 [T]: the next stock card is decks[t, stock_pos]
    pile: np.ndarray  # int64 [T, 52]: the discard pile, bottom first
    pile_len: np.ndarray  # int64 [T]
    pile_mask: np.ndarray  # uint64 [T]
    dealer: np.ndarray  # int64 [T]: the player with the dealer's part
    current_player: np.ndarray  # int64 [T]
    phase: np.ndarray  # int64 [T]: hgin_env.codes.Phase
    knock_limit: np.ndarray  # int64 [T]
    multiplier: np.ndarray  # int64 [T]
    taken: np.ndarray  # int64 [T]: the card taken this turn, -1 if none
    forced: np.ndarray  # bool [T]: the stock draw is forced (both passed the upcard)
    turns: np.ndarray  # int64 [T]
    # Derived, for the acting player, refreshed after every step (the masks and the
    # observations read them): the deadwood after discarding each card (NO_DW: not held),
    # the deadwood now, after taking the face-up card; and each player's 10-card deadwood
    # (set at the deal and at each discard).
    after: np.ndarray  # int16 [T, 52]
    dw_now: np.ndarray  # int16 [T]
    take_dw: np.ndarray  # int16 [T]
    dw10: np.ndarray  # int16 [T, 2]
    can_take: np.ndarray  # bool [T]

    @classmethod
    def zeros(cls, tables: int) -> TableState:
        """T tables before any deal (what ``TableBatch`` starts from, and what the loader fills)."""
        t = tables
        return cls(
            hands=np.zeros((t, 2), dtype=np.uint64), known=np.zeros((t, 2), dtype=np.uint64),
            discarded=np.zeros((t, 2), dtype=np.uint64), passed=np.zeros((t, 2), dtype=bool),
            decks=np.zeros((t, NUM_CARDS), dtype=np.int64), stock_pos=np.zeros(t, dtype=np.int64),
            pile=np.zeros((t, NUM_CARDS), dtype=np.int64), pile_len=np.zeros(t, dtype=np.int64),
            pile_mask=np.zeros(t, dtype=np.uint64), dealer=np.zeros(t, dtype=np.int64),
            current_player=np.zeros(t, dtype=np.int64), phase=np.zeros(t, dtype=np.int64),
            knock_limit=np.zeros(t, dtype=np.int64), multiplier=np.ones(t, dtype=np.int64),
            taken=np.full(t, -1, dtype=np.int64), forced=np.zeros(t, dtype=bool), turns=np.zeros(t, dtype=np.int64),
            after=np.full((t, NUM_CARDS), NO_DW, dtype=np.int16), dw_now=np.zeros(t, dtype=np.int16),
            take_dw=np.full(t, NO_DW, dtype=np.int16), dw10=np.zeros((t, 2), dtype=np.int16),
            can_take=np.zeros(t, dtype=bool))

    def put(self, rows: np.ndarray, source: TableState, source_rows: np.ndarray | None = None) -> None:
        """Set tables ``rows`` to ``source``'s tables ``source_rows`` (default: all of them, in
        order), every stored field; the derived ones are the caller's to refresh."""
        take = slice(None) if source_rows is None else source_rows
        for name in STORED:
            getattr(self, name)[rows] = getattr(source, name)[take]

    def for_kernels(self) -> tuple[np.ndarray, ...]:
        """The record as the compiled kernels take it: a plain tuple in field order (read by
        the index constants below), the card masks viewed as ``int64``; views, not copies."""
        return tuple(a.view(np.int64) if name in MASKS else a for name, a in zip(self._fields, self, strict=True))


#: The fields the derived ones are computed from (what a loaded state sets; the rest is
#: refreshed).
STORED = TableState._fields[:TableState._fields.index("after")] + ("dw10",)
#: The fields that hold 52-bit card masks.
MASKS = frozenset({"hands", "known", "discarded", "pile_mask"})

# Each field's index in the kernels' tuple (``state[HANDS][t, p]``), in field order; the
# assertion keeps them the record's.
(HANDS, KNOWN, DISCARDED, PASSED, DECKS, STOCK_POS, PILE, PILE_LEN, PILE_MASK, DEALER, CURRENT_PLAYER, PHASE,
 KNOCK_LIMIT, MULTIPLIER, TAKEN, FORCED, TURNS, AFTER, DW_NOW, TAKE_DW, DW10, CAN_TAKE) = range(22)
assert [globals()[name.upper()] for name in TableState._fields] == list(range(len(TableState._fields)))
