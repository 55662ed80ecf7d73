"""The match-context rows of an observation: the sheet slices (``own_columns`` .. ``wins``)
and a format's slices after them, the one definition of each, for one seat (the scalar
observer, k = 1) or k seats at once (the batched engine, every seat a step changed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..game import Hand
from ..scoring import Scoreboard
from ..sheets import Sheet
from .cache import CONTEXT_CACHE
from .layout import (
    COLUMN_CLIP,
    COUNT_CLIP,
    COUNT_SCALE,
    POINTS_SCALE,
    WINS_CLIP,
    WINS_SCALE,
    _size,
    _slices,
    context_start,
)

if TYPE_CHECKING:
    from ..match import Match

#: The cache's table, read inline on the hot path (:func:`game_context_bytes`).
_CONTEXT_ENTRIES = CONTEXT_CACHE._entries


def game_context_bytes(game: Hand, player: int) -> bytes:
    """The scoreboard part of the vector as float32 bytes: that of the hand's scoreboard (a
    duel's sheet, or a search world's sampled one), else of an empty sheet (a format table's
    hand, whose seat's context the format observer writes from the match). It changes only
    when a result is recorded, so it is kept in :data:`CONTEXT_CACHE` per hand, player and
    results recorded."""
    key = game.results_recorded
    # CONTEXT_CACHE.get inlined: this runs at every observation.
    entry = _CONTEXT_ENTRIES.get((id(game), player))
    data = entry[2] if entry is not None and entry[1] == key and entry[0]() is game else None
    if data is None:
        board = game.scoreboard
        data = scoreboard_context(Scoreboard(game.rules) if board is None else board, player).tobytes()
        CONTEXT_CACHE.put(game, player, key, data)
    return data


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
                       opponent: np.ndarray, target: int, engine: str = "numpy") -> np.ndarray:
    """:func:`sheet_context` of k sheets at once (the one definition of these slices: the
    scalar observer calls it with k = 1, the batched engine with every sheet a step
    changed): float32 [k, size - context_start]. ``columns``, ``wins``, ``winners`` as
    :func:`sheet_arrays` gives them; ``row`` and ``opponent`` int [k] (opponent -1: its
    parts are zero). ``engine="numba"``: the same rows from the compiled mirror
    (:mod:`hgin_env.observation.context_kernels`)."""
    if engine == "numba":
        return _compiled_rows("duel", columns, wins, winners, target, row, row, opponent)
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


def format_context(match: Match, seat: int, sitting_out: bool) -> np.ndarray:
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
                        round_number: np.ndarray | None = None, engine: str = "numpy") -> np.ndarray:
    """The context part of k format vectors (from ``context_start``: the sheet slices, then
    the format slices), the one definition of it (:func:`encode_seat` calls it with k = 1,
    the batched engine for every seat of the matches a step changed): float32 [k, ...].

    The sheets are ``columns``, ``wins``, ``winners`` (:func:`sheet_arrays`, one per row
    of the k); ``seat`` int [k]. Three-hand: ``opponent`` (the seat's opponent, -1 while it
    sits out), ``sitting_out`` (the seat sitting out), ``hands_played`` (hands finished in
    the match). Partnership: ``partner_running`` (bool), ``round_points`` int [k, 2] (the
    points each team won in the finished hands of this round), ``round_number``.
    ``engine="numba"``: the same rows from the compiled mirror
    (:mod:`hgin_env.observation.context_kernels`).
    """
    if engine == "numba":
        if format == "three_hand":
            return _compiled_rows(format, columns, wins, winners, target, seat, seat, opponent,
                                  sitting_out=sitting_out, hands_played=hands_played)
        return _compiled_rows(format, columns, wins, winners, target, seat, seat % 2, 1 - seat % 2,
                              partner_running=partner_running, round_points=round_points, round_number=round_number)
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


def _compiled_rows(format: str, columns: np.ndarray, wins: np.ndarray, winners: np.ndarray, target: int,
                   seat: np.ndarray, row: np.ndarray, opponent: np.ndarray | None, **parts: np.ndarray | None
                   ) -> np.ndarray:
    """The compiled mirror's rows (``context_kernels.context_rows``): the duel's sheet part
    (``format`` "duel"), or a format's whole context; ``parts`` the format's own arrays."""
    from .context_kernels import FORMAT_CODES, context_offsets, context_rows

    k, _, ncols = columns.shape
    out = np.empty((k, _size(ncols, format) - context_start(ncols)), dtype=np.float32)
    ints = {name: np.ascontiguousarray(a, dtype=np.int64) for name, a in
            (("seat", seat), ("row", row), ("opponent", opponent if opponent is not None else -np.ones(k)))}

    def given(name: str, shape: tuple[int, ...] = (k,)) -> np.ndarray:
        a = parts.get(name)
        return np.zeros(shape, dtype=np.int64) if a is None else np.ascontiguousarray(a, dtype=np.int64)

    context_rows(out, FORMAT_CODES[format], context_offsets(ncols, format),
                 np.ascontiguousarray(columns, dtype=np.int64), np.ascontiguousarray(wins, dtype=np.int64),
                 np.ascontiguousarray(winners, dtype=np.int64), float(target), ints["seat"], ints["row"],
                 ints["opponent"], given("sitting_out"), given("hands_played"), given("partner_running"),
                 given("round_points", (k, 2)), given("round_number"))
    return out
