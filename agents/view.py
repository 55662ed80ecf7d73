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
from hgin_env.cards import NUM_CARDS
from hgin_env.melds import melds_with
from hgin_env.observation import ObservationLayout

__all__ = ["ObsView", "melds_with", "parse"]  # melds_with: Neller's take test, from melds

FULL_MASK = (1 << NUM_CARDS) - 1


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
    by its number of columns. Every slice and scale is the layout's."""
    if isinstance(layout, int):
        layout = ObservationLayout(layout)
    vec = np.asarray(observation["observation"])
    if vec.shape[-1] != layout.size:
        raise ValueError(f"observation has size {vec.shape[-1]}, the layout "
                         f"({layout.format}, {layout.columns} columns) has {layout.size}")
    top = layout.card(vec, "discard_top")
    pile = layout.mask(vec, "discard_rest") | (1 << top if top >= 0 else 0)
    return ObsView(
        hand=layout.mask(vec, "hand"),
        discard_top=top,
        pile=pile,
        opponent_known=layout.mask(vec, "opponent_known"),
        opponent_discards=layout.mask(vec, "opponent_discards"),
        own_discards=layout.mask(vec, "own_discards"),
        stock_size=layout.count(vec, "stock_size"),
        phase=layout.phase(vec),
        knock_limit=layout.count(vec, "knock_limit"),
        is_dealer=layout.flag(vec, "is_dealer"),
        opponent_passed=layout.flag(vec, "opponent_passed"),
        own_columns=layout.values(vec, "own_columns", target),
        opponent_columns=layout.values(vec, "opponent_columns", target),
        own_open=layout.flags(vec, "own_open"),
        opponent_open=layout.flags(vec, "opponent_open"),
        won_by_me=layout.flags(vec, "won_by_me"),
        won_by_opponent=layout.flags(vec, "won_by_opponent"),
        legal=np.flatnonzero(observation["action_mask"]),
    )
