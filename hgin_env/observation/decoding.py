"""Reading an observation vector back: a readable dict (:func:`decode`) and the player's
cards (:func:`hand_from_observation`)."""

from __future__ import annotations

import numpy as np

from ..cards import format_cards
from .layout import _CARD_SLICES, DEADWOOD_SCALE, ObservationLayout


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
