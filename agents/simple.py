"""Todd Neller's ``SimpleGinRummyPlayer`` (EAAI gin rummy challenge), the community's benchmark.

Why this exact policy: it is the reference opponent of the gin rummy research literature,
so results against it are comparable. Its rules:

* take the face-up card (first upcard or discard) only if it would be part of a meld of
  the hand plus that card; otherwise draw from the stock (pass on the first upcard);
* discard uniformly at random among the cards whose removal leaves the least deadwood
  (never the card just taken from the pile: the action mask already excludes it);
* knock as soon as the deadwood after that discard is within the knock limit (gin at 0).

Neller's player also refuses to repeat the same take/discard pair within a hand (a guard
against loops between two copies of itself); here a hand always ends by the dead-hand
rule, so that guard is left out.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from hgin_env import actions as A
from hgin_env.melds import deadwood_after_discard_mask

from .base import SeededAgent
from .view import melds_with, parse


def simple_action(hand: int, discard_top: int, legal: Collection[int], drawing: bool,
                  rng: np.random.Generator, after: dict[int, int] | None = None) -> int:
    """Neller's rule on plain facts: the hand mask, the discard top (-1 if none), the legal
    ids, whether this is a draw decision, and optionally the deadwood after each discard.

    The one implementation of the rule: :class:`SimpleAgent` calls it on a parsed
    observation, search rollouts (:mod:`agents.search`) on a sampled game.
    """
    if drawing:
        if A.TAKE_DISCARD in legal and discard_top >= 0 and melds_with(discard_top, hand):
            return A.TAKE_DISCARD
        return A.PASS if A.PASS in legal else A.DRAW_STOCK
    # Discard phase: the legal discards exclude a card just taken from the pile.
    if after is None:
        after = deadwood_after_discard_mask(hand)
    options = [(after[a - A.DISCARD], a) for a in sorted(legal) if a < A.KNOCK]
    best = min(dw for dw, _ in options)
    choices = [a for dw, a in options if dw == best]
    card = choices[int(rng.integers(len(choices)))] - A.DISCARD
    if A.KNOCK + card in legal:
        return A.KNOCK + card
    return A.DISCARD + card


class SimpleAgent(SeededAgent):
    """Neller's simple player on observation dicts."""

    name = "simple"

    def __call__(self, observation: dict) -> int:
        view = parse(observation, self.layout)
        legal = set(int(a) for a in view.legal)
        if not legal:
            raise ValueError("no legal action in the observation's action mask")
        return simple_action(view.hand, view.discard_top, legal,
                             view.phase in ("first_upcard", "draw"), self.rng)
