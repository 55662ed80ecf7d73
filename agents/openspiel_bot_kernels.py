"""OpenSpiel's ``SimpleGinRummyBot`` compiled (Numba): one call decides a batch, row by row,
as the literal reference :func:`agents.openspiel_bot.bot_move` does.

How it stays identical: the melds of a hand are listed in ``GinRummyUtils::AllMelds``' order
(:func:`_all_melds`), and :func:`_best_group` walks ``AllMeldGroups``' depth-first paths in
the same order with an explicit stack (each level keeps the list it was cut from, since
OpenSpiel's children of a meld are the melds *of its parent's list* that share no card with
it), keeping the first complete path with strictly the most melded points. Hands are 52-bit
masks of OpenSpiel card ids inside the kernel (the order that decides ties is OpenSpiel's);
our ids come in and go out. ``tests/test_openspiel_bot.py`` compares the kernel with the
reference and with the real bot's stored decisions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hgin_env import actions as A
from hgin_env.card_kernels import deadwood
from hgin_env.cards import NUM_CARDS, NUM_RANKS
from hgin_env.codes import PHASE_DISCARD, PHASE_FIRST_UPCARD

from .expert_kernels import card_count

_SUIT = (1 << NUM_RANKS) - 1
#: A hand of 11 cards holds at most this many melds (of 3..5 cards), and a group at most 3.
_MAX_MELDS = 64
_MAX_DEPTH = 5
_HAND_SIZE = 10
_DISCARD, _KNOCK, _DRAW, _TAKE, _PASS = A.DISCARD, A.KNOCK, A.DRAW_STOCK, A.TAKE_DISCARD, A.PASS
_NUM_ACTIONS = A.NUM_ACTIONS


@njit(cache=True)
def _value(card: int) -> int:
    return min(10, card % NUM_RANKS + 1)


@njit(cache=True)
def to_openspiel_mask(m: int) -> int:
    """Our suits C, D, H, S are OpenSpiel's 1, 2, 3, 0 (``agents.openspiel.to_openspiel_card``)."""
    return (((m & _SUIT) << 13) | (((m >> 13) & _SUIT) << 26) | (((m >> 26) & _SUIT) << 39)
            | ((m >> 39) & _SUIT))


@njit(cache=True)
def from_openspiel_card(card: int) -> int:
    return ((card // NUM_RANKS + 3) % 4) * NUM_RANKS + card % NUM_RANKS


@njit(cache=True)
def _all_melds(hand: int, melds: np.ndarray) -> int:
    """``AllMelds`` of an OpenSpiel mask into ``melds`` (masks), in its order; returns the count."""
    cards = np.empty(NUM_CARDS, dtype=np.int64)
    n = 0
    for rank in range(NUM_RANKS):  # by rank, then id (RankComparator)
        for suit in range(4):
            c = suit * NUM_RANKS + rank
            if hand >> c & 1:
                cards[n] = c
                n += 1
    k = 0
    if n < 3:
        return 0
    for i in range(n - 3):
        if cards[i] % NUM_RANKS == cards[i + 3] % NUM_RANKS:
            melds[k] = (1 << cards[i]) | (1 << cards[i + 1]) | (1 << cards[i + 2]) | (1 << cards[i + 3])
            melds[k + 1] = (1 << cards[i]) | (1 << cards[i + 1]) | (1 << cards[i + 3])
            melds[k + 2] = (1 << cards[i]) | (1 << cards[i + 2]) | (1 << cards[i + 3])
            k += 3
    for i in range(n - 2):
        if cards[i] % NUM_RANKS == cards[i + 2] % NUM_RANKS:
            melds[k] = (1 << cards[i]) | (1 << cards[i + 1]) | (1 << cards[i + 2])
            k += 1
    n = 0
    for c in range(NUM_CARDS):  # by suit, then id (SuitComparator): increasing ids
        if hand >> c & 1:
            cards[n] = c
            n += 1
    for length in (5, 4, 3):
        for i in range(n - length + 1):
            lo, hi = cards[i], cards[i + length - 1]
            if lo == hi - (length - 1) and lo // NUM_RANKS == hi // NUM_RANKS:
                m = 0
                for j in range(length):
                    m |= 1 << cards[i + j]
                melds[k] = m
                k += 1
    return k


@njit(cache=True)
def _points(m: int) -> int:
    total = 0
    while m:
        low = m & -m
        m ^= low
        c = 0
        while low >> c != 1:
            c += 1
        total += _value(c)
    return total


@njit(cache=True)
def _best_group(hand: int) -> int:
    """The cards of ``BestMeldGroup(hand)`` (an OpenSpiel mask), 0 when nothing melds."""
    melds = np.empty(_MAX_MELDS, dtype=np.int64)
    n = _all_melds(hand, melds)
    if n == 0:
        return 0
    values = np.empty(n, dtype=np.int64)
    for i in range(n):
        values[i] = _points(melds[i])
    lists = np.empty((_MAX_DEPTH, n), dtype=np.int64)
    count = np.zeros(_MAX_DEPTH, dtype=np.int64)
    pos = np.zeros(_MAX_DEPTH, dtype=np.int64)
    group = np.zeros(_MAX_DEPTH, dtype=np.int64)
    points = np.zeros(_MAX_DEPTH, dtype=np.int64)
    for i in range(n):
        lists[0, i] = i
    count[0] = n
    best_points, best = 0, 0
    d = 0
    while d >= 0:
        if pos[d] >= count[d]:
            d -= 1
            continue
        m = lists[d, pos[d]]
        pos[d] += 1
        mask = melds[m]
        g, p = group[d] | mask, points[d] + values[m]
        k = 0
        for j in range(count[d]):  # the children: this level's melds that share no card with m
            x = lists[d, j]
            if melds[x] & mask == 0:
                lists[d + 1, k] = x
                k += 1
        if k == 0:
            if p > best_points:
                best_points, best = p, g
        else:
            d += 1
            count[d], pos[d], group[d], points[d] = k, 0, g, p
    return best


@njit(cache=True)
def _highest(m: int) -> int:
    """The last card of mask ``m`` in ``RankComparator`` order (rank, then id); -1 if empty."""
    for rank in range(NUM_RANKS - 1, -1, -1):
        for suit in range(3, -1, -1):
            c = suit * NUM_RANKS + rank
            if m >> c & 1:
                return c
    return -1


@njit(cache=True)
def min_deadwood(hand: int) -> int:
    """``MinDeadwood`` of an OpenSpiel mask: an 11-card hand drops the best group's highest
    deadwood card (OpenSpiel's shortcut)."""
    dead = hand & ~_best_group(hand)
    if card_count(hand) == _HAND_SIZE + 1 and dead:
        dead &= ~(1 << _highest(dead))
    return _points(dead)


@njit(cache=True)
def bot_discard(hand: int) -> int:
    """``GetDiscard`` of an 11-card OpenSpiel mask (an OpenSpiel card id; -1 if none)."""
    dead = hand & ~_best_group(hand)
    if dead:
        return _highest(dead)
    for c in range(NUM_CARDS):
        if hand >> c & 1 and min_deadwood(hand & ~(1 << c)) == 0:
            return c
    return -1


@njit(cache=True)
def _lowest_deadwood_action(hand: int, legal) -> int:
    """``agents.openspiel.lowest_deadwood_action`` (our ids): a legal knock, else a legal
    discard, leaving the least deadwood, the highest value then the highest id among equals."""
    for base in (_KNOCK, _DISCARD):
        best, key_dw, key_v = -1, 1 << 30, -1
        for c in range(NUM_CARDS - 1, -1, -1):
            if legal[base + c]:
                dw = deadwood(hand & ~(1 << c))
                v = _value(c)
                if dw < key_dw or (dw == key_dw and v > key_v):
                    best, key_dw, key_v = c, dw, v
        if best >= 0:
            return base + best
    return -1


@njit(cache=True)
def bot_act(hand, top, phase, knock, legal, out, fallbacks) -> None:
    """``out[i]``: the bot's move for row i (our ids and actions); the fallbacks for moves our
    rules forbid are counted in ``fallbacks[0]``; -1 where even the fallback has no move."""
    for i in range(hand.shape[0]):
        out[i] = bot_row(hand[i], top[i], phase[i], knock[i], legal[i], fallbacks)


#: The observation slices the bot reads (``BatchedOpenSpielBot.read``), in the order of the
#: offsets :func:`bot_read_row` takes.
READ_SLICES = ("hand", "discard_top", "phase", "knock_limit")


@njit(cache=True)
def bot_read_row(o, off, knock_scale: float):
    """What ``BatchedOpenSpielBot.read`` reads of one observation row, in its arithmetic:
    (hand mask, face-up card or -1, phase code (the one-hot's first greatest entry), knock
    limit ``rint(float64(x) * scale)``); ``off`` the starts of :data:`READ_SLICES`."""
    hand = 0
    top = -1
    for c in range(NUM_CARDS):
        if o[off[0] + c] > 0.5:
            hand |= 1 << c
        if top < 0 and o[off[1] + c] > 0.5:
            top = c
    phase = 0
    best = o[off[2]]
    for k in range(1, 3):
        if o[off[2] + k] > best:
            phase, best = k, o[off[2] + k]
    knock = int(np.rint(np.float64(o[off[3]]) * knock_scale))
    return hand, top, phase, knock


@njit(cache=True)
def bot_row(hand: int, top: int, phase: int, knock: int, row, fallbacks) -> int:
    """The bot's move on one row (our ids and actions): what :func:`bot_act` and the
    compiled opponent loop (:mod:`agents.opponent_loop`) ask per row; a fallback for a move
    our rules forbid is counted in ``fallbacks[0]``; -1 where even the fallback has no move."""
    n, only = 0, -1
    for a in range(_NUM_ACTIONS):
        if row[a]:
            n += 1
            only = a
    if n == 1:
        return only
    h = to_openspiel_mask(hand)
    if phase < PHASE_DISCARD and top < 0:  # nothing face up: OpenSpiel's legal_actions.back()
        action = _PASS if phase == PHASE_FIRST_UPCARD else _DRAW
    elif phase < PHASE_DISCARD:
        up = to_openspiel_mask(1 << top)
        with_up = h | up
        take = min_deadwood(with_up) <= knock or (with_up & ~_best_group(with_up)) & up == 0
        if take:
            action = _TAKE
        elif phase == PHASE_FIRST_UPCARD:
            action = _PASS
        else:
            action = _DRAW
    else:
        card = from_openspiel_card(bot_discard(h))
        action = (_KNOCK if min_deadwood(h) <= knock else _DISCARD) + card
    if row[action]:
        return action
    fallbacks[0] += 1
    return _lowest_deadwood_action(hand, row)
