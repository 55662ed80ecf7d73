"""A parsed view of one observation vector: card sets as 52-bit masks, scalars as numbers.

Why: heuristic agents reason with the fast mask-based meld functions of
:mod:`hgin_env.melds`, so the card slices of the observation are turned into ``int``
masks once per decision. Everything here comes from the public observation layout
(:class:`hgin_env.observation.ObservationLayout`); nothing reads engine state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS
from hgin_env.observation import ObservationLayout

FULL_MASK = (1 << NUM_CARDS) - 1
_BITS = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)


def mask_of(vector: np.ndarray) -> int:
    """52-entry 0/1 vector -> int bitmask."""
    return int(_BITS[np.asarray(vector) > 0.5].sum())




@dataclass
class ObsView:
    """The facts an agent may use, decoded from one observation dict."""

    hand: int
    discard_top: int  # card id, or -1 when the pile is empty
    pile: int  # every card in the discard pile (top included)
    opponent_known: int  # cards the opponent took from the pile and still holds
    opponent_discards: int
    own_discards: int
    stock_size: int
    phase: str  # "first_upcard", "draw", "discard" or "over"
    knock_limit: int
    is_dealer: bool
    opponent_passed: bool
    own_columns: list[float]  # points (target-scaled back to points with target 100)
    opponent_columns: list[float]
    own_open: list[bool]
    opponent_open: list[bool]
    won_by_me: list[bool]
    won_by_opponent: list[bool]
    legal: np.ndarray  # legal action ids

    @property
    def unseen(self) -> int:
        """Cards that may be in the stock or in the opponent's hidden cards."""
        return FULL_MASK & ~self.hand & ~self.pile & ~self.opponent_known

    @property
    def can_take(self) -> bool:
        return bool(self.discard_top >= 0 and np.any(self.legal == A.TAKE_DISCARD))

    @property
    def upcard_declined_by_opponent(self) -> int:
        """Mask of the first upcard if the opponent passed it and it is still in the pile."""
        if not self.opponent_passed:
            return 0
        return self.pile & ~self.opponent_discards & ~self.own_discards

    @property
    def declined_by_opponent(self) -> int:
        """Cards the opponent was offered on top of the pile and did not take.

        Each of my discards still in the pile was the top when the opponent drew (the
        opponent has drawn since, or the card would be the top during its turn, not mine).
        """
        return (self.own_discards & self.pile) | self.upcard_declined_by_opponent


def parse(observation: dict, layout: ObservationLayout | int = 3, target: int = 100) -> ObsView:
    """Decode an observation dict into an :class:`ObsView` through its layout (any format:
    the table slices and the ``own_*``/``opponent_*`` sheet slices are the duel's, seen from
    the seat: its row, its team's row, against its opponent's). An int names a duel layout
    by its number of columns."""
    if isinstance(layout, int):
        layout = ObservationLayout(layout)
    vec = np.asarray(observation["observation"])
    if vec.shape[-1] != layout.size:
        raise ValueError(f"observation has size {vec.shape[-1]}, the layout "
                         f"({layout.format}, {layout.columns} columns) has {layout.size}")
    s = layout.slices
    top_v = vec[s["discard_top"]]
    top_idx = np.flatnonzero(top_v > 0.5)
    top = int(top_idx[0]) if top_idx.size else -1
    pile = mask_of(vec[s["discard_rest"]]) | (1 << top if top >= 0 else 0)
    phase_v = vec[s["phase"]]
    phase = ("first_upcard", "draw", "discard")[int(phase_v.argmax())] if phase_v.any() else "over"
    return ObsView(
        hand=mask_of(vec[s["hand"]]),
        discard_top=top,
        pile=pile,
        opponent_known=mask_of(vec[s["opponent_known"]]),
        opponent_discards=mask_of(vec[s["opponent_discards"]]),
        own_discards=mask_of(vec[s["own_discards"]]),
        stock_size=int(round(float(vec[s["stock_size"]][0]) * 31)),
        phase=phase,
        knock_limit=int(round(float(vec[s["knock_limit"]][0]) * 10)),
        is_dealer=bool(vec[s["is_dealer"]][0] > 0.5),
        opponent_passed=bool(vec[s["opponent_passed"]][0] > 0.5),
        own_columns=[float(x) * target for x in vec[s["own_columns"]]],
        opponent_columns=[float(x) * target for x in vec[s["opponent_columns"]]],
        own_open=[bool(x > 0.5) for x in vec[s["own_open"]]],
        opponent_open=[bool(x > 0.5) for x in vec[s["opponent_open"]]],
        won_by_me=[bool(x > 0.5) for x in vec[s["won_by_me"]]],
        won_by_opponent=[bool(x > 0.5) for x in vec[s["won_by_opponent"]]],
        legal=np.flatnonzero(observation["action_mask"]),
    )


def melds_with(card: int, hand: int) -> bool:
    """Whether ``card`` forms at least one meld (set or run) with cards of ``hand``.

    This is Neller's test for taking a face-up card: is it in any meld of hand + card.
    """
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    same_rank = sum(1 for s in range(4) if s != suit and hand >> (s * NUM_RANKS + rank) & 1)
    if same_rank >= 2:
        return True
    base = suit * NUM_RANKS

    def has(r: int) -> bool:
        return 0 <= r < NUM_RANKS and bool(hand >> (base + r) & 1)

    return (has(rank - 2) and has(rank - 1)) or (has(rank - 1) and has(rank + 1)) \
        or (has(rank + 1) and has(rank + 2))
