"""THE observation layout: one flat float32 vector with named slices.

This module is the only place that knows the offsets and the scales (``SCALES``). Agents,
checkpoints and notebooks read observations through :class:`ObservationLayout`
(``layout.slice("hand")``; ``layout.counts(vec, "stock_size")``, ``layout.values``,
``layout.flags``, ``layout.mask`` ... undo the scales) or :func:`decode`, never by
hard-coded numbers. The layout depends only on the number of
columns of the rules (3 for every Hollywood profile, 1 for single games) and on the format
(``ObservationLayout.for_rules(rules)``): the duel layout below never changes; the
three-hand and partnership layouts are the duel's, slice for slice at the same offsets,
followed by format context slices (:func:`encode_seat`; the table of them is in the
env docstring, Formats).

Everything here is what the observing player could know at the table: its own cards, the
visible discard pile, which cards the opponent picked up from the pile (and still holds)
or threw, counters, and the public scoreboard. The opponent's unseen cards and the stock
order never enter: :func:`encode` reads only public fields of the game and the player's
own hand.

| slice               | size | meaning                                                        |
|---------------------|------|----------------------------------------------------------------|
| hand                | 52   | 1 for each card the player holds                               |
| discard_top         | 52   | one-hot top of the discard pile (all 0 if empty)               |
| discard_rest        | 52   | the other cards of the discard pile                            |
| opponent_known      | 52   | cards the opponent took from the discard pile and still holds  |
| opponent_discards   | 52   | cards the opponent discarded this hand                         |
| own_discards        | 52   | cards the player discarded this hand                           |
| discard_deadwood    | 52   | in the discard phase: deadwood after discarding that card / 100 |
|                     |      | for held cards; 1.0 elsewhere and in other phases              |
|                     |      | (also for the card just taken from the pile, which the mask    |
|                     |      | forbids discarding this turn: read it with the action mask)   |
| deadwood            | 1    | the player's minimum deadwood now / 100                        |
| take_deadwood       | 1    | best deadwood after taking the discard top and discarding / 100 |
|                     |      | (1.0 when no discard can be taken)                             |
| stock_size          | 1    | cards left in the stock / 31                                   |
| phase               | 3    | one-hot: first upcard offer, draw, discard (no offer: draw)    |
| knock_limit         | 1    | knock limit of this hand / 10                                  |
| doubled             | 1    | 1 if this hand's score is multiplied (Oklahoma spade)          |
| is_dealer           | 1    | 1 if the player dealt this hand                                |
| opponent_passed     | 1    | 1 if the opponent passed the first upcard (0 without the offer)|
| own_columns         | C    | the player's column totals / target                            |
| opponent_columns    | C    | the opponent's column totals / target                          |
| own_open            | C    | 1 where the player's wins have opened the column               |
| opponent_open       | C    | 1 where the opponent's wins have opened the column             |
| won_by_me           | C    | 1 where the column is decided for the player                   |
| won_by_opponent     | C    | 1 where the column is decided for the opponent                 |
| wins                | 2    | the player's and the opponent's hands won / 10                 |

C is the number of columns (3). Size with 3 columns: 394.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .actions import NUM_ACTIONS
from .cards import NUM_CARDS, format_cards
from .compiled import resolve_engine
from .game import Game, Phase
from .melds import CARD_BITS_U64, cached_after_discard, cached_deadwood
from .scoring import Scoreboard
from .sheets import Sheet

if TYPE_CHECKING:
    from .match import Match

#: Bump when the layout changes; stored with checkpoints, which refuse other versions.
OBSERVATION_VERSION = 1
#: Column totals are fractions of the target; past-target values are clipped here.
COLUMN_CLIP = 4.0
#: Win counters are wins / 10, clipped here.
WINS_CLIP = 100.0

# The scales: a scaled slice stores quantity / scale. :func:`encode`, :func:`encode_seat`,
# the batched engine and every decoder (:meth:`ObservationLayout.values`, :func:`decode`,
# ``agents.view``, ``determinize``) use these, and nothing else.
#: Deadwood (``deadwood``, ``take_deadwood``, ``discard_deadwood``): points / 100, clipped at 1.
DEADWOOD_SCALE = 100.0
#: ``stock_size``: cards / 31 (the stock after the deal).
STOCK_SCALE = 31.0
#: ``knock_limit``: points / 10.
KNOCK_LIMIT_SCALE = 10.0
#: ``wins`` and ``seat_wins``: hands won / 10.
WINS_SCALE = 10.0
#: ``hand_number``, ``round_number``: count / 100; ``round_points``: points / 100.
COUNT_SCALE = 100.0
POINTS_SCALE = 100.0
#: The scale of each scaled slice; column totals are divided by the rules' target instead
#: (``TARGET_SCALED``), every other slice holds 0/1 flags or one-hots.
SCALES: dict[str, float] = {
    "discard_deadwood": DEADWOOD_SCALE, "deadwood": DEADWOOD_SCALE, "take_deadwood": DEADWOOD_SCALE,
    "stock_size": STOCK_SCALE, "knock_limit": KNOCK_LIMIT_SCALE, "wins": WINS_SCALE,
    "seat_wins": WINS_SCALE, "hand_number": COUNT_SCALE, "round_number": COUNT_SCALE,
    "round_points": POINTS_SCALE,
}
TARGET_SCALED = frozenset({"own_columns", "opponent_columns", "seat_columns"})
#: The one-hot ``phase`` slice, in order (all zero: the hand is "over").
PHASES = ("first_upcard", "draw", "discard")

_CARD_SLICES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards",
                "own_discards", "discard_deadwood")
_SCALARS = (("deadwood", 1), ("take_deadwood", 1), ("stock_size", 1), ("phase", 3),
            ("knock_limit", 1), ("doubled", 1), ("is_dealer", 1), ("opponent_passed", 1))
_COLUMN_SLICES = ("own_columns", "opponent_columns", "own_open", "opponent_open", "won_by_me",
                  "won_by_opponent")


#: Version of the three-hand and partnership layouts (the duel's is ``OBSERVATION_VERSION``).
FORMAT_OBSERVATION_VERSION = 1
#: Formats with a layout: the duel's, and the duel's followed by format context slices.
LAYOUT_FORMATS = ("duel", "three_hand", "partnership")
#: Seats per format (as in ``hgin_env.rules``).
_SEATS = {"duel": 2, "three_hand": 3, "partnership": 4}
#: Hand / round counters are count / 100, clipped here.
COUNT_CLIP = 10.0


def _format_slices(format: str, columns: int) -> list[tuple[str, int]]:
    """The context slices a format appends to the duel layout (RULES.md §13)."""
    if format == "three_hand":
        return [("seat", 3), ("sitting_out", 3), ("opponent_seat", 3), ("seat_columns", 3 * columns),
                ("seat_open", 3 * columns), ("seat_won", 3 * columns), ("seat_wins", 3),
                ("hand_number", 1)]
    if format == "partnership":
        return [("seat", 4), ("partner_running", 1), ("round_points", 2), ("round_number", 1)]
    return []


@dataclass(frozen=True)
class ObservationLayout:
    """Named slices of the observation vector for a number of columns and a format.

    The duel layout (``format="duel"``) is the one both shipped policies were trained on and
    never changes. The three-hand and partnership layouts are the duel's, slice for slice
    at the same offsets (the seat's own table, and the sheet seen as "own" against
    "opponent" rows), followed by format context slices (``FORMAT_OBSERVATION_VERSION``).
    """

    columns: int = 3
    format: str = "duel"

    def __post_init__(self) -> None:
        if self.format not in LAYOUT_FORMATS:
            raise ValueError(f"unknown format {self.format!r}; known: {LAYOUT_FORMATS}")

    @classmethod
    def for_rules(cls, rules) -> ObservationLayout:
        """The layout of a ``Rules`` (its columns and format)."""
        return cls(rules.columns, rules.format)

    @property
    def version(self) -> int:
        return OBSERVATION_VERSION if self.format == "duel" else FORMAT_OBSERVATION_VERSION

    @property
    def num_seats(self) -> int:
        return _SEATS[self.format]

    @property
    def slices(self) -> dict[str, slice]:
        return _slices(self.columns, self.format)

    @property
    def size(self) -> int:
        return _size(self.columns, self.format)

    def slice(self, name: str) -> slice:
        sl = _slices(self.columns, self.format).get(name)
        if sl is None:
            raise KeyError(f"unknown observation slice {name!r}; known: {list(self.slices)}")
        return sl

    def get(self, vector: np.ndarray, name: str) -> np.ndarray:
        sl = _slices(self.columns, self.format).get(name)
        return np.asarray(vector)[..., sl if sl is not None else self.slice(name)]

    # Decoding one vector (the scales are ``SCALES``; column totals use ``target``).
    @staticmethod
    def scale(name: str, target: float = 100) -> float:
        """What the slice's entries were divided by: ``target`` for column totals, the
        ``SCALES`` entry for counters, 1 for flags and cards."""
        return target if name in TARGET_SCALED else SCALES.get(name, 1)

    def values(self, vector: np.ndarray, name: str, target: float = 100) -> list[float]:
        """The slice's entries times its scale, as floats (points, cards, counts)."""
        scale = self.scale(name, target)
        return [float(x) * scale for x in self.get(vector, name)]

    def counts(self, vector: np.ndarray, name: str, target: float = 100) -> list[int]:
        """:meth:`values` rounded to ints."""
        return [int(round(v)) for v in self.values(vector, name, target)]

    def count(self, vector: np.ndarray, name: str, target: float = 100) -> int:
        """The first entry of :meth:`counts` (for one-entry slices: ``stock_size`` ...)."""
        return int(round(float(self.get(vector, name)[0]) * self.scale(name, target)))

    def flags(self, vector: np.ndarray, name: str) -> list[bool]:
        """The slice's 0/1 entries as bools."""
        return [bool(x > 0.5) for x in self.get(vector, name)]

    def flag(self, vector: np.ndarray, name: str) -> bool:
        return bool(self.get(vector, name)[0] > 0.5)

    def cards(self, vector: np.ndarray, name: str) -> list[int]:
        """The card ids set in a 52-entry card slice."""
        return [int(c) for c in np.flatnonzero(self.get(vector, name) > 0.5)]

    def mask(self, vector: np.ndarray, name: str) -> int:
        """A 52-entry card slice as an int bitmask (bit c = card id c)."""
        return int(CARD_BITS_U64[self.get(vector, name) > 0.5].sum())

    def card(self, vector: np.ndarray, name: str) -> int:
        """The card of a one-hot card slice (``discard_top``), -1 when it is all zero."""
        cards = np.flatnonzero(self.get(vector, name) > 0.5)
        return int(cards[0]) if cards.size else -1

    def phase(self, vector: np.ndarray) -> str:
        """The ``phase`` one-hot as a name of ``PHASES``, "over" when it is all zero."""
        v = self.get(vector, "phase")
        return PHASES[int(v.argmax())] if v.any() else "over"

    def to_dict(self) -> dict:
        """What a checkpoint stores to identify the layout."""
        return {"format": self.format, "columns": self.columns, "version": self.version,
                "size": self.size}


@lru_cache(maxsize=16)
def _slices(columns: int, format: str = "duel") -> dict[str, slice]:
    out, offset = {}, 0
    sizes = [(n, NUM_CARDS) for n in _CARD_SLICES] + list(_SCALARS)
    sizes += [(n, columns) for n in _COLUMN_SLICES] + [("wins", 2)]
    sizes += _format_slices(format, columns)
    for name, size in sizes:
        out[name] = slice(offset, offset + size)
        offset += size
    return out


@lru_cache(maxsize=16)
def _size(columns: int, format: str = "duel") -> int:
    return max(s.stop for s in _slices(columns, format).values())


@lru_cache(maxsize=16)
def _bounds(columns: int, format: str = "duel") -> tuple[np.ndarray, np.ndarray]:
    size = _size(columns, format)
    low, high = np.zeros(size, dtype=np.float32), np.ones(size, dtype=np.float32)
    slices = _slices(columns, format)
    high[slices["knock_limit"]] = 10.0
    for name in ("own_columns", "opponent_columns", "seat_columns"):
        if name in slices:
            high[slices[name]] = COLUMN_CLIP
    for name in ("wins", "seat_wins"):
        if name in slices:
            high[slices[name]] = WINS_CLIP
    for name in ("hand_number", "round_number"):
        if name in slices:
            high[slices[name]] = COUNT_CLIP
    if "round_points" in slices:  # two hands of at most a few hundred points each
        high[slices["round_points"]] = COLUMN_CLIP
    return low, high


def observation_bounds(columns: int = 3, format: str = "duel") -> tuple[np.ndarray, np.ndarray]:
    """(low, high) arrays of the observation vector, for the Box space."""
    low, high = _bounds(columns, format)
    return low.copy(), high.copy()


def mask_bits(mask: int) -> np.ndarray:
    """The 52 bits of a hand mask as a uint8 vector (card id order)."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8),
                         bitorder="little")[:NUM_CARDS]


def _set_cards(vec: np.ndarray, start: int, mask: int) -> None:
    if mask:
        vec[start:start + NUM_CARDS] = mask_bits(mask)


@lru_cache(maxsize=1 << 14)
def take_deadwood(hand: int, card: int) -> int:
    """Best deadwood reachable by adding ``card`` and discarding any other card."""
    after = cached_after_discard(hand | 1 << card)
    return min(dw for c, dw in after.items() if c != card)


def _byte_floats() -> list[bytes]:
    """For each byte value: its 8 bits, low bit first, as float32 bytes (for :func:`encode`)."""
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    return [row.astype(np.float32).tobytes() for row in bits]


_BYTE_FLOATS = _byte_floats()
_BYTE_FLOAT_OF = _BYTE_FLOATS.__getitem__
_BIT_OF = {c: 1 << c for c in range(NUM_CARDS)}.__getitem__
_ONES_52 = np.ones(NUM_CARDS, dtype=np.float32).tobytes()
_PACK_52 = struct.Struct(f"<{NUM_CARDS}f").pack
_PACK_SCALARS = struct.Struct("<10f").pack
_DISCARD = Phase.DISCARD
_HAND_OVER = Phase.HAND_OVER
_DRAWING = (Phase.FIRST_UPCARD, Phase.DRAW)
_PHASE_ONE_HOT = {Phase.FIRST_UPCARD: (1.0, 0.0, 0.0), Phase.DRAW: (0.0, 1.0, 0.0),
                  Phase.DISCARD: (0.0, 0.0, 1.0)}
_NO_PHASE = (0.0, 0.0, 0.0)
#: min(deadwood, 100) / DEADWOOD_SCALE for every possible deadwood (52 cards count at most 340);
#: the batched engine uses the same table.
DEADWOOD_FRACTIONS = [min(dw, DEADWOOD_SCALE) / DEADWOOD_SCALE for dw in range(341)]
_FRACTION = DEADWOOD_FRACTIONS


def _check_packed_order() -> None:
    """:func:`encode` writes the vector as one byte string: the card slices are back to back
    (52 bits each, 39 bytes for the six bit slices), then the scalars, then the context."""
    sl = _slices(3)
    starts = [sl[name].start for name in _CARD_SLICES]
    assert starts == [i * NUM_CARDS for i in range(len(_CARD_SLICES))]
    offset = sl["deadwood"].start
    assert offset == len(_CARD_SLICES) * NUM_CARDS
    for name, size in _SCALARS:
        assert sl[name] == slice(offset, offset + size), name
        offset += size
    assert offset == 10 + sl["deadwood"].start and offset == context_start(3)


def encode(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector of ``player`` (reads public state and that player's hand).

    Compiled where numba is installed (:func:`hgin_env.card_kernels.encode_table_row`
    writes the table part in one call, the match context is copied from its cache), else
    the Python reference; both give the same vector bit for bit
    (tests/test_compiled_engine.py). ``HGIN_ENGINE`` at import, or :func:`use_engine`,
    picks one."""
    return _ENCODE(game, player, out)


def _encode_python(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """:func:`encode`'s reference path (the engine "numpy"): built as one float32 byte
    string (C-level joins of precomputed per-byte floats) and turned into an array once."""
    opp = 1 - player
    hand = game.hands[player]
    pile = game.discard_pile
    if pile:
        top_card = pile[-1]
        top = 1 << top_card
        rest = sum(map(_BIT_OF, pile)) & ~top  # pile cards are distinct: the sum is their union
    else:
        top = rest = 0
    discarded = game.discarded
    bits = (hand | top << 52 | rest << 104 | game.known_cards[opp] << 156 | discarded[opp] << 208
            | discarded[player] << 260)
    parts = list(map(_BYTE_FLOAT_OF, bits.to_bytes(39, "little")))

    phase = game.phase
    acting = game.current_player == player and phase < _HAND_OVER  # not game.is_over
    if acting and phase == _DISCARD:
        dd = [1.0] * NUM_CARDS
        for c, dw in game.deadwood_after_discard().items():
            dd[c] = _FRACTION[dw]
        parts.append(_PACK_52(*dd))
    else:
        parts.append(_ONES_52)
    take = 1.0
    if acting and pile and phase in _DRAWING and not game.forced_stock_draw:
        take = _FRACTION[take_deadwood(hand, top_card)]
    p0, p1, p2 = _PHASE_ONE_HOT.get(phase, _NO_PHASE)
    parts.append(_PACK_SCALARS(
        _FRACTION[cached_deadwood(hand)], take, len(game.stock) / STOCK_SCALE, p0, p1, p2,
        game.knock_limit / KNOCK_LIMIT_SCALE, float(game.multiplier > 1), float(game.dealer == player),
        float(game.passed_upcard[opp])))
    parts.append(_match_context_bytes(game, player))
    vec = np.frombuffer(b"".join(parts), dtype=np.float32)
    if out is None:
        return vec.copy()
    out[:] = vec
    return out


def _encode_compiled(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """:func:`encode`'s compiled path (the engine "numba")."""
    opp = 1 - player
    pile = game.discard_pile
    if pile:
        top_card = pile[-1]
        rest = sum(map(_BIT_OF, pile)) & ~(1 << top_card)
    else:
        top_card, rest = -1, 0
    context = _match_context_bytes(game, player)
    vec = np.empty(_TABLE_SIZE + len(context) // 4, dtype=np.float32) if out is None else out
    phase = game.phase
    _KERNELS.encode_table_row(
        vec, _OFFSETS, _SCALES, _FRACTIONS, game.hands[player], top_card, rest, game.known_cards[opp],
        game.discarded[opp], game.discarded[player], int(phase), game.current_player == player and phase < _HAND_OVER,
        phase in _DRAWING and not game.forced_stock_draw, len(game.stock), game.knock_limit, game.multiplier > 1,
        game.dealer == player, game.passed_upcard[opp])
    vec[_TABLE_SIZE:] = np.frombuffer(context, dtype=np.float32)
    return vec


def use_engine(engine: str | None = None) -> str:
    """Make :func:`encode` (so every scalar observation) run ``engine`` ("numba": the
    compiled path, "numpy": the Python reference; None: :func:`hgin_env.compiled.resolve_engine`'s
    choice); returns the engine it ran before. The differential runs the scalar side on the
    reference, so that it checks the compiled batched engine against independent code."""
    global _ENCODE, _KERNELS
    before = "numba" if _ENCODE is _encode_compiled else "numpy"
    if resolve_engine(engine) == "numba":
        from . import card_kernels

        _KERNELS = card_kernels
        _ENCODE = _encode_compiled
    else:
        _ENCODE = _encode_python
    return before


def encode_with(engine: str, game: Game, player: int) -> np.ndarray:
    """:func:`encode` on ``engine`` for this one call (tests, warming the kernels)."""
    before = use_engine(engine)
    try:
        return encode(game, player)
    finally:
        use_engine(before)


class StateCache:
    """Values the observer derives from a state and reuses while it holds: the match-context
    part of a vector, which changes only when a hand ends. The observer keeps them here, not
    on the engine's objects (the engine knows nothing of observers). An entry is keyed by the
    state's ``id`` and seat and holds a weak reference that proves it is that state's (an id
    is reused once its object is gone) and the key it was computed for (hands played); the
    entries of collected states are dropped whenever the table fills up."""

    def __init__(self, limit: int = 4096):
        self._entries: dict[tuple[int, int], tuple[weakref.ref, int, object]] = {}
        self._limit = limit

    def get(self, state: object, who: int, key: int):
        entry = self._entries.get((id(state), who))
        if entry is not None and entry[1] == key and entry[0]() is state:
            return entry[2]
        return None

    def put(self, state: object, who: int, key: int, value: object) -> None:
        if len(self._entries) >= self._limit:
            dead = [k for k, e in self._entries.items() if e[0]() is None]
            for k in dead:  # in place: the encoder holds the dict itself
                del self._entries[k]
            self._limit = max(self._limit, 2 * len(self._entries))  # many live states: grow
        self._entries[(id(state), who)] = (weakref.ref(state), key, value)

    def clear(self) -> None:
        self._entries.clear()


#: The observer's one cache (see :class:`StateCache`).
CONTEXT_CACHE = StateCache()
_CONTEXT_ENTRIES = CONTEXT_CACHE._entries


def _match_context_bytes(game: Game, player: int) -> bytes:
    """The scoreboard part of the vector as float32 bytes. It changes only when a hand ends,
    so it is kept in :data:`CONTEXT_CACHE` per game, player and hands played."""
    key = len(game.hand_history)
    # CONTEXT_CACHE.get inlined: this runs at every observation.
    entry = _CONTEXT_ENTRIES.get((id(game), player))
    data = entry[2] if entry is not None and entry[1] == key and entry[0]() is game else None
    if data is None:
        data = scoreboard_context(game.scoreboard, player).tobytes()
        CONTEXT_CACHE.put(game, player, key, data)
    return data


def context_start(columns: int) -> int:
    return _slices(columns)["own_columns"].start


def scoreboard_context(board: Scoreboard, player: int) -> np.ndarray:
    """The match-context part of ``player``'s vector (from ``context_start`` to the end),
    computed from a scoreboard."""
    return sheet_context(board, player, 1 - player)


def sheet_arrays(sheets: Sequence[Sheet]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The facts of k sheets (same rules, same rows) that the context slices read, as
    arrays: column totals int64 [k, rows, C], wins int64 [k, rows], column winners int64
    [k, C] (-1 while a column is open)."""
    columns = np.stack([s.columns for s in sheets])
    wins = np.array([s.wins for s in sheets], dtype=np.int64)
    winners = np.array([[-1 if w is None else w for w in s.column_winners] for s in sheets],
                       dtype=np.int64)
    return columns, wins, winners


def sheet_context(board: Sheet, row: int, opponent: int | None) -> np.ndarray:
    """The duel layout's sheet slices (``own_columns`` .. ``wins``) for sheet row ``row``
    against row ``opponent`` (None: the opponent parts are zero)."""
    columns, wins, winners = sheet_arrays([board])
    return sheet_context_rows(columns, wins, winners, np.array([row]),
                              np.array([-1 if opponent is None else opponent]), board.rules.target)[0]


def sheet_context_rows(columns: np.ndarray, wins: np.ndarray, winners: np.ndarray, row: np.ndarray,
                       opponent: np.ndarray, target: int) -> np.ndarray:
    """:func:`sheet_context` of k sheets at once (the one definition of these slices: the
    scalar observer calls it with k = 1, the batched engine with every sheet a step
    changed): float32 [k, size - context_start]. ``columns``, ``wins``, ``winners`` as
    :func:`sheet_arrays` gives them; ``row`` and ``opponent`` int [k] (opponent -1: its
    parts are zero)."""
    k, _, ncols = columns.shape
    layout = _slices(ncols)
    start = context_start(ncols)
    ctx = np.zeros((k, _size(ncols) - start), dtype=np.float32)
    ar = np.arange(k)
    j = np.arange(ncols)

    def put(name: str, rows: np.ndarray, values: np.ndarray) -> None:
        sl = layout[name]
        ctx[rows, sl.start - start:sl.stop - start] = values

    target = float(target)
    put("own_columns", ar, np.minimum(columns[ar, row] / target, COLUMN_CLIP))
    put("own_open", ar, j[None, :] < wins[ar, row][:, None])
    put("won_by_me", ar, winners == row[:, None])
    wins_at = layout["wins"].start - start
    ctx[:, wins_at] = np.minimum(wins[ar, row] / WINS_SCALE, WINS_CLIP)
    has = np.flatnonzero(opponent >= 0)
    if has.size:
        opp = opponent[has]
        put("opponent_columns", has, np.minimum(columns[has, opp] / target, COLUMN_CLIP))
        put("opponent_open", has, j[None, :] < wins[has, opp][:, None])
        put("won_by_opponent", has, winners[has] == opp[:, None])
        ctx[has, wins_at + 1] = np.minimum(wins[has, opp] / WINS_SCALE, WINS_CLIP)
    return ctx


#: Private parts of a table vector, zeroed for a seat sitting out (it holds no cards).
_SITTER_ZERO = ("hand", "opponent_known", "opponent_discards", "own_discards", "deadwood",
                "phase", "opponent_passed")


def encode_seat(match: Match, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` in a :class:`~hgin_env.match.Match` of any format,
    in the layout ``ObservationLayout.for_rules(match.rules)``.

    Duel: exactly :func:`encode`. Three-hand and partnership: the seat's own table as in
    the duel (a seat sitting out sees only the table's public cards: the discard pile, the
    stock size, the knock limit; ``is_dealer`` = 1 since the sitter dealt), the sheet's
    ``own_*``/``opponent_*`` slices for its row (its team's, in a partnership) against its
    opponent's row (its current opponent; the other team), then the format slices. Only
    what the seat could know: its own cards and public facts; never its partner's cards.
    """
    if match.format == "duel":
        return encode(match.tables[0].game, seat)
    rules = match.rules
    columns = rules.columns
    layout = _slices(columns, match.format)
    vec = np.zeros(_size(columns, match.format), dtype=np.float32)
    start = context_start(columns)
    view = match.seat_view(seat)
    if view is None:  # sitting out (three-hand): the public cards of the table
        vec[:start] = encode(match.tables[0].game, 0)[:start]
        for name in _SITTER_ZERO:
            vec[layout[name]] = 0.0
        for name in ("discard_deadwood", "take_deadwood", "is_dealer"):
            vec[layout[name]] = 1.0
    else:
        game, player = view
        vec[:start] = encode(game, player)[:start]
    key = len(match.hand_history)  # the context changes only when a hand ends
    context = CONTEXT_CACHE.get(match, seat, key)
    if context is None:
        context = _format_context(match, seat, view is None)
        CONTEXT_CACHE.put(match, seat, key, context)
    vec[start:] = context
    return vec


_check_packed_order()


def observation_dict(vector: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """THE observation dict's shape, written here only: ``{"observation": float32 vector,
    "action_mask": int8[108]}``. :func:`observe` builds it from the engine; the batched
    agents' row-by-row adapter and the RLlib adapter build it from vectors made elsewhere."""
    return {"observation": vector, "action_mask": mask}


def observe(state: Game | Match, who: int) -> dict[str, np.ndarray]:
    """THE observation dict every agent gets, built here only: ``{"observation": vector,
    "action_mask": int8[108]}`` of player ``who`` of a ``Game`` or seat ``who`` of a
    :class:`~hgin_env.match.Match` (any format). The mask is all zeros unless ``who`` acts
    (a waiting or sitting-out seat, or a finished game or match).

    The env, :meth:`Match.observation <hgin_env.match.Match.observation>` (so
    ``run_match``), determinization and search rollouts all call this, so the dict an
    agent sees cannot differ between them.
    """
    if not isinstance(state, Game):
        game = state.duel_game
        if game is None:  # three-hand, partnership: the seat's table plus the match context
            return observation_dict(encode_seat(state, who), state.legal_action_mask(who))
        state = game  # the duel: exactly its Game's dict (encode_seat would say the same)
    # A bytearray filled in Python and viewed once is faster than np.zeros + fancy indexing
    # for ~10 legal actions, and the array owns a fresh buffer (callers may keep it).
    mask = bytearray(NUM_ACTIONS)
    if who == state.current_player and not state.is_over:
        for a in state.legal_actions():
            mask[a] = 1
    return observation_dict(encode(state, who), np.frombuffer(mask, dtype=np.int8))


def _format_context(match: Match, seat: int, sitting_out: bool) -> np.ndarray:
    """The part of a format vector after the table slices (the sheet and the format
    slices): a function of the seat and the hands played, cached on the match."""
    columns, wins, winners = sheet_arrays([match.sheet])
    seats = np.array([seat])
    if match.format == "three_hand":
        table = match.tables[0]
        opponent = -1 if sitting_out else table.opponent_of(seat)
        return format_context_rows(
            "three_hand", columns, wins, winners, match.rules.target, seats,
            opponent=np.array([opponent]), sitting_out=np.array([table.sitting_out]),
            hands_played=np.array([len(match.hand_history)]))[0]
    team_points = [0, 0]
    for hand in match.hand_history[-2:]:  # the finished hands of this round (announced)
        if hand.round == match.round_number and hand.winner is not None:
            team_points[hand.winner % 2] += hand.points
    partner_table = match.table_of(match.partner_of(seat))
    return format_context_rows(
        "partnership", columns, wins, winners, match.rules.target, seats,
        partner_running=np.array([match.tables[partner_table].running]),
        round_points=np.array([team_points]), round_number=np.array([match.round_number]))[0]


def format_context_rows(format: str, columns: np.ndarray, wins: np.ndarray, winners: np.ndarray,
                        target: int, seat: np.ndarray, *, opponent: np.ndarray | None = None,
                        sitting_out: np.ndarray | None = None, hands_played: np.ndarray | None = None,
                        partner_running: np.ndarray | None = None, round_points: np.ndarray | None = None,
                        round_number: np.ndarray | None = None) -> np.ndarray:
    """The context part of k format vectors (from ``context_start``: the sheet slices, then
    the format slices), the one definition of it (:func:`encode_seat` calls it with k = 1,
    the batched engine for every seat of the matches a step changed): float32 [k, ...].

    The sheets are ``columns``, ``wins``, ``winners`` (:func:`sheet_arrays`, one per row
    of the k); ``seat`` int [k]. Three-hand: ``opponent`` (the seat's opponent, -1 while it
    sits out), ``sitting_out`` (the seat sitting out), ``hands_played`` (hands finished in
    the match). Partnership: ``partner_running`` (bool), ``round_points`` int [k, 2] (the
    points each team won in the finished hands of this round), ``round_number``.
    """
    k, _, ncols = columns.shape
    layout = _slices(ncols, format)
    start = context_start(ncols)
    vec = np.zeros((k, _size(ncols, format) - start), dtype=np.float32)
    ar = np.arange(k)

    def at(name: str, offset: np.ndarray | int = 0) -> np.ndarray | int:
        return layout[name].start - start + offset

    sheet_end = layout["seat"].start - start
    vec[ar, at("seat", seat)] = 1.0
    if format == "three_hand":
        assert opponent is not None and sitting_out is not None and hands_played is not None
        vec[:, :sheet_end] = sheet_context_rows(columns, wins, winners, seat, opponent, target)
        vec[ar, at("sitting_out", (sitting_out - seat) % 3)] = 1.0  # relative: 0 = me, 1 = next
        has = np.flatnonzero(opponent >= 0)
        vec[has, at("opponent_seat", (opponent[has] - seat[has]) % 3)] = 1.0
        j = np.arange(ncols)
        for r in range(3):  # me, the next seat, the one after
            s = (seat + r) % 3
            base = r * ncols
            vec[:, at("seat_columns", base):at("seat_columns", base + ncols)] = \
                np.minimum(columns[ar, s] / float(target), COLUMN_CLIP)
            vec[:, at("seat_open", base):at("seat_open", base + ncols)] = j[None, :] < wins[ar, s][:, None]
            vec[:, at("seat_won", base):at("seat_won", base + ncols)] = winners == s[:, None]
            vec[:, at("seat_wins", r)] = np.minimum(wins[ar, s] / WINS_SCALE, WINS_CLIP)
        vec[:, at("hand_number")] = np.minimum(hands_played / COUNT_SCALE, COUNT_CLIP)
        return vec
    assert partner_running is not None and round_points is not None and round_number is not None
    row = seat % 2
    vec[:, :sheet_end] = sheet_context_rows(columns, wins, winners, row, 1 - row, target)
    vec[:, at("partner_running")] = partner_running
    points = np.stack([round_points[ar, row], round_points[ar, 1 - row]], axis=1)  # its team, the other
    vec[:, at("round_points"):at("round_points", 2)] = np.minimum(points / POINTS_SCALE, COLUMN_CLIP)
    vec[:, at("round_number")] = np.minimum(round_number / COUNT_SCALE, COUNT_CLIP)
    return vec


def decode(vector: np.ndarray, columns: int = 3, target: int = 100, format: str = "duel") -> dict:
    """A readable dict of an observation vector (card slices as text, totals in points)."""
    vector = np.asarray(vector, dtype=np.float32)
    layout = ObservationLayout(columns, format)
    if vector.shape[-1] != layout.size:
        raise ValueError(f"observation has size {vector.shape[-1]}, expected {layout.size} "
                         f"for {columns} column(s), format {format!r}")
    out: dict = {}
    for name in _CARD_SLICES[:-1]:
        out[name] = format_cards(layout.cards(vector, name))
    dd = layout.counts(vector, "discard_deadwood")
    out["discard_deadwood"] = {format_cards([c]): dd[c] for c in layout.cards(vector, "hand")
                               if dd[c] < DEADWOOD_SCALE}
    for name in ("deadwood", "take_deadwood", "stock_size"):
        out[name] = layout.count(vector, name)
    out["phase"] = layout.phase(vector)
    out["knock_limit"] = layout.count(vector, "knock_limit")
    for name in ("doubled", "is_dealer", "opponent_passed"):
        out[name] = layout.flag(vector, name)
    for name in ("own_columns", "opponent_columns"):
        out[name] = layout.counts(vector, name, target)
    for name in ("own_open", "opponent_open", "won_by_me", "won_by_opponent"):
        out[name] = layout.flags(vector, name)
    out["wins"] = layout.counts(vector, "wins")
    if format == "duel":
        return out
    n = layout.num_seats
    out["seat"] = int(layout.get(vector, "seat").argmax())
    if format == "three_hand":
        for name in ("sitting_out", "opponent_seat"):  # relative: 0 = me, 1 = next seat, 2
            v = layout.get(vector, name)
            out[name] = (out["seat"] + int(v.argmax())) % n if v.any() else None
        seat_columns = layout.counts(vector, "seat_columns", target)
        seat_open, seat_won = layout.flags(vector, "seat_open"), layout.flags(vector, "seat_won")
        out["seat_columns"] = [seat_columns[r * columns:(r + 1) * columns] for r in range(3)]
        out["seat_open"] = [seat_open[r * columns:(r + 1) * columns] for r in range(3)]
        out["seat_won"] = [seat_won[r * columns:(r + 1) * columns] for r in range(3)]
        out["seat_wins"] = layout.counts(vector, "seat_wins")
        out["hand_number"] = layout.count(vector, "hand_number")
    else:
        out["partner"] = (out["seat"] + 2) % 4
        out["partner_running"] = layout.flag(vector, "partner_running")
        out["round_points"] = layout.counts(vector, "round_points")
        out["round_number"] = layout.count(vector, "round_number")
    return out


def hand_from_observation(vector: np.ndarray, columns: int = 3) -> list[int]:
    """The player's card ids from an observation vector (any format: the hand slice is at
    the same offset in every layout)."""
    return ObservationLayout(columns).cards(vector, "hand")


#: What the compiled path passes to the kernel: the starts of the table slices (in
#: ``card_kernels.write_table_row``'s order), the stock and knock-limit scales, the deadwood
#: numbers; the table part ends where the match context starts.
_OFFSETS = np.array([_slices(3)[name].start for name in (*_CARD_SLICES, *(n for n, _ in _SCALARS))],
                    dtype=np.int64)
_SCALES = np.array([STOCK_SCALE, KNOCK_LIMIT_SCALE], dtype=np.float64)
_FRACTIONS = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)
_TABLE_SIZE = context_start(3)
_KERNELS = None  # hgin_env.card_kernels, imported when the compiled path is chosen
_ENCODE = _encode_python

# The scalar observer's engine, chosen once at import (HGIN_ENGINE, else compiled where numba
# is installed): a choice per call would cost an environment lookup per observation.
use_engine()
