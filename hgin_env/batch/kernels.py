"""The batched engine's hot path compiled with Numba: the table step, the deadwood tables the
observation reads, the showdown, and the observation and mask rows, in place on the arrays
:class:`~hgin_env.batch.tables.TableBatch` holds.

Why: the numpy path (:mod:`hgin_env.batch.tables`, the reference) spends most of a step on
numpy's per-call overhead (dozens of whole-array passes, a scalar ``settle`` per finished
hand). Here each table is one pass of plain loops over 52-bit masks and lookup tables, with
no allocation per step. Every function mirrors a numpy method of ``TableBatch`` line for
line (named in its docstring), and the differential (``tests/test_batch.py``,
``python -m eval.differential``) replays both engines against the scalar ``Match``.

Hands are 52-bit masks seen as int64 (``uint64`` arrays viewed as ``int64``: mixing
unsigned and signed integers turns Numba's arithmetic into floats). The first call compiles
every kernel once and caches the machine code beside this file (``cache=True``); later
processes load it (:func:`hgin_env.batch.engines.warm_kernels` times it).

This module imports numba; :mod:`hgin_env.batch.engines` decides whether it is used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import actions as A
from ..cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, RANK_VALUES
from ..melds import RUN_DEADWOOD, SET_OPTIONS
from ..observation import DEADWOOD_FRACTIONS, KNOCK_LIMIT_SCALE, STOCK_SCALE

# Lookup tables, frozen into the compiled code as constants.
_RUN = RUN_DEADWOOD.astype(np.int64)  # runs-only deadwood of a 13-bit suit mask
_SET_OPT = np.zeros((16, 6), dtype=np.int64)  # suit subsets a set may take, per 4-bit suit pattern
_SET_NOPT = np.zeros(16, dtype=np.int64)
for _p, _opts in enumerate(SET_OPTIONS):
    _SET_OPT[_p, :len(_opts)] = _opts
    _SET_NOPT[_p] = len(_opts)
_RANK_VALUE = np.array(RANK_VALUES, dtype=np.int64)
_CARD_VALUE = np.array(CARD_VALUES, dtype=np.int64)
_FRACTION = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)

_FIRST_UPCARD, _DRAW, _DISCARD, _HAND_OVER = 0, 1, 2, 3  # hgin_env.game.Phase
#: "No such discard" in the after-discard table (``tables._NO_DW``).
NO_DW = 10_000
_SUIT = 0x1FFF
_DISCARD_ACTION, _KNOCK, _DRAW_STOCK, _TAKE, _PASS, _BIG_GIN = (
    A.DISCARD, A.KNOCK, A.DRAW_STOCK, A.TAKE_DISCARD, A.PASS, A.BIG_GIN)
#: Hand kinds as ``tables.HAND_KINDS`` numbers them.
KNOCK_KIND, GIN_KIND, BIG_GIN_KIND, UNDERCUT_KIND = 2, 3, 4, 5
#: Scratch sizes of the showdown (:func:`settle_hand`): melds of 10 cards, melds in a
#: collection (10 cards: 3), lay-off chains (two per run, one per three-card set).
_MAX_MELDS = 64
_MAX_DEPTH = 4
_MAX_CHAINS = 8


# --------------------------------------------------------------------------- deadwood
@njit(cache=True)
def deadwood(m: int) -> int:
    """Minimum deadwood of a hand mask of at most 11 cards (``melds.deadwood_of_mask``): the
    minimum over every choice of sets (none, a three-card subset or the four-card set at each
    rank held three or more times; at most three such ranks) of the runs-only lookups of the
    four suits left."""
    s0 = m & _SUIT
    s1 = (m >> 13) & _SUIT
    s2 = (m >> 26) & _SUIT
    s3 = (m >> 39) & _SUIT
    sr = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    if sr == 0:
        return _RUN[s0] + _RUN[s1] + _RUN[s2] + _RUN[s3]
    # Up to three set ranks; a missing one has the single option "no set" at rank 0.
    r0 = r1 = r2 = 0
    p0 = p1 = p2 = 0
    k = 0
    while sr:
        low = sr & -sr
        sr ^= low
        r = 0
        while not (low >> r) & 1:
            r += 1
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
                dw = _RUN[s0 & ~x0] + _RUN[s1 & ~x1] + _RUN[s2 & ~x2] + _RUN[s3 & ~x3]
                if dw < best:
                    best = dw
    return best


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
            c = 0
            while not (low >> c) & 1:
                c += 1
            row[c] = deadwood(hand ^ low)
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


# --------------------------------------------------------------------------- refresh / deal
@njit(cache=True)
def _refresh(t, hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10,
             can_take) -> None:
    """``TableBatch.refresh_tables`` for one table: the acting player's deadwood now, after
    each discard (discard phase) and after taking the face-up card (draw phases)."""
    p = current_player[t]
    hand = hands[t, p]
    ph = phase[t]
    if ph == _DISCARD:
        _fill_after(hand, after[t])
        dw_now[t] = deadwood(hand)
    else:
        for c in range(NUM_CARDS):
            after[t, c] = NO_DW
        dw_now[t] = dw10[t, p]
    can = ph < _DISCARD and pile_len[t] > 0 and not forced[t]
    can_take[t] = can
    take_dw[t] = _best_after_take(hand, pile[t, pile_len[t] - 1]) if can else NO_DW


@njit(cache=True)
def refresh_tables(idx, hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10,
                   can_take) -> None:
    """``TableBatch.refresh_tables`` for tables ``idx``."""
    for k in range(idx.shape[0]):
        _refresh(idx[k], hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10,
                 can_take)


@njit(cache=True)
def deal_tables(idx, decks, dealer_of, hands, known, discarded, passed, table_decks, stock_pos, pile, pile_len,
                pile_mask, dealer, current_player, phase, knock_limit, multiplier, taken, forced, turns, dw10,
                rule_ints) -> None:
    """``TableBatch.deal_tables``: deal ``decks[k]`` at table ``idx[k]`` with ``dealer_of[k]``
    holding the dealer's part (cards 0..19 alternately to the non-dealer and the dealer, 20
    the upcard, the rest the stock). ``rule_ints``: oklahoma, ace gin only, spade
    multiplier, knock limit, first-upcard offer. The caller refreshes the derived state."""
    oklahoma, ace_gin_only, spade_multiplier, limit, offer = (
        rule_ints[0], rule_ints[1], rule_ints[2], rule_ints[3], rule_ints[4])
    for k in range(idx.shape[0]):
        t = idx[k]
        d = dealer_of[k]
        first = 0
        second = 0
        for j in range(NUM_CARDS):
            table_decks[t, j] = decks[k, j]
        for j in range(0, 20, 2):
            first |= 1 << decks[k, j]
            second |= 1 << decks[k, j + 1]
        dealer[t] = d
        hands[t, 1 - d] = first
        hands[t, d] = second
        dw10[t, 1 - d] = deadwood(first)
        dw10[t, d] = deadwood(second)
        up = decks[k, 20]
        pile[t, 0] = up
        pile_len[t] = 1
        pile_mask[t] = 1 << up
        stock_pos[t] = 21
        if oklahoma:
            rank = up % NUM_RANKS
            knock_limit[t] = 0 if (ace_gin_only and rank == 0) else _RANK_VALUE[rank]
            multiplier[t] = spade_multiplier if up // NUM_RANKS == 3 else 1
        else:
            knock_limit[t] = limit
            multiplier[t] = 1
        current_player[t] = 1 - d
        phase[t] = _FIRST_UPCARD if offer else _DRAW
        taken[t] = -1
        forced[t] = False
        known[t, 0] = 0
        known[t, 1] = 0
        discarded[t, 0] = 0
        discarded[t, 1] = 0
        passed[t, 0] = False
        passed[t, 1] = False
        turns[t] = 0


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


# --------------------------------------------------------------------------- step
@njit(cache=True)
def apply_tables(a, hands, known, discarded, passed, decks, stock_pos, pile, pile_len, pile_mask, dealer,
                 current_player, phase, knock_limit, multiplier, taken, forced, turns, after, dw_now, take_dw,
                 dw10, can_take, rule_ints, ended, settled) -> int:
    """``TableBatch.apply_tables`` and the refresh of the tables that move on: apply
    ``a[t]`` (a legal action id, or -1: the table waits) at every table. The tables whose
    hand the action ended are written to ``ended`` (ascending; their count is returned),
    with their showdown in ``settled[t]`` = (kind code, knocker wins, points; 0 for a dead
    hand); the caller settles the match and deals (then refreshes) them. ``rule_ints``:
    dead-hand stock, max turns, gin bonus, undercut bonus, big gin bonus (-1: none)."""
    dead_stock, max_turns, gin_bonus, undercut_bonus, big_gin_bonus = (
        rule_ints[0], rule_ints[1], rule_ints[2], rule_ints[3], rule_ints[4])
    n_ended = 0
    for t in range(a.shape[0]):
        act = a[t]
        if act < 0:
            continue
        p = current_player[t]
        end = False
        if act == _PASS:
            passed[t, p] = True
            if p != dealer[t]:
                current_player[t] = dealer[t]
            else:
                current_player[t] = 1 - dealer[t]
                phase[t] = _DRAW
                forced[t] = True
        elif act == _DRAW_STOCK:
            card = decks[t, stock_pos[t]]
            stock_pos[t] += 1
            hands[t, p] |= 1 << card
            taken[t] = -1
            forced[t] = False
            phase[t] = _DISCARD
            turns[t] += 1
        elif act == _TAKE:
            pile_len[t] -= 1
            card = pile[t, pile_len[t]]
            bit = 1 << card
            pile_mask[t] &= ~bit
            hands[t, p] |= bit
            known[t, p] |= bit
            taken[t] = card
            phase[t] = _DISCARD
            turns[t] += 1
        elif act == _BIG_GIN:
            end = True
        else:  # discard or knock: the card leaves the hand
            knock = act >= _KNOCK
            card = act - _KNOCK if knock else act - _DISCARD_ACTION
            bit = 1 << card
            hands[t, p] &= ~bit
            known[t, p] &= ~bit
            if knock:
                end = True
            else:
                dw10[t, p] = after[t, card]  # the 10 cards kept
                discarded[t, p] |= bit
                pile[t, pile_len[t]] = card
                pile_len[t] += 1
                pile_mask[t] |= bit
                if NUM_CARDS - stock_pos[t] <= dead_stock or (max_turns and turns[t] >= max_turns):
                    end = True
                else:
                    current_player[t] = 1 - p
                    phase[t] = _DRAW
                    taken[t] = -1
        if end:
            ended[n_ended] = t
            n_ended += 1
            if act >= _KNOCK:  # a knock or big gin: the showdown, the knocker being p
                kind, knocker_wins, points = settle_hand(
                    hands[t, p], hands[t, 1 - p], knock_limit[t], multiplier[t], gin_bonus, undercut_bonus,
                    big_gin_bonus)
                settled[t, 0] = kind
                settled[t, 1] = knocker_wins
                settled[t, 2] = points
            else:
                settled[t, 0] = 1  # dead
                settled[t, 1] = 0
                settled[t, 2] = 0
        else:
            _refresh(t, hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10,
                     can_take)
    return n_ended


# --------------------------------------------------------------------------- masks / observations
@njit(cache=True)
def table_masks(tables, m, phase, can_take, after, taken, knock_limit, dw_now, big_gin) -> None:
    """``TableBatch.table_masks``: row k of ``m`` (every entry written) is the legal actions
    of the acting player of table ``tables[k]``."""
    for k in range(tables.shape[0]):
        t = tables[k]
        for j in range(m.shape[1]):
            m[k, j] = False
        ph = phase[t]
        if ph == _FIRST_UPCARD:
            m[k, _TAKE] = True
            m[k, _PASS] = True
        elif ph == _DRAW:
            m[k, _DRAW_STOCK] = True
            if can_take[t]:
                m[k, _TAKE] = True
        elif ph == _DISCARD:
            limit = knock_limit[t]
            tk = taken[t]
            for c in range(NUM_CARDS):
                v = after[t, c]
                if v < NO_DW and c != tk:
                    m[k, _DISCARD_ACTION + c] = True
                    if v <= limit:
                        m[k, _KNOCK + c] = True
            if big_gin and dw_now[t] == 0:
                m[k, _BIG_GIN] = True


@njit(cache=True)
def _dd_value(v: int) -> float:
    return 1.0 if v >= NO_DW else _FRACTION[v]


@njit(cache=True)
def table_observations(o, tables, matches, seats, context, offsets, hands, known, discarded, passed, stock_pos,
                       pile, pile_len, pile_mask, dealer, current_player, phase, knock_limit, multiplier, after,
                       dw_now, take_dw) -> None:
    """``TableBatch.table_observations`` and the match context: row k of ``o`` is the
    observation of the acting player of table ``tables[k]`` (every entry written), its
    context slices (from ``offsets[15]`` on) being ``context[i, seats[i]]``, ``i = matches[k]``.
    ``offsets``: the starts of the six bit slices (hand, discard_top, discard_rest,
    opponent_known, opponent_discards, own_discards), discard_deadwood, deadwood,
    take_deadwood, stock_size, phase, knock_limit, doubled, is_dealer, opponent_passed and
    the context (15 entries)."""
    width = context.shape[2]
    ctx = offsets[15]
    for k in range(tables.shape[0]):
        t = tables[k]
        p = current_player[t]
        q = 1 - p
        n_pile = pile_len[t]
        top = (1 << pile[t, n_pile - 1]) if n_pile > 0 else 0
        m0 = hands[t, p]
        m1 = top
        m2 = pile_mask[t] & ~top
        m3 = known[t, q]
        m4 = discarded[t, q]
        m5 = discarded[t, p]
        dd = offsets[6]
        for c in range(NUM_CARDS):
            o[k, offsets[0] + c] = (m0 >> c) & 1
            o[k, offsets[1] + c] = (m1 >> c) & 1
            o[k, offsets[2] + c] = (m2 >> c) & 1
            o[k, offsets[3] + c] = (m3 >> c) & 1
            o[k, offsets[4] + c] = (m4 >> c) & 1
            o[k, offsets[5] + c] = (m5 >> c) & 1
            o[k, dd + c] = _dd_value(after[t, c])
        o[k, offsets[7]] = _FRACTION[dw_now[t]]
        o[k, offsets[8]] = _dd_value(take_dw[t])
        o[k, offsets[9]] = (NUM_CARDS - stock_pos[t]) / STOCK_SCALE
        ph = phase[t]
        for j in range(3):
            o[k, offsets[10] + j] = 1.0 if ph == j else 0.0
        o[k, offsets[11]] = knock_limit[t] / KNOCK_LIMIT_SCALE
        o[k, offsets[12]] = 1.0 if multiplier[t] > 1 else 0.0
        o[k, offsets[13]] = 1.0 if dealer[t] == p else 0.0
        o[k, offsets[14]] = 1.0 if passed[t, q] else 0.0
        i = matches[k]
        s = seats[i]
        for j in range(width):
            o[k, ctx + j] = context[i, s, j]
