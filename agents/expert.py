"""A hand-written expert for Hollywood Gin that acts only on the observation.

Why each ingredient is there:

* **Card knowledge.** ``unseen`` cards (not in hand, not in the pile, not known to be in the
  opponent's hand) are where the next stock card comes from; each is in the opponent's
  hidden hand with probability ``hidden / unseen``. Cards the opponent declined (my
  discards it did not take, the first upcard it passed) or discarded itself make cards
  that would have melded with them less likely to be in its hand.
* **Discard = deadwood + draw potential + danger.** A discard is scored by the deadwood it
  leaves, the expected improvement of the next stock draw over the unseen cards (exact,
  with :func:`hgin_env.melds.min_deadwood_batch` on every (discard, draw, re-discard)
  hand at once), and the probability that the card completes a meld for the opponent.
* **Take the upcard only when it pays**: it must sit in a meld and lower the deadwood, or
  lower the deadwood clearly more than an average stock draw would.
* **Knock with judgement.** Gin always; otherwise knock early in the hand (the opponent's
  deadwood is still high, so undercuts are rare) and in the last stock cards (a dead hand
  scores nothing), and play on for gin in between: a low-deadwood hand that waits scores
  the gin bonus, and undercuts an opponent who knocks as soon as it may (25 + difference).
  Tournament tuning against Simple: waiting beats knocking at 2 or 4 deadwood mid-hand.
* **Match state.** When a small win would decide a column that matters (the match, or
  the last open one), take the safe knock instead of hunting for gin.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from hgin_env import actions as A
from hgin_env.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, mask_to_cards
from hgin_env.melds import cached_deadwood, deadwood_after_discard_mask, meld_partners, min_deadwood_batch
from hgin_env.observation import ObservationLayout

from .base import SeededAgent
from .view import ObsView, parse

_BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)


@dataclass
class ExpertParams:
    """Tunable weights of :class:`ExpertAgent` (defaults from tournament tuning vs Simple)."""

    #: Weight of the expected deadwood improvement of the next draw in the discard score.
    lookahead: float = 0.75
    #: Danger weight (deadwood points per unit probability that the opponent melds the card),
    #: at the start of a hand and added by its end (stock empty).
    danger_early: float = 3.0
    danger_late: float = 9.0
    #: Factor on the chance that the opponent holds a card that would meld with a card it
    #: declined or discarded.
    decline_factor: float = 0.5
    #: Take a card that does not join a meld only if it beats the average stock draw by this.
    swap_margin: float = 4.0
    #: Knock with any legal deadwood while the stock holds at least this many cards.
    knock_any_stock: int = 24
    #: Between those, knock only with deadwood at most this (0: play on for gin).
    knock_late: int = 0
    #: In the last cards of the stock, knock with any legal deadwood again (a dead hand
    #: scores nothing).
    knock_end_stock: int = 4
    #: Use the Hollywood match state (closing columns) in the knock decision.
    match_aware: bool = True
    #: Points a plain knock is counted on to close a column of mine ...
    small_win: float = 10.0
    #: ... and points the opponent's next win may bring it (the threat to parry).
    threat_win: float = 20.0


def expert_params(**params: float) -> ExpertParams:
    """:class:`ExpertParams` from keyword arguments; unknown names raise ``ValueError``
    (shared by :class:`ExpertAgent` and :class:`agents.batched.BatchedExpert`)."""
    known = {f.name for f in fields(ExpertParams)}
    unknown = set(params) - known
    if unknown:
        raise ValueError(f"unknown ExpertAgent parameter(s) {sorted(unknown)}; known: {sorted(known)}")
    return ExpertParams(**params)


def knock_timing(p: ExpertParams, deadwood: int, stock_size: int) -> bool:
    """The Expert's knock timing without the match state: gin always; any legal deadwood
    early in the hand and in the last stock cards; in between only ``knock_late`` or less."""
    if deadwood == 0:
        return True
    if stock_size >= p.knock_any_stock or stock_size <= p.knock_end_stock:
        return True
    return deadwood <= p.knock_late


class ExpertAgent(SeededAgent):
    """Heuristic expert on observation dicts (see the module docstring)."""

    name = "expert"

    def __init__(self, seed: int | None = None, columns: int | None = None,
                 layout: ObservationLayout | None = None, **params: float):
        self.params = expert_params(**params)
        # Nothing to forget between matches (the observation carries every fact used), so
        # SeededAgent.reset only re-seeds.
        super().__init__(seed=seed, columns=columns, layout=layout)

    # ------------------------------------------------------------------ decisions
    def __call__(self, observation: dict) -> int:
        view = parse(observation, self.layout)
        legal = set(int(a) for a in view.legal)
        if not legal:
            raise ValueError("no legal action in the observation's action mask")
        if len(legal) == 1:
            return next(iter(legal))
        if A.BIG_GIN in legal:
            return A.BIG_GIN
        if view.phase in ("first_upcard", "draw"):
            return self._draw(view, legal)
        return self._discard(view, legal)

    def _draw(self, view: ObsView, legal: set[int]) -> int:
        fallback = A.PASS if A.PASS in legal else A.DRAW_STOCK
        top = view.discard_top
        if A.TAKE_DISCARD not in legal or top < 0:
            return fallback
        hand = view.hand
        with_top = hand | 1 << top
        after = deadwood_after_discard_mask(with_top)
        best_card, take_dw = min(((c, dw) for c, dw in after.items() if c != top), key=lambda x: x[1])
        kept = with_top & ~(1 << best_card)
        if take_dw == 0:
            return A.TAKE_DISCARD
        current = cached_deadwood(hand)
        in_meld = cached_deadwood(kept & ~(1 << top)) > take_dw - CARD_VALUES[top]
        if in_meld and take_dw < current:
            return A.TAKE_DISCARD
        draw_dw = self._expected_draw_deadwood(hand, view.unseen)
        if take_dw <= draw_dw - self.params.swap_margin:
            return A.TAKE_DISCARD
        return fallback

    def _discard(self, view: ObsView, legal: set[int]) -> int:
        p = self.params
        hand = view.hand
        after = deadwood_after_discard_mask(hand)
        discards = [a - A.DISCARD for a in legal if a < A.KNOCK]
        knocks = [a - A.KNOCK for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        if knocks:
            knock_card = min(knocks, key=lambda c: (after[c], -CARD_VALUES[c], c))
            if self._should_knock(view, after[knock_card]):
                return A.KNOCK + knock_card
        cards = sorted(discards)
        dw = np.array([after[c] for c in cards], dtype=np.float64)
        improve = self._expected_improvement(hand, cards, dw, view.unseen)
        danger = self._danger(view, cards)
        stage = 1.0 - min(view.stock_size, 31) / 31.0
        weight = p.danger_early + (p.danger_late - p.danger_early) * stage
        score = dw - p.lookahead * improve + weight * danger
        # Ties: throw the higher card (less deadwood if caught), then the lower id.
        best = min(range(len(cards)), key=lambda i: (round(score[i], 9), -CARD_VALUES[cards[i]], cards[i]))
        return A.DISCARD + cards[best]

    # ------------------------------------------------------------------ knock policy
    def _should_knock(self, view: ObsView, deadwood: int) -> bool:
        if knock_timing(self.params, deadwood, view.stock_size):
            return True
        return bool(self.params.match_aware and self._match_point(view))

    def _match_point(self, view: ObsView) -> bool:
        """Whether one small won hand decides the match, for me or for the opponent.

        Then the hand itself is what counts, not its size: knock as soon as it is legal
        (my small win closes a column that gives me the majority; or the opponent's next win
        would close one that gives it the majority, so this hand must not be lost).
        """
        p = self.params
        n = len(view.own_columns)
        majority = n // 2 + 1
        mine, theirs = sum(view.won_by_me), sum(view.won_by_opponent)
        my_reach = sum(view.own_open) + 1  # the next win also opens the next column
        their_reach = sum(view.opponent_open) + 1
        for j in range(n):
            if view.won_by_me[j] or view.won_by_opponent[j]:
                continue
            if j < my_reach and view.own_columns[j] + p.small_win >= 100 and mine + 1 >= majority:
                return True
            if j < their_reach and view.opponent_columns[j] + p.threat_win >= 100 and theirs + 1 >= majority:
                return True
        return False

    # ------------------------------------------------------------------ estimates
    def _expected_draw_deadwood(self, hand: int, unseen: int) -> float:
        """Mean over unseen cards c of the best deadwood after drawing c and discarding."""
        draws = mask_to_cards(unseen)
        if not draws:
            return float(cached_deadwood(hand))
        held = np.array(mask_to_cards(hand), dtype=np.int64)
        base = np.uint64(hand)
        new = _BIT[np.array(draws)][:, None] | base  # (nu, 1) 11-card hands
        hands = new & ~_BIT[held][None, :]  # discard one of the held cards
        dws = min_deadwood_batch(hands).min(axis=1)
        dws = np.minimum(dws, cached_deadwood(hand))  # or discard the drawn card itself
        return float(dws.mean())

    def _expected_improvement(self, hand: int, cards: list[int], dw: np.ndarray, unseen: int) -> np.ndarray:
        """For each discard: mean deadwood gain of the next stock draw (0 when it cannot help)."""
        draws = mask_to_cards(unseen)
        if not draws:
            return np.zeros(len(cards))
        held = mask_to_cards(hand)
        kept = np.array([[c for c in held if c != d] for d in cards], dtype=np.int64)  # (nd, 10)
        rest = np.array([hand & ~(1 << d) for d in cards], dtype=np.uint64)  # (nd,)
        new = rest[:, None] | _BIT[np.array(draws)][None, :]  # (nd, nu)
        hands = new[:, :, None] & ~_BIT[kept][:, None, :]  # (nd, nu, 10)
        best = min_deadwood_batch(hands).min(axis=2).astype(np.float64)  # (nd, nu)
        gain = np.maximum(dw[:, None] - best, 0.0)
        return gain.mean(axis=1)

    def _opponent_probabilities(self, view: ObsView) -> np.ndarray:
        """Probability that the opponent holds each card, from public facts only."""
        prob = np.zeros(NUM_CARDS)
        known = mask_to_cards(view.opponent_known)
        prob[list(known)] = 1.0
        unseen = mask_to_cards(view.unseen)
        hidden = max(0, 10 - len(known))
        if not unseen or not hidden:
            return prob
        weights = np.ones(len(unseen))
        hints = mask_to_cards(view.declined_by_opponent | view.opponent_discards)
        if hints:
            suppressed = 0
            for y in hints:
                suppressed |= meld_partners(y)
            for i, c in enumerate(unseen):
                if suppressed >> c & 1:
                    weights[i] = self.params.decline_factor
        prob_unseen = weights * (hidden / weights.sum())
        prob[list(unseen)] = np.minimum(prob_unseen, 1.0)
        return prob

    def _danger(self, view: ObsView, cards: list[int]) -> np.ndarray:
        """Probability that each discard would complete a meld in the opponent's hand."""
        prob = self._opponent_probabilities(view)
        out = np.zeros(len(cards))
        for i, card in enumerate(cards):
            r, s = card % NUM_RANKS, card // NUM_RANKS
            p1, p2, p3 = (prob[t * NUM_RANKS + r] for t in range(4) if t != s)
            miss = 1.0 - (p1 * p2 + p1 * p3 + p2 * p3 - 2.0 * p1 * p2 * p3)
            base = s * NUM_RANKS
            for a, b in ((r - 2, r - 1), (r - 1, r + 1), (r + 1, r + 2)):
                if 0 <= a and b < NUM_RANKS:
                    miss *= 1.0 - prob[base + a] * prob[base + b]
            out[i] = 1.0 - miss
        return out

