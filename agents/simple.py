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

from hgin_env import actions as A
from hgin_env.melds import deadwood_after_discard_mask

from .base import SeededAgent
from .view import melds_with, parse


class SimpleAgent(SeededAgent):
    """Neller's simple player on observation dicts."""

    name = "simple"

    def __call__(self, observation: dict) -> int:
        view = parse(observation, self.columns)
        legal = set(int(a) for a in view.legal)
        if not legal:
            raise ValueError("no legal action in the observation's action mask")
        if view.phase in ("first_upcard", "draw"):
            if A.TAKE_DISCARD in legal and view.discard_top >= 0 \
                    and melds_with(view.discard_top, view.hand):
                return A.TAKE_DISCARD
            return A.PASS if A.PASS in legal else A.DRAW_STOCK
        # Discard phase: the legal discards exclude a card just taken from the pile.
        after = deadwood_after_discard_mask(view.hand)
        options = [(after[a - A.DISCARD], a) for a in sorted(legal) if a < A.KNOCK]
        best = min(dw for dw, _ in options)
        choices = [a for dw, a in options if dw == best]
        card = choices[int(self.rng.integers(len(choices)))] - A.DISCARD
        if A.KNOCK + card in legal:
            return A.KNOCK + card
        return A.DISCARD + card
