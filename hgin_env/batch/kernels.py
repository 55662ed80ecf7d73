"""The batched engine's hot path compiled with Numba: dealing, the table step with its
showdown, the derived deadwood the masks and observations read, and the mask and
observation rows, in place on the table state record
(:class:`~hgin_env.batch.state.TableState`), which every kernel takes whole: ``st`` below is
:meth:`~hgin_env.batch.state.TableState.for_kernels`' tuple. Each kernel reads the fields it
uses into locals once, at its top (``hands = st[HANDS]``): Numba counts a reference for every
read of an array out of a tuple, and in the per-table loops those counts cost 40-60% of
``refresh_tables`` (measured, docs/architecture.md).

Why: the numpy path (:mod:`hgin_env.batch.tables`, the reference) spends most of a step on
numpy's per-call overhead (dozens of whole-array passes, a scalar ``settle`` per finished
hand). Here each table is one pass of plain loops over 52-bit masks and lookup tables; a step
allocates nothing but a showdown's scratch arrays. Every function mirrors a numpy method of ``TableBatch`` (named in
its docstring), and the differential (``tests/test_batch.py``, ``python -m
eval.differential``) replays both engines against the scalar ``Match``. The card kernels
(deadwood, the showdown, an observation's table row) are :mod:`hgin_env.card_kernels`',
shared with the scalar observer.

The first call compiles every kernel once and caches the machine code beside this file
(``cache=True``); later processes load it (:func:`hgin_env.batch.engines.warm_kernels`
times it). This module imports numba; :func:`hgin_env.compiled.resolve_engine` decides
whether it is used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..card_kernels import _best_after_take, _fill_after, deadwood, settle_hand, write_table_row
from ..cards import NUM_CARDS, NUM_RANKS, RANK_VALUES
from ..codes import (
    BIG_GIN,
    DEAD_KIND,
    DISCARD,
    DRAW_STOCK,
    KNOCK,
    NO_DW,
    PASS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_FIRST_UPCARD,
    PHASE_HAND_OVER,
    TAKE_DISCARD,
)
from ..observation import DEADWOOD_FRACTIONS, KNOCK_LIMIT_SCALE, STOCK_SCALE
from .state import (
    AFTER,
    CAN_TAKE,
    CURRENT_PLAYER,
    DEALER,
    DECKS,
    DISCARDED,
    DW10,
    DW_NOW,
    FORCED,
    HANDS,
    KNOCK_LIMIT,
    KNOWN,
    MULTIPLIER,
    PASSED,
    PHASE,
    PILE,
    PILE_LEN,
    PILE_MASK,
    STOCK_POS,
    TAKE_DW,
    TAKEN,
    TURNS,
)

_RANK_VALUE = np.array(RANK_VALUES, dtype=np.int64)
_FRACTION = np.array(DEADWOOD_FRACTIONS, dtype=np.float32)
_SCALES = np.array([STOCK_SCALE, KNOCK_LIMIT_SCALE], dtype=np.float64)


# --------------------------------------------------------------------------- refresh / deal
@njit(cache=True, inline="always")
def _refresh(t, hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10, can_take) -> None:
    """``TableBatch.refresh_tables`` for one table: the acting player's deadwood now, after
    each discard (discard phase) and after taking the face-up card (draw phases)."""
    p = current_player[t]
    hand = hands[t, p]
    ph = phase[t]
    if ph == PHASE_DISCARD:
        _fill_after(hand, after[t])
        dw_now[t] = deadwood(hand)
    else:
        for c in range(NUM_CARDS):
            after[t, c] = NO_DW
        dw_now[t] = dw10[t, p]
    can = ph < PHASE_DISCARD and pile_len[t] > 0 and not forced[t]
    can_take[t] = can
    take_dw[t] = _best_after_take(hand, pile[t, pile_len[t] - 1]) if can else NO_DW


@njit(cache=True)
def refresh_tables(idx, st) -> None:
    """``TableBatch.refresh_tables`` for tables ``idx``."""
    hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10, can_take = (
        st[HANDS], st[CURRENT_PLAYER], st[PHASE], st[PILE], st[PILE_LEN], st[FORCED], st[AFTER], st[DW_NOW],
        st[TAKE_DW], st[DW10], st[CAN_TAKE])
    for k in range(idx.shape[0]):
        _refresh(idx[k], hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10, can_take)


@njit(cache=True)
def deal_tables(idx, decks, dealer_of, st, rule_ints) -> None:
    """``TableBatch.deal_tables``: deal ``decks[k]`` at table ``idx[k]`` with ``dealer_of[k]``
    holding the dealer's part (cards 0..19 alternately to the non-dealer and the dealer, 20
    the upcard, the rest the stock). ``rule_ints``: oklahoma, ace gin only, spade
    multiplier, knock limit, first-upcard offer. The caller refreshes the derived state."""
    hands, known, discarded, passed, table_decks, stock_pos, pile, pile_len, pile_mask, dealer, current_player = (
        st[HANDS], st[KNOWN], st[DISCARDED], st[PASSED], st[DECKS], st[STOCK_POS], st[PILE], st[PILE_LEN],
        st[PILE_MASK], st[DEALER], st[CURRENT_PLAYER])
    phase, knock_limit, multiplier, taken, forced, turns, dw10 = (
        st[PHASE], st[KNOCK_LIMIT], st[MULTIPLIER], st[TAKEN], st[FORCED], st[TURNS], st[DW10])
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
        phase[t] = PHASE_FIRST_UPCARD if offer else PHASE_DRAW
        taken[t] = -1
        forced[t] = False
        known[t, 0] = 0
        known[t, 1] = 0
        discarded[t, 0] = 0
        discarded[t, 1] = 0
        passed[t, 0] = False
        passed[t, 1] = False
        turns[t] = 0


# --------------------------------------------------------------------------- step
@njit(cache=True)
def apply_tables(a, st, rule_ints, ended, settled) -> int:
    """``TableBatch.apply_tables`` and the refresh of the tables that move on: apply
    ``a[t]`` (a legal action id, or -1: the table waits) at every table. The tables whose
    hand the action ended are written to ``ended`` (ascending; their count is returned),
    with their showdown in ``settled[t]`` = (kind code, knocker wins, points; 0 for a dead
    hand); the caller settles the match and deals (then refreshes) them. ``rule_ints``:
    dead-hand stock, max turns, gin bonus, undercut bonus, big gin bonus (-1: none)."""
    hands, known, discarded, passed, decks, stock_pos, pile, pile_len, pile_mask, dealer, current_player = (
        st[HANDS], st[KNOWN], st[DISCARDED], st[PASSED], st[DECKS], st[STOCK_POS], st[PILE], st[PILE_LEN],
        st[PILE_MASK], st[DEALER], st[CURRENT_PLAYER])
    phase, knock_limit, multiplier, taken, forced, turns, after, dw_now, take_dw, dw10, can_take = (
        st[PHASE], st[KNOCK_LIMIT], st[MULTIPLIER], st[TAKEN], st[FORCED], st[TURNS], st[AFTER], st[DW_NOW],
        st[TAKE_DW], st[DW10], st[CAN_TAKE])
    dead_stock, max_turns, gin_bonus, undercut_bonus, big_gin_bonus = (
        rule_ints[0], rule_ints[1], rule_ints[2], rule_ints[3], rule_ints[4])
    n_ended = 0
    for t in range(a.shape[0]):
        act = a[t]
        if act < 0:
            continue
        p = current_player[t]
        end = False
        if act == PASS:
            passed[t, p] = True
            if p != dealer[t]:
                current_player[t] = dealer[t]
            else:
                current_player[t] = 1 - dealer[t]
                phase[t] = PHASE_DRAW
                forced[t] = True
        elif act == DRAW_STOCK:
            card = decks[t, stock_pos[t]]
            stock_pos[t] += 1
            hands[t, p] |= 1 << card
            taken[t] = -1
            forced[t] = False
            phase[t] = PHASE_DISCARD
            turns[t] += 1
        elif act == TAKE_DISCARD:
            pile_len[t] -= 1
            card = pile[t, pile_len[t]]
            bit = 1 << card
            pile_mask[t] &= ~bit
            hands[t, p] |= bit
            known[t, p] |= bit
            taken[t] = card
            phase[t] = PHASE_DISCARD
            turns[t] += 1
        elif act == BIG_GIN:
            end = True
        else:  # discard or knock: the card leaves the hand
            knock = act >= KNOCK
            card = act - KNOCK if knock else act - DISCARD
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
                    phase[t] = PHASE_DRAW
                    taken[t] = -1
        if end:
            ended[n_ended] = t
            n_ended += 1
            if act >= KNOCK:  # a knock or big gin: the showdown, the knocker being p
                kind, knocker_wins, points = settle_hand(
                    hands[t, p], hands[t, 1 - p], knock_limit[t], multiplier[t], gin_bonus,
                    undercut_bonus, big_gin_bonus)
                settled[t, 0] = kind
                settled[t, 1] = knocker_wins
                settled[t, 2] = points
            else:
                settled[t, 0] = DEAD_KIND
                settled[t, 1] = 0
                settled[t, 2] = 0
        else:
            _refresh(t, hands, current_player, phase, pile, pile_len, forced, after, dw_now, take_dw, dw10, can_take)
    return n_ended


# --------------------------------------------------------------------------- masks / observations
@njit(cache=True)
def table_masks(tables, m, st, big_gin) -> None:
    """``TableBatch.table_masks``: row k of ``m`` (every entry written) is the legal actions
    of the acting player of table ``tables[k]``."""
    phase, can_take, after, taken, knock_limit, dw_now = (
        st[PHASE], st[CAN_TAKE], st[AFTER], st[TAKEN], st[KNOCK_LIMIT], st[DW_NOW])
    for k in range(tables.shape[0]):
        t = tables[k]
        for j in range(m.shape[1]):
            m[k, j] = False
        ph = phase[t]
        if ph == PHASE_FIRST_UPCARD:
            m[k, TAKE_DISCARD] = True
            m[k, PASS] = True
        elif ph == PHASE_DRAW:
            m[k, DRAW_STOCK] = True
            if can_take[t]:
                m[k, TAKE_DISCARD] = True
        elif ph == PHASE_DISCARD:
            limit = knock_limit[t]
            tk = taken[t]
            for c in range(NUM_CARDS):
                v = after[t, c]
                if v < NO_DW and c != tk:
                    m[k, DISCARD + c] = True
                    if v <= limit:
                        m[k, KNOCK + c] = True
            if big_gin and dw_now[t] == 0:
                m[k, BIG_GIN] = True


@njit(cache=True)
def table_observations(o, tables, matches, seats, context, offsets, st) -> None:
    """``TableBatch.table_observations`` and the match context: row k of ``o`` is the
    observation of the acting player of table ``tables[k]`` (every entry written), its
    context slices (from ``offsets[15]`` on) being ``context[i, seats[i]]``, ``i = matches[k]``.
    ``offsets``: the starts :func:`~hgin_env.card_kernels.write_table_row` takes, then the
    context's (16 entries)."""
    hands, known, discarded, passed, stock_pos, pile, pile_len, pile_mask, dealer, current_player = (
        st[HANDS], st[KNOWN], st[DISCARDED], st[PASSED], st[STOCK_POS], st[PILE], st[PILE_LEN], st[PILE_MASK],
        st[DEALER], st[CURRENT_PLAYER])
    phase, knock_limit, multiplier, after, dw_now, take_dw = (
        st[PHASE], st[KNOCK_LIMIT], st[MULTIPLIER], st[AFTER], st[DW_NOW], st[TAKE_DW])
    width = context.shape[2]
    ctx = offsets[15]
    for k in range(tables.shape[0]):
        t = tables[k]
        p = current_player[t]
        q = 1 - p
        n_pile = pile_len[t]
        top = (1 << pile[t, n_pile - 1]) if n_pile > 0 else 0
        write_table_row(o[k], offsets, _SCALES, _FRACTION, hands[t, p], top, pile_mask[t] & ~top,
                        known[t, q], discarded[t, q], discarded[t, p], after[t], dw_now[t],
                        take_dw[t], NUM_CARDS - stock_pos[t], phase[t], knock_limit[t],
                        multiplier[t] > 1, dealer[t] == p, passed[t, q])
        o[k, ctx:ctx + width] = context[matches[k], seats[matches[k]]]


@njit(cache=True)
def table_views(o, m, tables, matches, seats, context, offsets, st, big_gin) -> None:
    """:func:`table_observations` and :func:`table_masks` of the same tables in one call: a
    learner reads both every decision, and one dispatch of the record instead of two is
    what a step costs at a few matches (docs/architecture.md, "The table state record")."""
    table_observations(o, tables, matches, seats, context, offsets, st)
    table_masks(tables, m, st, big_gin)


# --------------------------------------------------------------------------- a step of matches
@njit(cache=True)
def step_matches(k, rows, tables, actions, table_actions, st, rule_ints, ended, settled, current_seat,
                 acting_table, table_seats, duel, partnership) -> int:
    """``BatchGame.step`` up to its Python part, for a loop that steps the engine inside a
    kernel (the opponents' moves, ``agents.opponent_loop``): matches ``rows[:k]`` play
    ``actions[:k]`` (checked) at their acting tables ``tables[:k]``: :func:`apply_tables`
    (``table_actions`` its buffer), then ``PartnershipSeating.after_moves`` for the matches
    whose hand goes on and the acting seats (``BatchGame._after_step``). Returns the number
    of tables whose hand ended (in ``ended``): the caller hands them to
    ``BatchGame.close_step`` (the exact settle, the sheets, the deals), in Python."""
    current_player, phase = st[CURRENT_PLAYER], st[PHASE]
    for t in range(table_actions.shape[0]):
        table_actions[t] = -1
    before = np.empty(k, dtype=np.int64)
    for r in range(k):
        table_actions[tables[r]] = actions[r]
        before[r] = current_player[tables[r]]
    n_ended = apply_tables(table_actions, st, rule_ints, ended, settled)
    if partnership:  # after a turn the other table acts, while both run (Match._next_table)
        for r in range(k):
            t = tables[r]
            over = False
            for e in range(n_ended):
                over |= ended[e] == t
            other = t ^ 1
            if not over and current_player[t] != before[r] and phase[other] != PHASE_HAND_OVER \
                    and phase[t] != PHASE_HAND_OVER:
                acting_table[rows[r]] = other
    if not duel:  # a duel's acting seat is its table's current player (the same array)
        for i in range(current_seat.shape[0]):
            t = acting_table[i]
            current_seat[i] = table_seats[t, current_player[t]]
    return n_ended
