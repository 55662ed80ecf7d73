"""The compiled mirror of :func:`~hgin_env.observation.context.format_context_rows` and
:func:`~hgin_env.observation.context.sheet_context_rows` (the reference, in numpy): the
match-context rows the batched engine recomputes for every match whose hand ended.

Why: the numpy functions make about sixty small array operations per call whatever the
number of rows, and the batched engine calls them once for each step that ends a hand. In
three-hand training, where the opponents play whole hands while the learner sits out, those
steps are many and small: the numpy context was about a third of the hand-end bookkeeping
(docs/learning.md, "The formats"). Here one pass of loops writes the same float32 values:
each is computed in float64 and stored as float32, as numpy's assignment casts it.

:func:`context_offsets` gives the kernel the slice starts of the layout (relative to the
context's start, -1 for a slice the format lacks). This module imports numba; the numpy
functions import it only when asked for ``engine="numba"``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from .layout import COLUMN_CLIP, COUNT_CLIP, COUNT_SCALE, POINTS_SCALE, WINS_CLIP, WINS_SCALE, _slices, context_start

#: The slices the kernel writes, in the order of :func:`context_offsets`.
_NAMES = ("own_columns", "own_open", "won_by_me", "opponent_columns", "opponent_open", "won_by_opponent", "wins",
          "seat", "sitting_out", "opponent_seat", "seat_columns", "seat_open", "seat_won", "seat_wins", "hand_number",
          "partner_running", "round_points", "round_number")
(OWN_COLUMNS, OWN_OPEN, WON_BY_ME, OPPONENT_COLUMNS, OPPONENT_OPEN, WON_BY_OPPONENT, WINS, SEAT, SITTING_OUT,
 OPPONENT_SEAT, SEAT_COLUMNS, SEAT_OPEN, SEAT_WON, SEAT_WINS, HAND_NUMBER, PARTNER_RUNNING, ROUND_POINTS,
 ROUND_NUMBER) = range(len(_NAMES))
#: The formats as the kernel takes them.
FORMAT_CODES = {"duel": 0, "three_hand": 1, "partnership": 2}


@lru_cache(maxsize=16)
def context_offsets(columns: int, format: str) -> np.ndarray:
    """int64 [18]: where each of ``_NAMES`` starts, from the context's start (-1: absent)."""
    layout = _slices(columns, format)
    start = context_start(columns)
    return np.array([layout[n].start - start if n in layout else -1 for n in _NAMES], dtype=np.int64)


@njit(cache=True, inline="always")
def _sheet_part(out, at, k, columns, wins, winners, row, opponent, target) -> None:
    """``sheet_context_rows`` for row ``k`` (every entry of its sheet part written)."""
    ncols = columns.shape[2]
    r = row[k]
    o = opponent[k]
    for j in range(ncols):
        out[k, at[OWN_COLUMNS] + j] = min(columns[k, r, j] / target, COLUMN_CLIP)
        out[k, at[OWN_OPEN] + j] = 1.0 if j < wins[k, r] else 0.0
        out[k, at[WON_BY_ME] + j] = 1.0 if winners[k, j] == r else 0.0
        if o >= 0:
            out[k, at[OPPONENT_COLUMNS] + j] = min(columns[k, o, j] / target, COLUMN_CLIP)
            out[k, at[OPPONENT_OPEN] + j] = 1.0 if j < wins[k, o] else 0.0
            out[k, at[WON_BY_OPPONENT] + j] = 1.0 if winners[k, j] == o else 0.0
        else:
            out[k, at[OPPONENT_COLUMNS] + j] = 0.0
            out[k, at[OPPONENT_OPEN] + j] = 0.0
            out[k, at[WON_BY_OPPONENT] + j] = 0.0
    out[k, at[WINS]] = min(wins[k, r] / WINS_SCALE, WINS_CLIP)
    out[k, at[WINS] + 1] = min(wins[k, o] / WINS_SCALE, WINS_CLIP) if o >= 0 else 0.0


@njit(cache=True)
def context_rows(out, fmt, at, columns, wins, winners, target, seat, row, opponent, sitting_out, hands_played,
                 partner_running, round_points, round_number) -> None:
    """Row k of ``out`` (float32 [k, width], every entry written) is
    ``format_context_rows`` (``fmt`` 1 three-hand, 2 partnership) or, ``fmt`` 0,
    ``sheet_context_rows(columns, wins, winners, row, opponent, target)``; the arrays as
    those take them, ``row`` the sheet row of the seat (three-hand: the seat, partnership:
    its team) and ``opponent`` the row it is compared with (-1: none). The arrays a format
    does not read may be any of the right length."""
    ncols = columns.shape[2]
    for k in range(out.shape[0]):
        for c in range(out.shape[1]):
            out[k, c] = 0.0
        s = seat[k]
        _sheet_part(out, at, k, columns, wins, winners, row, opponent, target)
        if fmt == 0:
            continue
        out[k, at[SEAT] + s] = 1.0
        if fmt == 1:
            out[k, at[SITTING_OUT] + (sitting_out[k] - s) % 3] = 1.0  # relative: 0 = me, 1 = next
            if opponent[k] >= 0:
                out[k, at[OPPONENT_SEAT] + (opponent[k] - s) % 3] = 1.0
            for r in range(3):  # me, the next seat, the one after
                q = (s + r) % 3
                base = r * ncols
                for j in range(ncols):
                    out[k, at[SEAT_COLUMNS] + base + j] = min(columns[k, q, j] / target, COLUMN_CLIP)
                    out[k, at[SEAT_OPEN] + base + j] = 1.0 if j < wins[k, q] else 0.0
                    out[k, at[SEAT_WON] + base + j] = 1.0 if winners[k, j] == q else 0.0
                out[k, at[SEAT_WINS] + r] = min(wins[k, q] / WINS_SCALE, WINS_CLIP)
            out[k, at[HAND_NUMBER]] = min(hands_played[k] / COUNT_SCALE, COUNT_CLIP)
        else:
            team = row[k]
            out[k, at[PARTNER_RUNNING]] = 1.0 if partner_running[k] else 0.0
            out[k, at[ROUND_POINTS]] = min(round_points[k, team] / POINTS_SCALE, COLUMN_CLIP)
            out[k, at[ROUND_POINTS] + 1] = min(round_points[k, 1 - team] / POINTS_SCALE, COLUMN_CLIP)
            out[k, at[ROUND_NUMBER]] = min(round_number[k] / COUNT_SCALE, COUNT_CLIP)
