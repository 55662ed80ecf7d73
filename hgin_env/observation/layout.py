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

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..cards import NUM_CARDS
from ..melds import CARD_BITS_U64

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


#: min(deadwood, 100) / DEADWOOD_SCALE for every possible deadwood (52 cards count at most 340);
#: the batched engine uses the same table.
DEADWOOD_FRACTIONS = [min(dw, DEADWOOD_SCALE) / DEADWOOD_SCALE for dw in range(341)]


def context_start(columns: int) -> int:
    return _slices(columns)["own_columns"].start
