"""The Expert (:class:`agents.expert.ExpertAgent`) over a whole batch: the same decision on
every state, in a few dozen numpy calls per batch instead of one Python call per row.

How it stays identical: every rule of the scalar agent is here in the same order (single
legal move, big gin, take-or-draw, knock, discard score), read from the same observation
through :class:`hgin_env.observation.ObservationLayout` (any format's layout), with the
float arithmetic that decides ties done in the scalar agent's order (the discard score is
rounded to 9 decimals like the scalar one). The deadwood numbers the scalar agent computes
from the hand (now, after taking the top, after each discard) are the engine's exact
``deadwood``, ``take_deadwood`` and ``discard_deadwood`` slices (a 10-card hand counts at
most 98, below their clip at 100). ``tests/test_batched_expert.py`` checks the decisions
against the scalar agent on states from real matches of every profile, with other
parameters too.

Why it is fast:

* The exact lookahead (for each discard ``d`` and unseen card ``u``, the best deadwood of
  ``hand - d + u`` after one more discard) is :func:`hgin_env.melds.best_discard_deadwood_batch`
  on every (row, discard, unseen card) hand at once: a table formula, not the re-discards
  one by one. A card that melds with nothing in the hand counts only by its value, so
  those cards (most of the stock) need no hand at all (:class:`_Lookahead`).
* Only where it can change the decision: the discard scores only for rows whose knock
  check did not decide; the lookahead of the other cards only for discards whose score
  bounds let them win; the expected stock draw only for rows where the upcard beats the
  current deadwood by ``swap_margin`` (the mean draw never exceeds the current deadwood).
* The opponent's card probabilities and the danger of each discard are arrays over
  (rows, 52 cards), with no Python loop over rows.
"""

from __future__ import annotations

import numpy as np

from hgin_env import actions as A
from hgin_env.batch import cards_of_masks
from hgin_env.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from hgin_env.compiled import resolve_engine
from hgin_env.melds import (
    CARD_BITS_U64,
    best_discard_deadwood_batch,
    deadwood_without_batch,
    meld_partners,
    min_deadwood_batch,
)
from hgin_env.observation import ObservationLayout

from .base import SeededAgent
from .expert import ExpertParams, expert_params

_VALUES = np.array(CARD_VALUES, dtype=np.int64)
_FULL = np.uint64((1 << NUM_CARDS) - 1)
#: _PARTNERS[y, c]: card c could meld with card y (``meld_partners``); float for a BLAS product.
_PARTNERS = np.array([[meld_partners(y) >> c & 1 for c in range(NUM_CARDS)] for y in range(NUM_CARDS)],
                     dtype=np.float32)
#: The other three suits of each suit, in increasing order (as the scalar danger reads them).
_OTHER_SUITS = np.array([[t for t in range(NUM_SUITS) if t != s] for s in range(NUM_SUITS)])
#: The rank pairs around a card that complete a run with it, as offsets.
_RUN_PAIRS = ((-2, -1), (-1, 1), (1, 2))
_BIG = 1 << 20


def _masks(bits: np.ndarray) -> np.ndarray:
    """Rows of 52 card flags -> 52-bit uint64 masks (card c is bit c: little-endian bytes)."""
    packed = np.zeros((bits.shape[0], 8), dtype=np.uint8)
    packed[:, :7] = np.packbits(bits, axis=1, bitorder="little")
    return packed.view("<u8").ravel().astype(np.uint64)


def _first_best(allowed: np.ndarray, key: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """Column per row: the allowed entry with the least ``key``, then the highest card
    value, then the lowest card id (``cards`` ascending along the row): the scalar agent's
    ``min(..., key=lambda c: (key, -CARD_VALUES[c], c))``."""
    k = np.where(allowed, key, np.inf)
    tie = allowed & (k == k.min(axis=1, keepdims=True))
    v = np.where(tie, _VALUES[cards], -1)
    tie &= v == v.max(axis=1, keepdims=True)
    return tie.argmax(axis=1)


class BatchedExpert(SeededAgent):
    """:class:`agents.expert.ExpertAgent` on a batch: ``act(observations[N, D], masks[N, 108])``.

    Takes the scalar agent's arguments (``seed``, ``columns`` or ``layout``, and
    :class:`~agents.expert.ExpertParams` by keyword, validated the same way) and decides as
    it does on every state. The agent is deterministic: ``seed`` and ``reset`` only keep the
    batched interface.

    ``engine`` (``hgin_env.compiled.resolve_engine``: "numba" where numba is installed,
    ``$HGIN_ENGINE``, or "numpy") picks the compiled decision loop
    (:func:`agents.expert_kernels.expert_act`) or the numpy one in this module, its
    reference. A decline factor whose weights do not sum exactly (see ``_exact_weights``)
    always runs the numpy form, which sums them as the scalar agent does.
    """

    name = "expert"

    def __init__(self, seed: int | None = None, columns: int | None = None,
                 layout: ObservationLayout | None = None, engine: str | None = None, **params: float):
        self.params: ExpertParams = expert_params(**params)
        super().__init__(seed=seed, columns=columns, layout=layout)
        f = float(self.params.decline_factor)
        # Summing weights 1.0 and f is exact in any order when every partial sum is a
        # multiple of f's binary denominator below 2**53; else sum row by row as the scalar.
        den = f.as_integer_ratio()[1] if np.isfinite(f) else 1 << 60
        self._exact_weights = NUM_CARDS * max(1.0, abs(f)) * den < 2 ** 53
        self.engine = resolve_engine(engine)
        self._kernel_args = None
        if self.engine == "numba" and self._exact_weights:
            from . import expert_kernels as K

            self._kernel_args = (K.slice_offsets(self.layout), self.layout.columns,
                                 K.expert_param_array(self.params))

    def compiled_form(self):
        """Its form for the compiled opponent loop (:mod:`agents.opponent_loop`), None where
        it runs the numpy form."""
        if self._kernel_args is None:
            return None
        from .opponent_loop import EXPERT, CompiledForm

        offsets, columns, params = self._kernel_args
        return CompiledForm(EXPERT, self, self.layout.size, offsets, params, columns)

    # ------------------------------------------------------------------ input
    def _check(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs = np.asarray(observations)
        legal = np.asarray(masks)
        size = self.layout.size
        if obs.ndim != 2 or obs.shape[1] != size:
            raise ValueError(f"observations must have shape (N, {size}) for the layout "
                             f"({self.layout.format}, {self.layout.columns} columns), got {obs.shape}")
        if legal.shape != (obs.shape[0], A.NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({obs.shape[0]}, {A.NUM_ACTIONS}), got {legal.shape}")
        legal = legal.astype(bool)
        empty = np.flatnonzero(~legal.any(axis=1))
        if empty.size:
            raise ValueError(f"row {int(empty[0])} has no legal action in its mask")
        return obs, legal

    # ------------------------------------------------------------------ decisions
    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, legal = self._check(observations, masks)
        if self._kernel_args is not None:
            return self._act_compiled(obs, legal)
        return self._act_numpy(obs, legal)

    def _act_compiled(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        from . import expert_kernels as K

        out = np.empty(obs.shape[0], dtype=np.int64)
        error = np.zeros(3, dtype=np.int64)
        K.expert_act(np.ascontiguousarray(obs), np.ascontiguousarray(legal), *self._kernel_args, out, error)
        code, _row, count = error
        if code == K.BAD_DRAW_HAND:
            raise ValueError(f"a draw decision needs a hand of 10 cards; a row has {count}")
        if code == K.BAD_DISCARD_HAND:
            raise ValueError(f"a discard decision needs a hand of 11 cards; a row has {count}")
        if code == K.NO_DISCARD:
            raise ValueError("a discard decision where the Expert does not knock needs a legal discard")
        return out

    def _act_numpy(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        lay = self.layout
        n = obs.shape[0]
        out = np.full(n, -1, dtype=np.int64)
        single = legal.sum(axis=1) == 1
        out[single] = legal[single].argmax(axis=1)
        big = ~single & legal[:, A.BIG_GIN]
        out[big] = A.BIG_GIN
        rest = ~single & ~big
        phase = lay.get(obs, "phase")
        drawing = rest & phase.any(axis=1) & (phase.argmax(axis=1) < 2)  # "over" plays as discard
        rows = np.flatnonzero(drawing)
        if rows.size:
            out[rows] = self._draw(obs[rows], legal[rows])
        rows = np.flatnonzero(rest & ~drawing)
        if rows.size:
            out[rows] = self._discard(obs[rows], legal[rows])
        return out

    def _cards(self, obs: np.ndarray, name: str) -> np.ndarray:
        return _masks(self.layout.get(obs, name) > 0.5)

    def _deadwood(self, obs: np.ndarray, name: str) -> np.ndarray:
        """A deadwood slice in points: the engine's exact numbers (a hand of 10 cards counts
        at most 98, below the slice's clip at 100), the ones the scalar agent computes from
        the hand with :mod:`hgin_env.melds`."""
        return np.rint(self.layout.get(obs, name).astype(np.float64) * self.layout.scale(name)).astype(np.int64)

    def _unseen(self, obs: np.ndarray, hand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unseen cards (``ObsView.unseen``) and the discard pile, as masks."""
        top = self._cards(obs, "discard_top")
        pile = self._cards(obs, "discard_rest") | top
        return _FULL & ~hand & ~pile & ~self._cards(obs, "opponent_known"), pile

    def _draw(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        p = self.params
        out = np.where(legal[:, A.PASS], A.PASS, A.DRAW_STOCK)
        top_v = self.layout.get(obs, "discard_top") > 0.5
        cand = np.flatnonzero(legal[:, A.TAKE_DISCARD] & top_v.any(axis=1))
        if not cand.size:
            return out
        obs = obs[cand]
        top = top_v[cand].argmax(axis=1)
        hand = self._cards(obs, "hand")
        _check_size(hand, 10, "draw")
        current, take_dw = self._deadwood(obs, "deadwood")[:, 0], self._deadwood(obs, "take_deadwood")[:, 0]
        take = take_dw == 0
        better = np.flatnonzero(~take & (take_dw < current))
        if better.size:  # take a card that sits in a meld and lowers the deadwood
            with_top = hand[better] | CARD_BITS_U64[top[better]]
            cards = cards_of_masks(with_top, 11)
            after = deadwood_without_batch(with_top, cards).astype(np.int64)
            after[cards == top[better, None]] = _BIG  # the taken card cannot be thrown back
            best_card = cards[np.arange(better.size), after.argmin(axis=1)]  # first least, as min()
            rest = min_deadwood_batch(hand[better] & ~CARD_BITS_U64[best_card])
            take[better] = rest > take_dw[better] - _VALUES[top[better]]
        # The mean draw deadwood never exceeds the current deadwood: only rows where the take
        # beats current - swap_margin can take on it.
        need = np.flatnonzero(~take & (take_dw <= current - p.swap_margin))
        if need.size:
            unseen, _pile = self._unseen(obs[need], hand[need])
            draw_dw = _expected_draw_deadwood(hand[need], unseen, current[need])
            take[need] = take_dw[need] <= draw_dw - p.swap_margin
        out[cand[take]] = A.TAKE_DISCARD
        return out

    def _discard(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        p, lay = self.params, self.layout
        n = obs.shape[0]
        r = np.arange(n)
        hand = self._cards(obs, "hand")
        _check_size(hand, 11, "discard")
        cards = cards_of_masks(hand, 11)  # (n, 11) ascending
        after = self._deadwood(obs, "discard_deadwood")[r[:, None], cards]
        can_discard = legal[r[:, None], A.DISCARD + cards]
        can_knock = legal[r[:, None], A.KNOCK + cards]
        stock = np.rint(lay.get(obs, "stock_size").astype(np.float64)[:, 0] * lay.scale("stock_size")).astype(np.int64)
        out = np.full(n, -1, dtype=np.int64)
        knocking = np.flatnonzero(can_knock.any(axis=1))
        if knocking.size:
            j = _first_best(can_knock[knocking], after[knocking], cards[knocking])
            card, dw = cards[knocking, j], after[knocking, j]
            s = stock[knocking]
            knock = (dw == 0) | (s >= p.knock_any_stock) | (s <= p.knock_end_stock) | (dw <= p.knock_late)
            if p.match_aware:
                knock |= self._match_point(obs[knocking])
            out[knocking[knock]] = A.KNOCK + card[knock]
        score_rows = np.flatnonzero(out < 0)
        if not score_rows.size:
            return out
        obs, hand, cards = obs[score_rows], hand[score_rows], cards[score_rows]
        after, stock = after[score_rows], stock[score_rows]
        unseen, pile = self._unseen(obs, hand)
        can_discard = can_discard[score_rows]
        if not can_discard.any(axis=1).all():
            raise ValueError("a discard decision where the Expert does not knock needs a legal discard")
        dw = after.astype(np.float64)
        danger = self._danger(obs, cards, unseen, pile)
        stage = 1.0 - np.minimum(stock, 31) / 31.0
        weight = (p.danger_early + (p.danger_late - p.danger_early) * stage)[:, None]
        look = _Lookahead(hand, cards, after, unseen)
        # Skip the exact lookahead where it cannot matter: the gains of the cards that meld
        # with the hand lie in [0, after[d]] each, which bounds every score; a discard whose
        # least score is above some discard's greatest (by far more than float error and
        # the rounding to 9 decimals) cannot be chosen. NaN bounds keep every discard.
        low, high = look.bounds()
        reach = p.lookahead * np.stack([low, high])
        least = dw - reach.max(axis=0) + weight * danger
        most = dw - reach.min(axis=0) + weight * danger
        best_most = np.where(can_discard, most, np.inf).min(axis=1, keepdims=True)
        candidate = can_discard & ~(least > best_most + 1e-6)
        improve = look.exact(candidate)
        score = dw - p.lookahead * improve + weight * danger
        # Ties: the scalar rounds each np.float64 score with round(x, 9), i.e. np.round.
        j = _first_best(candidate, np.round(score, 9), cards)
        out[score_rows] = A.DISCARD + cards[np.arange(len(score_rows)), j]
        return out

    # ------------------------------------------------------------------ knock policy
    def _match_point(self, obs: np.ndarray) -> np.ndarray:
        """``ExpertAgent._match_point`` per row."""
        p, lay = self.params, self.layout

        def values(name: str) -> np.ndarray:
            return lay.get(obs, name).astype(np.float64) * lay.scale(name, 100)

        def flags(name: str) -> np.ndarray:
            return lay.get(obs, name) > 0.5

        won_me, won_opp = flags("won_by_me"), flags("won_by_opponent")
        columns = won_me.shape[1]
        majority = columns // 2 + 1
        mine, theirs = won_me.sum(axis=1, keepdims=True), won_opp.sum(axis=1, keepdims=True)
        my_reach = flags("own_open").sum(axis=1, keepdims=True) + 1
        their_reach = flags("opponent_open").sum(axis=1, keepdims=True) + 1
        j = np.arange(columns)[None, :]
        free = ~won_me & ~won_opp
        me = (j < my_reach) & (values("own_columns") + p.small_win >= 100) & (mine + 1 >= majority)
        them = (j < their_reach) & (values("opponent_columns") + p.threat_win >= 100) & (theirs + 1 >= majority)
        return (free & (me | them)).any(axis=1)

    # ------------------------------------------------------------------ danger
    def _opponent_probabilities(self, obs: np.ndarray, unseen: np.ndarray, pile: np.ndarray) -> np.ndarray:
        """``ExpertAgent._opponent_probabilities`` per row: (n, 52) float64."""
        lay = self.layout
        known_v = lay.get(obs, "opponent_known") > 0.5
        prob = known_v.astype(np.float64)
        unseen_v = _bits(unseen)
        nu = unseen_v.sum(axis=1)
        hidden = np.maximum(0, 10 - known_v.sum(axis=1))
        live = np.flatnonzero((nu > 0) & (hidden > 0))
        if not live.size:
            return prob
        opp_discards = self._cards(obs, "opponent_discards")
        own_discards = self._cards(obs, "own_discards")
        passed = lay.get(obs, "opponent_passed")[:, 0] > 0.5
        upcard = np.where(passed, pile & ~opp_discards & ~own_discards, np.uint64(0))
        hints = (own_discards & pile) | upcard | opp_discards
        suppressed = (_bits(hints[live]).astype(np.float32) @ _PARTNERS) > 0.5  # (live, 52)
        f = self.params.decline_factor
        unseen_l = unseen_v[live]
        weights = np.where(suppressed & unseen_l, f, 1.0)
        if self._exact_weights:
            down = (suppressed & unseen_l).sum(axis=1)
            total = (nu[live] - down) * 1.0 + down * f
        else:  # the scalar's own sum, row by row (only for factors that round)
            total = np.array([float(weights[i][unseen_l[i]].sum()) for i in range(live.size)])
        with np.errstate(divide="ignore", invalid="ignore"):
            prob_unseen = np.minimum(weights * (hidden[live] / total)[:, None], 1.0)
        prob[live] = np.where(unseen_l, prob_unseen, prob[live])
        return prob

    def _danger(self, obs: np.ndarray, cards: np.ndarray, unseen: np.ndarray, pile: np.ndarray) -> np.ndarray:
        """``ExpertAgent._danger`` for each card of ``cards`` (n, k), same float order."""
        prob = self._opponent_probabilities(obs, unseen, pile)
        n = prob.shape[0]
        grid = prob.reshape(n, NUM_SUITS, NUM_RANKS)
        rows = np.arange(n)[:, None]
        rank, suit = cards % NUM_RANKS, cards // NUM_RANKS
        p1, p2, p3 = (grid[rows, _OTHER_SUITS[suit, t], rank] for t in range(3))
        miss = 1.0 - (p1 * p2 + p1 * p3 + p2 * p3 - 2.0 * p1 * p2 * p3)
        padded = np.zeros((n, NUM_SUITS, NUM_RANKS + 4))
        padded[:, :, 2:-2] = grid
        for a, b in _RUN_PAIRS:
            inside = (rank + a >= 0) & (rank + b < NUM_RANKS)
            term = 1.0 - padded[rows, suit, rank + 2 + a] * padded[rows, suit, rank + 2 + b]
            miss = np.where(inside, miss * term, miss)
        return 1.0 - miss


def _bits(masks: np.ndarray) -> np.ndarray:
    """52-bit masks -> (n, 52) bool."""
    return (masks[:, None] & CARD_BITS_U64) != 0


def _check_size(hand: np.ndarray, size: int, phase: str) -> None:
    counts = np.bitwise_count(hand) if hasattr(np, "bitwise_count") else _bits(hand).sum(axis=1)
    bad = np.flatnonzero(counts != size)
    if bad.size:
        raise ValueError(f"a {phase} decision needs a hand of {size} cards; a row has {int(counts[bad[0]])}")


def _row_means(values: np.ndarray, row_of: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sums of the entries of each row (``row_of`` sorted, as ``np.nonzero`` gives it) and
    their counts."""
    counts = np.bincount(row_of, minlength=n)
    sums = np.zeros((n,) + values.shape[1:], dtype=np.int64)
    has = np.flatnonzero(counts)
    if has.size:
        starts = np.cumsum(counts) - counts
        sums[has] = np.add.reduceat(values, starts[has], axis=0)
    return sums, counts


def _expected_draw_deadwood(hand: np.ndarray, unseen: np.ndarray, current: np.ndarray) -> np.ndarray:
    """``ExpertAgent._expected_draw_deadwood`` per row: the mean over unseen cards u of the
    best deadwood of hand + u after a discard (which may be u itself: the current deadwood).
    A card that melds with nothing in the hand is deadwood in every arrangement, so its
    best is ``min(current, best9 + value(u))`` (``best9``: the hand's best after one more
    discard); only the others take a hand of their own."""
    n = hand.shape[0]
    unseen_v = _bits(unseen)
    counts = unseen_v.sum(axis=1)
    lone = unseen_v & ~_melds_with_hand(hand)
    best9 = best_discard_deadwood_batch(hand).astype(np.int64)
    lone_rows, lone_cards = np.nonzero(lone)
    by_value = np.bincount(lone_rows * 11 + _VALUES[lone_cards], minlength=n * 11).reshape(n, 11)
    sums = (by_value * np.minimum(current[:, None], best9[:, None] + np.arange(11))).sum(axis=1)
    row, card = np.nonzero(unseen_v & ~lone)
    if row.size:
        best = best_discard_deadwood_batch(hand[row] | CARD_BITS_U64[card]).astype(np.int64)
        sums += _row_means(best, row, n)[0]
    # The scalar's mean of small ints is exact: their sum over their count.
    return np.where(counts > 0, sums / np.maximum(counts, 1), current.astype(np.float64))


def _melds_with_hand(hand: np.ndarray) -> np.ndarray:
    """(n, 52) bool: card c forms a set or run with cards of ``hand[i]`` (as
    :func:`agents.view.melds_with`, for every card at once)."""
    grid = _bits(hand).reshape(-1, NUM_SUITS, NUM_RANKS)
    same_rank = grid.sum(axis=1, keepdims=True) - grid >= 2
    padded = np.zeros(grid.shape[:2] + (NUM_RANKS + 4,), dtype=bool)
    padded[:, :, 2:-2] = grid
    g = [padded[:, :, 2 + k:2 + k + NUM_RANKS] for k in (-2, -1, 0, 1, 2)]  # rank + k
    run = (g[0] & g[1]) | (g[1] & g[3]) | (g[3] & g[4])
    return (same_rank | run).reshape(-1, NUM_CARDS)


class _Lookahead:
    """``ExpertAgent._expected_improvement`` for each card ``d`` of ``cards`` (n, 11): the
    mean over unseen u of max(0, after[d] - best deadwood of hand - d + u after one more
    discard).

    Letting that discard be u itself only adds ``after[d]`` to the minimum, which the gain's
    clip at 0 ignores, so the minimum is :func:`best_discard_deadwood_batch`. A card u that
    melds with nothing in the hand is deadwood in every arrangement of hand - d + u, so its
    best is ``min(after[d], best9[d] + value(u))`` with ``best9[d]`` the best deadwood of
    hand - d after one more discard: those cards only count by value, and the others'
    gains are bounded (:meth:`bounds`) until :meth:`exact` computes them.
    """

    def __init__(self, hand: np.ndarray, cards: np.ndarray, after: np.ndarray, unseen: np.ndarray):
        n = hand.shape[0]
        self.hand, self.cards, self.after = hand, cards, after
        unseen_v = _bits(unseen)
        self.counts = unseen_v.sum(axis=1)
        lone = unseen_v & ~_melds_with_hand(hand)
        # Lone cards: sum over values v of (cards of value v) * max(0, after - best9 - v).
        without = hand[:, None] & ~CARD_BITS_U64[cards]  # (n, 11) ten-card hands
        room = after - best_discard_deadwood_batch(without).astype(np.int64)
        lone_rows, lone_cards = np.nonzero(lone)
        by_value = np.bincount(lone_rows * 11 + _VALUES[lone_cards], minlength=n * 11).reshape(n, 11)
        self.lone = (by_value[:, None, :] * np.maximum(room[:, :, None] - np.arange(11), 0)).sum(axis=2)
        self.row, self.card = np.nonzero(unseen_v & ~lone)
        # The others: hand - d - x + u loses at most what u's meld would leave unmelded
        # without u (two cards of its rank, or its run neighbours within two ranks), so
        # gain(d, u) <= room[d] + that (and <= after[d]).
        grid = _bits(hand).reshape(n, NUM_SUITS, NUM_RANKS)
        row, card = self.row, self.card
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        freed = np.where(grid[row, :, rank].sum(axis=1) >= 2, 2 * _VALUES[card], 0)
        run = np.zeros(card.size, dtype=np.int64)
        for k in (-2, -1, 1, 2):
            near = np.clip(rank + k, 0, NUM_RANKS - 1)
            held = (rank + k == near) & grid[row, suit, near]
            run += np.where(held, _VALUES[suit * NUM_RANKS + near], 0)
        cap = np.minimum(after[row], np.maximum(0, room[row] + np.maximum(freed, run)[:, None]))
        self.most = self.lone + _row_means(cap, row, n)[0]

    def _mean(self, sums: np.ndarray) -> np.ndarray:
        # The scalar's mean of integer-valued gains is exact: their sum over their count.
        counts = self.counts[:, None]
        return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Least and greatest possible improvement of each card."""
        return self._mean(self.lone), self._mean(self.most)

    def exact(self, wanted: np.ndarray) -> np.ndarray:
        """The improvement where ``wanted`` (n, 11) is set (elsewhere the lone cards' part)."""
        sums = self.lone.copy()
        if self.row.size:
            pair, d = np.nonzero(wanted[self.row])  # (row, u) pairs x wanted discards
            row = self.row[pair]
            eleven = (self.hand[row] | CARD_BITS_U64[self.card[pair]]) & ~CARD_BITS_U64[self.cards[row, d]]
            gain = np.maximum(self.after[row, d] - best_discard_deadwood_batch(eleven), 0)
            n, k = sums.shape
            sums += np.bincount(row * k + d, weights=gain, minlength=n * k).astype(np.int64).reshape(n, k)
        return self._mean(sums)
