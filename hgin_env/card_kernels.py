"""Compiled card kernels (Numba) the engine's fast paths share: the least deadwood of a hand,
the deadwood after each discard and after taking a card, the showdown, and the table part of
an observation vector. The batched engine's step (:mod:`hgin_env.batch.kernels`) and the
scalar observer (:func:`hgin_env.observation.encode`) both call them.

Why compiled: these are the inner loops of every step (the deadwood of an 11-card hand
after each discard, a knock's best arrangement against the defender's lay-offs); in plain
loops over 52-bit masks and lookup tables they cost well under a microsecond, where the
Python and numpy references (:mod:`hgin_env.melds`, :mod:`hgin_env.scoring`) cost tens.
Each function names the reference it mirrors; tests/test_compiled_engine.py compares them
on random and hand-built hands, and the differential replays whole games.

Hands are 52-bit masks as int64 (``uint64`` arrays viewed as ``int64``: mixing unsigned and
signed integers turns Numba's arithmetic into floats). The first call compiles and caches
the machine code beside this file (``cache=True``); later processes load it.

This module imports numba; :mod:`hgin_env.compiled` decides whether it is used. It imports
nothing above the engine layer: the observation's scales and offsets come as arguments.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, RANK_VALUES
from .codes import BIG_GIN_KIND, GIN_KIND, KNOCK_KIND, NO_DW, PHASE_DISCARD, UNDERCUT_KIND
from .melds import _BEST_REMOVAL, RUN_DEADWOOD, SET_OPTIONS

# Lookup tables, frozen into the compiled code as constants.
_RUN = RUN_DEADWOOD.astype(np.int64)  # runs-only deadwood of a 13-bit suit mask
_SET_OPT = np.zeros((16, 6), dtype=np.int64)  # suit subsets a set may take, per 4-bit suit pattern
_SET_NOPT = np.zeros(16, dtype=np.int64)
for _p, _opts in enumerate(SET_OPTIONS):
    _SET_OPT[_p, :len(_opts)] = _opts
    _SET_NOPT[_p] = len(_opts)
#: Per suit mask: the least runs-only deadwood without one of its cards, minus its own.
_REMOVAL = _BEST_REMOVAL.astype(np.int64)
_RANK_VALUE = np.array(RANK_VALUES, dtype=np.int64)
_CARD_VALUE = np.array(CARD_VALUES, dtype=np.int64)

_SUIT = 0x1FFF
#: Scratch sizes of the showdown (:func:`settle_hand`): melds of a 10-card hand (one suit of
#: ten cards holds 36 runs, the most), melds in a collection (10 cards: 3), lay-off chains
#: (two per run, one per three-card set).
_MAX_MELDS = 64
_MAX_DEPTH = 4
_MAX_CHAINS = 8


# --------------------------------------------------------------------------- deadwood
@njit(cache=True)
def _bit_index(low: int) -> int:
    """The index of the one bit set in ``low``."""
    i = 0
    while not (low >> i) & 1:
        i += 1
    return i


@njit(cache=True)
def _least_over_set_choices(s0: int, s1: int, s2: int, s3: int, sr: int, drop_one: bool) -> int:
    """The least, over every choice of sets (none, a three-card subset or the four-card set
    at each rank of ``sr``, the ranks held three or more times; at most three in 11 cards),
    of the runs-only lookups of the four suits left; with ``drop_one``, plus the best
    one-card removal from one of them (``melds._BEST_REMOVAL``: a card dropped from a chosen
    set is covered by the choice without that set)."""
    # Up to three set ranks; a missing one has the single option "no set" at rank 0.
    r0 = r1 = r2 = 0
    p0 = p1 = p2 = 0
    k = 0
    while sr:
        low = sr & -sr
        sr ^= low
        r = _bit_index(low)
        p = ((s0 >> r) & 1) | (((s1 >> r) & 1) << 1) | (((s2 >> r) & 1) << 2) | (((s3 >> r) & 1) << 3)
        if k == 0:
            r0, p0 = r, p
        elif k == 1:
            r1, p1 = r, p
        else:
            r2, p2 = r, p
        k += 1
    best = 1 << 30
    for a in range(_SET_NOPT[p0]):
        o0 = _SET_OPT[p0, a]
        for b in range(_SET_NOPT[p1]):
            o1 = _SET_OPT[p1, b]
            for c in range(_SET_NOPT[p2]):
                o2 = _SET_OPT[p2, c]
                x0 = ((o0 & 1) << r0) | ((o1 & 1) << r1) | ((o2 & 1) << r2)
                x1 = (((o0 >> 1) & 1) << r0) | (((o1 >> 1) & 1) << r1) | (((o2 >> 1) & 1) << r2)
                x2 = (((o0 >> 2) & 1) << r0) | (((o1 >> 2) & 1) << r1) | (((o2 >> 2) & 1) << r2)
                x3 = (((o0 >> 3) & 1) << r0) | (((o1 >> 3) & 1) << r1) | (((o2 >> 3) & 1) << r2)
                l0, l1, l2, l3 = s0 & ~x0, s1 & ~x1, s2 & ~x2, s3 & ~x3
                dw = _RUN[l0] + _RUN[l1] + _RUN[l2] + _RUN[l3]
                if drop_one:
                    dw += min(min(_REMOVAL[l0], _REMOVAL[l1]), min(_REMOVAL[l2], _REMOVAL[l3]))
                if dw < best:
                    best = dw
    return best


@njit(cache=True)
def deadwood(m: int) -> int:
    """Minimum deadwood of a hand mask of at most 11 cards (``melds.deadwood_of_mask``): the
    runs-only lookups of the four suits, or the least over the choices of sets where a rank
    is held three or more times."""
    s0 = m & _SUIT
    s1 = (m >> 13) & _SUIT
    s2 = (m >> 26) & _SUIT
    s3 = (m >> 39) & _SUIT
    sr = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    if sr == 0:
        return _RUN[s0] + _RUN[s1] + _RUN[s2] + _RUN[s3]
    return _least_over_set_choices(s0, s1, s2, s3, sr, False)


@njit(cache=True)
def best_discard(m: int) -> int:
    """The least deadwood of hand ``m`` (1 to 11 cards) without one of its cards
    (``melds.best_discard_deadwood_batch``, its reference)."""
    s0 = m & _SUIT
    s1 = (m >> 13) & _SUIT
    s2 = (m >> 26) & _SUIT
    s3 = (m >> 39) & _SUIT
    sr = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    return _least_over_set_choices(s0, s1, s2, s3, sr, True)


@njit(cache=True)
def _fill_after(hand: int, row: np.ndarray) -> None:
    """``row[c]``: the deadwood of ``hand`` without card c, ``NO_DW`` for cards not held
    (``melds.deadwood_without_batch``): without a possible set, dropping a card changes its
    own suit's lookup only."""
    for c in range(NUM_CARDS):
        row[c] = NO_DW
    s0 = hand & _SUIT
    s1 = (hand >> 13) & _SUIT
    s2 = (hand >> 26) & _SUIT
    s3 = (hand >> 39) & _SUIT
    if (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3):
        m = hand
        while m:
            low = m & -m
            m ^= low
            row[_bit_index(low)] = deadwood(hand ^ low)
        return
    total = _RUN[s0] + _RUN[s1] + _RUN[s2] + _RUN[s3]
    for s in range(4):
        sm = (hand >> (13 * s)) & _SUIT
        rest = total - _RUN[sm]
        for r in range(NUM_RANKS):
            if (sm >> r) & 1:
                row[13 * s + r] = rest + _RUN[sm & ~(1 << r)]


@njit(cache=True)
def _best_after_take(hand: int, top: int) -> int:
    """The least deadwood after taking card ``top`` into ``hand`` and discarding one of the
    hand's own cards (the observation's ``take_deadwood``; the taken card may not go back)."""
    eleven = hand | (1 << top)
    best = NO_DW
    m = hand
    while m:
        low = m & -m
        m ^= low
        dw = deadwood(eleven ^ low)
        if dw < best:
            best = dw
    return best


# --------------------------------------------------------------------------- showdown
@njit(cache=True)
def _defender_reply(d_mask, chain_prefix, chain_len, n_chains) -> int:
    """The defender's least deadwood over every union of lay-off chain prefixes
    (``scoring._reply_to_chains``): chains meeting from two runs may split anywhere."""
    best = deadwood(d_mask)
    if n_chains == 0:
        return best
    choice = np.zeros(_MAX_CHAINS, dtype=np.int64)
    while True:
        # Next prefix combination (mixed radix over chain_len[c] + 1); the all-zero one is done.
        c = 0
        while c < n_chains:
            choice[c] += 1
            if choice[c] <= chain_len[c]:
                break
            choice[c] = 0
            c += 1
        if c == n_chains:
            return best
        laid = 0
        for j in range(n_chains):
            laid |= chain_prefix[j, choice[j]]
        dw = deadwood(d_mask & ~laid)
        if dw < best:
            best = dw


@njit(cache=True)
def settle_hand(k_mask, d_mask, limit, multiplier, gin_bonus, undercut_bonus, big_gin_bonus):
    """The showdown's result (``scoring.settle``): (kind code, knocker wins, points). The
    knocker's hand is legal (10 cards within ``limit``, or 11 melded for big gin). For a
    knock the knocker picks, among every collection of disjoint melds within the limit,
    the best (value, -deadwood) against the defender's best lay-offs."""
    n_cards = 0
    m = k_mask
    while m:
        m &= m - 1
        n_cards += 1
    if n_cards == 11:
        return BIG_GIN_KIND, True, (big_gin_bonus + deadwood(d_mask)) * multiplier
    if deadwood(k_mask) == 0:
        return GIN_KIND, True, (gin_bonus + deadwood(d_mask)) * multiplier
    # Every meld of the knocker's hand: (mask, value, kind/extent) with kind 0 = set, 1 = run.
    melds = np.zeros(_MAX_MELDS, dtype=np.int64)
    values = np.zeros(_MAX_MELDS, dtype=np.int64)
    is_run = np.zeros(_MAX_MELDS, dtype=np.bool_)
    suit_of = np.zeros(_MAX_MELDS, dtype=np.int64)
    lo_of = np.zeros(_MAX_MELDS, dtype=np.int64)
    hi_of = np.zeros(_MAX_MELDS, dtype=np.int64)
    nm = 0
    for s in range(4):
        sm = (k_mask >> (13 * s)) & _SUIT
        for lo in range(NUM_RANKS - 2):
            run = 0
            value = 0
            for hi in range(lo, NUM_RANKS):
                if not (sm >> hi) & 1:
                    break
                run |= 1 << (13 * s + hi)
                value += _RANK_VALUE[hi]
                if hi - lo >= 2:
                    melds[nm] = run
                    values[nm] = value
                    is_run[nm] = True
                    suit_of[nm] = s
                    lo_of[nm] = lo
                    hi_of[nm] = hi
                    nm += 1
    for r in range(NUM_RANKS):
        p = 0
        for s in range(4):
            p |= ((k_mask >> (13 * s + r)) & 1) << s
        for j in range(1, _SET_NOPT[p]):
            opt = _SET_OPT[p, j]
            mask = 0
            count = 0
            for s in range(4):
                if (opt >> s) & 1:
                    mask |= 1 << (13 * s + r)
                    count += 1
            melds[nm] = mask
            values[nm] = count * _RANK_VALUE[r]
            lo_of[nm] = r
            hi_of[nm] = count
            nm += 1
    total = 0
    for c in range(NUM_CARDS):
        if (k_mask >> c) & 1:
            total += _CARD_VALUE[c]
    # Depth-first over collections of disjoint melds (in index order), the empty one first.
    start = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    used = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    melded = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    chosen = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    chain_prefix = np.zeros((_MAX_CHAINS, NUM_RANKS + 1), dtype=np.int64)
    chain_len = np.zeros(_MAX_CHAINS, dtype=np.int64)
    best_value = -(1 << 30)
    best_k_dw = 1 << 30
    depth = 0
    visit = True
    while depth >= 0:
        if visit:
            visit = False
            k_dw = total - melded[depth]
            if k_dw <= limit:
                # The lay-off chains this collection exposes (scoring._layoff_chains).
                n_chains = 0
                for j in range(depth):
                    i = chosen[j]
                    if is_run[i]:
                        base = 13 * suit_of[i]
                        length = 0
                        r = lo_of[i] - 1
                        while r >= 0 and (d_mask >> (base + r)) & 1:
                            length += 1
                            chain_prefix[n_chains, length] = chain_prefix[n_chains, length - 1] | (1 << (base + r))
                            r -= 1
                        if length:
                            chain_len[n_chains] = length
                            n_chains += 1
                        length = 0
                        r = hi_of[i] + 1
                        while r < NUM_RANKS and (d_mask >> (base + r)) & 1:
                            length += 1
                            chain_prefix[n_chains, length] = chain_prefix[n_chains, length - 1] | (1 << (base + r))
                            r += 1
                        if length:
                            chain_len[n_chains] = length
                            n_chains += 1
                    elif hi_of[i] == 3:  # a three-card set takes its fourth card
                        r = lo_of[i]
                        for s in range(4):
                            card = 13 * s + r
                            if not (melds[i] >> card) & 1 and (d_mask >> card) & 1:
                                chain_prefix[n_chains, 1] = 1 << card
                                chain_len[n_chains] = 1
                                n_chains += 1
                d_dw = _defender_reply(d_mask, chain_prefix, chain_len, n_chains)
                if k_dw < d_dw:
                    value = d_dw - k_dw
                else:
                    value = -(k_dw - d_dw + undercut_bonus)
                if value > best_value or (value == best_value and k_dw < best_k_dw):
                    best_value = value
                    best_k_dw = k_dw
        i = start[depth]
        if i >= nm or depth == _MAX_DEPTH:
            depth -= 1
            continue
        start[depth] = i + 1
        if melds[i] & used[depth] == 0:
            chosen[depth] = i
            used[depth + 1] = used[depth] | melds[i]
            melded[depth + 1] = melded[depth] + values[i]
            start[depth + 1] = i + 1
            depth += 1
            visit = True
    points = abs(best_value) * multiplier
    if best_value > 0:
        return KNOCK_KIND, True, points
    return UNDERCUT_KIND, False, points



# --------------------------------------------------------------------------- observation rows
@njit(cache=True)
def _fraction(fractions, v: int) -> float:
    """The observation's deadwood number (``observation.DEADWOOD_FRACTIONS``), 1.0 for ``NO_DW``."""
    return 1.0 if v >= NO_DW else fractions[v]


@njit(cache=True)
def write_table_row(o, offsets, scales, fractions, hand, top, rest, known_opp, discards_opp, discards_own, after,
                    dw_now, take_dw, stock_left, phase, knock_limit, doubled, is_dealer, opp_passed) -> None:
    """The table part of one observation vector (``observation.encode``'s slices before the
    match context), written into the float32 row ``o``: the six card slices from the masks,
    ``discard_deadwood`` from ``after`` (the deadwood after each discard, ``NO_DW`` where
    none), then deadwood, take_deadwood, stock size, phase one-hot (all zero once the hand
    is over), knock limit, doubled, is_dealer and opponent_passed. ``offsets``: the starts
    of hand, discard_top, discard_rest, opponent_known, opponent_discards, own_discards,
    discard_deadwood, deadwood, take_deadwood, stock_size, phase, knock_limit, doubled,
    is_dealer, opponent_passed; ``scales``: stock, knock limit."""
    dd = offsets[6]
    for c in range(NUM_CARDS):
        o[offsets[0] + c] = (hand >> c) & 1
        o[offsets[1] + c] = (top >> c) & 1
        o[offsets[2] + c] = (rest >> c) & 1
        o[offsets[3] + c] = (known_opp >> c) & 1
        o[offsets[4] + c] = (discards_opp >> c) & 1
        o[offsets[5] + c] = (discards_own >> c) & 1
        o[dd + c] = _fraction(fractions, after[c])
    o[offsets[7]] = fractions[dw_now]
    o[offsets[8]] = _fraction(fractions, take_dw)
    o[offsets[9]] = stock_left / scales[0]
    for j in range(3):
        o[offsets[10] + j] = 1.0 if phase == j else 0.0
    o[offsets[11]] = knock_limit / scales[1]
    o[offsets[12]] = 1.0 if doubled else 0.0
    o[offsets[13]] = 1.0 if is_dealer else 0.0
    o[offsets[14]] = 1.0 if opp_passed else 0.0


@njit(cache=True)
def encode_table_row(o, offsets, scales, fractions, hand, top_card, rest, known_opp, discards_opp, discards_own,
                     phase, acting, take_allowed, stock_left, knock_limit, doubled, is_dealer, opp_passed) -> None:
    """:func:`write_table_row` for a scalar game (``observation.encode``'s compiled path):
    the deadwood numbers computed here, from the hand. ``top_card`` is the face-up card
    (-1: empty pile); ``acting``: the player acts in a live hand (the after-discard row in
    the discard phase); ``take_allowed``: the face-up card may be taken now (a draw phase,
    not a forced stock draw), so take_deadwood is its deadwood."""
    after = np.empty(NUM_CARDS, dtype=np.int64)
    if acting and phase == PHASE_DISCARD:
        _fill_after(hand, after)
    else:
        for c in range(NUM_CARDS):
            after[c] = NO_DW
    top = 0
    take_dw = NO_DW
    if top_card >= 0:
        top = 1 << top_card
        if acting and take_allowed:
            take_dw = _best_after_take(hand, top_card)
    write_table_row(o, offsets, scales, fractions, hand, top, rest, known_opp, discards_opp, discards_own, after,
                    deadwood(hand), take_dw, stock_left, phase, knock_limit, doubled, is_dealer, opp_passed)
