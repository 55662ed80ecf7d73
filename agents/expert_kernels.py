"""The Expert and Simple opponents compiled (Numba): one call decides a whole batch, row by
row in machine code, with the same decisions as their numpy forms
(:class:`agents.batched_expert.BatchedExpert`, :class:`agents.batched.BatchedSimple`), which
stay as the references (``engine="numpy"``).

Why compiled: in training the opponents' numpy calls were a quarter of the rollout time
(many small array operations per batch, ~9 µs per Expert decision); a loop over the rows
with the engine's compiled deadwood (:mod:`hgin_env.card_kernels`) needs no temporaries.

How they stay identical (``tests/test_compiled_opponents.py`` compares them decision for
decision on states of every format):

* every rule runs in the reference's order (single legal move, big gin, take-or-draw,
  knock, discard score) on the same observation slices, decoded with the same float
  arithmetic (``rint(float64(x) * scale)``);
* the floats that decide ties are computed in the reference's operation order, and the
  discard score is rounded as ``np.round(x, 9)`` rounds (``rint(x * 1e9) / 1e9``);
* the integer means (improvement, expected draw deadwood) are exact sums over exact counts;
* the bounds that skip the exact lookahead are the reference's (:class:`_Lookahead`), so
  the same discards stay candidates.

The kernels take the observation slices' offsets (:func:`slice_offsets`) and the Expert's
parameters as arrays, so this module knows no layout and imports nothing above the engine.
Bad rows (a hand of the wrong size, no legal discard) are reported through ``error`` and
raised by the caller with the reference's messages.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hgin_env import actions as A
from hgin_env.card_kernels import best_discard, deadwood
from hgin_env.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from hgin_env.codes import PHASE_DISCARD
from hgin_env.melds import meld_partners

#: The slices the kernels read, in the order of :func:`slice_offsets`.
SLICES = ("hand", "discard_top", "discard_rest", "opponent_known", "opponent_discards", "own_discards",
          "discard_deadwood", "deadwood", "take_deadwood", "stock_size", "phase", "opponent_passed",
          "own_columns", "opponent_columns", "own_open", "opponent_open", "won_by_me", "won_by_opponent")
(_HAND, _TOP, _REST, _KNOWN, _OPP_DISC, _OWN_DISC, _AFTER, _DW, _TAKE_DW, _STOCK, _PHASE, _PASSED,
 _OWN_COL, _OPP_COL, _OWN_OPEN, _OPP_OPEN, _WON_ME, _WON_OPP) = range(len(SLICES))
#: The Expert's parameters, in the order of :func:`expert_param_array`.
PARAMS = ("lookahead", "danger_early", "danger_late", "decline_factor", "swap_margin", "knock_any_stock",
          "knock_late", "knock_end_stock", "match_aware", "small_win", "threat_win")
(_LOOKAHEAD, _DANGER_EARLY, _DANGER_LATE, _DECLINE, _SWAP, _KNOCK_ANY, _KNOCK_LATE, _KNOCK_END, _MATCH_AWARE,
 _SMALL_WIN, _THREAT_WIN) = range(len(PARAMS))
#: ``error`` codes: [code, row, count].
BAD_DRAW_HAND, BAD_DISCARD_HAND, NO_DISCARD = 1, 2, 3

_DISCARD, _KNOCK, _DRAW, _TAKE, _PASS, _BIG_GIN = (A.DISCARD, A.KNOCK, A.DRAW_STOCK, A.TAKE_DISCARD, A.PASS,
                                                   A.BIG_GIN)
_NUM_ACTIONS = A.NUM_ACTIONS
_VALUE = np.array(CARD_VALUES, dtype=np.int64)
_PARTNERS = np.array([meld_partners(c) for c in range(NUM_CARDS)], dtype=np.int64)
_SUIT = (1 << NUM_RANKS) - 1
_FULL = (1 << NUM_CARDS) - 1
_BIG = 1 << 20


def slice_offsets(layout) -> np.ndarray:
    """The start of each of :data:`SLICES` in ``layout``'s vector (int64)."""
    return np.array([layout.slice(name).start for name in SLICES], dtype=np.int64)


def expert_param_array(params) -> np.ndarray:
    """:class:`agents.expert.ExpertParams` as the float64 array the kernel reads."""
    return np.array([float(getattr(params, name)) for name in PARAMS], dtype=np.float64)


# --------------------------------------------------------------------------- reading a row
@njit(cache=True)
def _mask(o, start: int) -> int:
    """52 card flags from ``start`` -> a 52-bit mask (flags above 0.5)."""
    m = 0
    for c in range(NUM_CARDS):
        if o[start + c] > 0.5:
            m |= 1 << c
    return m


@njit(cache=True)
def _points(x, scale: float) -> int:
    """A scaled entry back to its integer (``np.rint(float64(x) * scale)``)."""
    return int(np.rint(np.float64(x) * scale))


@njit(cache=True)
def card_count(m: int) -> int:
    """The number of cards in a mask (shared with the OpenSpiel bot's kernels)."""
    n = 0
    while m:
        m &= m - 1
        n += 1
    return n


@njit(cache=True)
def _first_card(o, start: int) -> int:
    """The first card flagged from ``start`` (-1: none)."""
    for c in range(NUM_CARDS):
        if o[start + c] > 0.5:
            return c
    return -1


# --------------------------------------------------------------------------- deadwood
@njit(cache=True)
def _melds_with(card: int, hand: int) -> bool:
    """Card ``card`` forms a set or a run with cards of ``hand`` (``agents.view.melds_with``)."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    same = 0
    for t in range(NUM_SUITS):
        if t != suit and (hand >> (t * NUM_RANKS + rank)) & 1:
            same += 1
    if same >= 2:
        return True
    row = (hand >> (suit * NUM_RANKS)) & _SUIT
    padded = (row << 2) >> rank  # bit k: rank + k - 2 held (ranks outside the suit are 0)
    below2, below1, above1, above2 = padded & 1, (padded >> 1) & 1, (padded >> 3) & 1, (padded >> 4) & 1
    return bool((below2 and below1) or (below1 and above1) or (above1 and above2))


# --------------------------------------------------------------------------- the Expert
@njit(cache=True)
def _expected_draw_deadwood(hand: int, unseen: int, current: int) -> float:
    """``_expected_draw_deadwood`` of the reference for one row: the mean over unseen u of
    the best deadwood of hand + u after a discard (u itself: ``current``); a card melding
    with nothing in the hand counts by its value (``min(current, best9 + value)``)."""
    n = card_count(unseen)
    if n == 0:
        return float(current)
    best9 = best_discard(hand)
    total = 0
    for u in range(NUM_CARDS):
        if not (unseen >> u) & 1:
            continue
        if _melds_with(u, hand):
            total += min(current, best_discard(hand | (1 << u)))
        else:
            total += min(current, best9 + _VALUE[u])
    return total / n


@njit(cache=True)
def _draw(o, legal, off, p) -> int:
    fallback = _PASS if legal[_PASS] else _DRAW
    top = _first_card(o, off[_TOP])
    if not legal[_TAKE] or top < 0:
        return fallback
    hand = _mask(o, off[_HAND])
    current = _points(o[off[_DW]], 100.0)
    take_dw = _points(o[off[_TAKE_DW]], 100.0)
    if take_dw == 0:
        return _TAKE
    if take_dw < current:  # take a card that sits in a meld and lowers the deadwood
        with_top = hand | (1 << top)
        best_card, best_dw = -1, _BIG
        for c in range(NUM_CARDS):  # first least, as min() over ascending cards
            if (with_top >> c) & 1 and c != top:
                dw = deadwood(with_top & ~(1 << c))
                if dw < best_dw:
                    best_card, best_dw = c, dw
        if deadwood(hand & ~(1 << best_card)) > take_dw - _VALUE[top]:
            return _TAKE
    if take_dw <= current - p[_SWAP]:  # the mean draw never exceeds the current deadwood
        pile = _mask(o, off[_REST]) | (1 << top)
        unseen = _FULL & ~hand & ~pile & ~_mask(o, off[_KNOWN])
        if take_dw <= _expected_draw_deadwood(hand, unseen, current) - p[_SWAP]:
            return _TAKE
    return fallback


@njit(cache=True)
def _match_point(o, off, columns: int, p) -> bool:
    """``ExpertAgent._match_point``: one small win decides the match, for me or for them."""
    majority = columns // 2 + 1
    mine = theirs = 0
    my_reach = their_reach = 1
    for j in range(columns):
        mine += o[off[_WON_ME] + j] > 0.5
        theirs += o[off[_WON_OPP] + j] > 0.5
        my_reach += o[off[_OWN_OPEN] + j] > 0.5
        their_reach += o[off[_OPP_OPEN] + j] > 0.5
    for j in range(columns):
        if o[off[_WON_ME] + j] > 0.5 or o[off[_WON_OPP] + j] > 0.5:
            continue
        own = np.float64(o[off[_OWN_COL] + j]) * 100.0
        opp = np.float64(o[off[_OPP_COL] + j]) * 100.0
        if j < my_reach and own + p[_SMALL_WIN] >= 100 and mine + 1 >= majority:
            return True
        if j < their_reach and opp + p[_THREAT_WIN] >= 100 and theirs + 1 >= majority:
            return True
    return False


@njit(cache=True)
def _opponent_probabilities(o, off, hand: int, pile: int, unseen: int, decline: float, prob) -> None:
    """``ExpertAgent._opponent_probabilities`` into ``prob`` (52 floats); the weights are
    1.0 and ``decline``, summed exactly (the caller keeps factors that round on numpy)."""
    known = _mask(o, off[_KNOWN])
    for c in range(NUM_CARDS):
        prob[c] = 1.0 if (known >> c) & 1 else 0.0
    nu = card_count(unseen)
    hidden = max(0, 10 - card_count(known))
    if nu == 0 or hidden == 0:
        return
    opp_discards = _mask(o, off[_OPP_DISC])
    own_discards = _mask(o, off[_OWN_DISC])
    upcard = pile & ~opp_discards & ~own_discards if o[off[_PASSED]] > 0.5 else 0
    hints = (own_discards & pile) | upcard | opp_discards
    suppressed = 0
    for y in range(NUM_CARDS):
        if (hints >> y) & 1:
            suppressed |= _PARTNERS[y]
    down = card_count(suppressed & unseen)
    total = (nu - down) * 1.0 + down * decline
    share = hidden / total
    for c in range(NUM_CARDS):
        if (unseen >> c) & 1:
            w = decline if (suppressed >> c) & 1 else 1.0
            prob[c] = min(w * share, 1.0)


@njit(cache=True)
def _danger(prob, card: int) -> float:
    """``ExpertAgent._danger`` of one card, in the same float order."""
    r, s = card % NUM_RANKS, card // NUM_RANKS
    # The other three suits in increasing order, as the reference reads them.
    t1, t2, t3 = (1, 2, 3) if s == 0 else ((0, 2, 3) if s == 1 else ((0, 1, 3) if s == 2 else (0, 1, 2)))
    p1, p2, p3 = prob[t1 * NUM_RANKS + r], prob[t2 * NUM_RANKS + r], prob[t3 * NUM_RANKS + r]
    miss = 1.0 - (p1 * p2 + p1 * p3 + p2 * p3 - 2.0 * p1 * p2 * p3)
    base = s * NUM_RANKS
    for a, b in ((r - 2, r - 1), (r - 1, r + 1), (r + 1, r + 2)):
        if 0 <= a and b < NUM_RANKS:
            miss *= 1.0 - prob[base + a] * prob[base + b]
    return 1.0 - miss


@njit(cache=True)
def _round9(x: float) -> float:
    """``np.round(x, 9)``: numpy multiplies by 10**9, rounds half to even and divides."""
    return np.rint(x * 1e9) / 1e9


@njit(cache=True)
def _rank_run_cap(hand: int, u: int) -> int:
    """What u's meld would leave unmelded without u (the reference's ``freed``/``run``)."""
    rank, suit = u % NUM_RANKS, u // NUM_RANKS
    same = 0
    for t in range(NUM_SUITS):
        same += (hand >> (t * NUM_RANKS + rank)) & 1
    freed = 2 * _VALUE[u] if same >= 2 else 0
    run = 0
    for k in (-2, -1, 1, 2):
        r = rank + k
        if 0 <= r < NUM_RANKS and (hand >> (suit * NUM_RANKS + r)) & 1:
            run += _VALUE[suit * NUM_RANKS + r]
    return max(freed, run)


@njit(cache=True)
def _discard(o, legal, off, columns: int, p, prob, error, row: int) -> int:
    hand = _mask(o, off[_HAND])
    if card_count(hand) != 11:
        error[0], error[1], error[2] = BAD_DISCARD_HAND, row, card_count(hand)
        return -1
    cards = np.empty(11, dtype=np.int64)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            cards[k] = c
            k += 1
    after = np.empty(11, dtype=np.int64)
    for j in range(11):
        after[j] = _points(o[off[_AFTER] + cards[j]], 100.0)
    stock = _points(o[off[_STOCK]], 31.0)
    # Knock: the least-deadwood knock card (then the higher value, then the lower id).
    kj = -1
    for j in range(11):
        if legal[_KNOCK + cards[j]]:
            if kj < 0 or after[j] < after[kj] or (after[j] == after[kj] and _VALUE[cards[j]] > _VALUE[cards[kj]]):
                kj = j
    if kj >= 0:
        dw = after[kj]
        knock = (dw == 0 or stock >= p[_KNOCK_ANY] or stock <= p[_KNOCK_END] or dw <= p[_KNOCK_LATE])
        if not knock and p[_MATCH_AWARE] != 0.0:
            knock = _match_point(o, off, columns, p)
        if knock:
            return _KNOCK + cards[kj]
    can = np.empty(11, dtype=np.bool_)
    any_discard = False
    for j in range(11):
        can[j] = legal[_DISCARD + cards[j]]
        any_discard |= can[j]
    if not any_discard:
        error[0], error[1], error[2] = NO_DISCARD, row, 0
        return -1
    pile = _mask(o, off[_REST]) | _mask(o, off[_TOP])
    unseen = _FULL & ~hand & ~pile & ~_mask(o, off[_KNOWN])
    _opponent_probabilities(o, off, hand, pile, unseen, p[_DECLINE], prob)
    stage = 1.0 - min(stock, 31) / 31.0
    weight = p[_DANGER_EARLY] + (p[_DANGER_LATE] - p[_DANGER_EARLY]) * stage
    lookahead = p[_LOOKAHEAD]
    nu = card_count(unseen)
    # The lookahead (``_Lookahead``): lone unseen cards count by value; the others' gains
    # are bounded first, and computed exactly only for discards that can still win.
    lone = np.zeros(11, dtype=np.int64)
    most = np.zeros(11, dtype=np.int64)
    room = np.empty(11, dtype=np.int64)
    danger = np.empty(11)
    for j in range(11):
        room[j] = after[j] - best_discard(hand & ~(1 << cards[j]))
        danger[j] = _danger(prob, cards[j])
    meld_cards = 0
    for u in range(NUM_CARDS):
        if not (unseen >> u) & 1:
            continue
        if _melds_with(u, hand):
            meld_cards |= 1 << u
            cap = _rank_run_cap(hand, u)
            for j in range(11):
                most[j] += min(after[j], max(0, room[j] + cap))
        else:
            for j in range(11):
                lone[j] += max(room[j] - _VALUE[u], 0)
    best_most = np.inf
    least = np.empty(11)
    for j in range(11):
        most[j] += lone[j]
        low_mean = lone[j] / nu if nu > 0 else 0.0
        high_mean = most[j] / nu if nu > 0 else 0.0
        r_low, r_high = lookahead * low_mean, lookahead * high_mean
        wd = weight * danger[j]
        least[j] = after[j] - max(r_low, r_high) + wd
        if can[j]:
            s = after[j] - min(r_low, r_high) + wd
            if s < best_most:
                best_most = s
    best_j, best_key = -1, np.inf
    for j in range(11):
        if not can[j] or least[j] > best_most + 1e-6:
            continue
        total = lone[j]
        if meld_cards:
            ten = hand & ~(1 << cards[j])
            rest = meld_cards
            while rest:
                low = rest & -rest
                rest ^= low
                total += max(after[j] - best_discard(ten | low), 0)
        improve = total / nu if nu > 0 else 0.0
        key = _round9(after[j] - lookahead * improve + weight * danger[j])
        if best_j < 0 or key < best_key or (key == best_key and _VALUE[cards[j]] > _VALUE[cards[best_j]]):
            best_j, best_key = j, key
    return _DISCARD + cards[best_j]


@njit(cache=True)
def expert_act(obs, legal, off, columns: int, p, out, error) -> None:
    """The Expert's decision for every row of ``obs`` into ``out``; the first bad row, if
    any, into ``error`` (code, row, count) and the call stops there."""
    prob = np.empty(NUM_CARDS)
    for i in range(obs.shape[0]):
        out[i] = expert_row(obs[i], legal[i], off, columns, p, prob, error, i)
        if error[0]:
            return


@njit(cache=True)
def expert_row(o, m, off, columns: int, p, prob, error, i: int) -> int:
    """The Expert's decision on one row (``o`` its observation, ``m`` its mask; ``prob`` 52
    floats of scratch): what :func:`expert_act` and the compiled opponent loop
    (:mod:`agents.opponent_loop`) ask per row. A bad row sets ``error`` (code, ``i``, count)."""
    n_legal, only = 0, -1
    for a in range(_NUM_ACTIONS):
        if m[a]:
            n_legal += 1
            if only < 0:
                only = a
    if n_legal == 1:
        return only
    if m[_BIG_GIN]:
        return _BIG_GIN
    ph = -1
    for k in range(3):
        if o[off[_PHASE] + k] > 0.5 and ph < 0:
            ph = k
    if 0 <= ph < PHASE_DISCARD:
        if m[_TAKE] and _first_card(o, off[_TOP]) >= 0:
            n = card_count(_mask(o, off[_HAND]))
            if n != 10:
                error[0], error[1], error[2] = BAD_DRAW_HAND, i, n
                return -1
        return _draw(o, m, off, p)
    return _discard(o, m, off, columns, p, prob, error, i)


# --------------------------------------------------------------------------- Simple
@njit(cache=True)
def simple_act(obs, legal, off, uniform, out) -> None:
    """Neller's Simple player for every row (``BatchedSimple``): :func:`simple_row` of each
    row with its ``uniform[i]`` (one draw per discard row, as ``uniform_choice``)."""
    for i in range(obs.shape[0]):
        out[i] = simple_row(obs[i], legal[i], off, uniform[i])


@njit(cache=True)
def simple_discards(o, off) -> bool:
    """Whether Simple decides a discard on this row (the phase one-hot's argmax, its first
    greatest entry, is the discard phase): the rows that draw a uniform for their ties."""
    ph = 0
    best_phase = o[off[_PHASE]]
    for k in range(1, 3):  # argmax: the first greatest entry
        if o[off[_PHASE] + k] > best_phase:
            ph, best_phase = k, o[off[_PHASE] + k]
    return ph == PHASE_DISCARD


@njit(cache=True)
def simple_row(o, m, off, u: float) -> int:
    """Simple's move on one row: take the face-up card only if it melds with the hand; else
    discard among the legal discards leaving the least deadwood, the ``u``-th share of them
    (``u`` uniform in [0, 1), read only on a discard row), knocking with it where that is
    legal. -1: no legal discard."""
    if not simple_discards(o, off):
        top = _first_card(o, off[_TOP])
        if m[_TAKE] and top >= 0 and _melds_with(top, _mask(o, off[_HAND])):
            return _TAKE
        return _PASS if m[_PASS] else _DRAW
    least = np.inf
    for c in range(NUM_CARDS):
        if m[_DISCARD + c] and o[off[_AFTER] + c] < least:
            least = o[off[_AFTER] + c]
    ties = 0
    for c in range(NUM_CARDS):
        if m[_DISCARD + c] and o[off[_AFTER] + c] == least:
            ties += 1
    if ties == 0:
        return -1
    pick = int(u * ties)
    for c in range(NUM_CARDS):
        if m[_DISCARD + c] and o[off[_AFTER] + c] == least:
            if pick == 0:
                return _KNOCK + c if m[_KNOCK + c] else _DISCARD + c
            pick -= 1
    return -1
