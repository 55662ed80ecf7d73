"""Meld evaluation by table lookup.

Why it is exact and fast: an arrangement of a hand is a choice of sets (each a 3- or
4-card subset of one rank) plus runs over the cards left. Runs never cross suits, so once
the sets are chosen the best runs of each suit come from one lookup in a 8192-entry table
indexed by that suit's 13-bit mask (:data:`RUN_DEADWOOD`). A hand of at most 11 cards has
at most three ranks with three or more cards, and each such rank offers at most six
choices (no set, the four 3-card subsets, the 4-card set), so the minimum deadwood is a
minimum over at most 6**3 table sums -- and usually (no set possible) just four lookups.

The batched call does the same over arrays of hands with numpy, grouping hands by how
many set ranks they have.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from functools import lru_cache

import numpy as np

from .cards import (
    CARD_VALUES,
    NUM_CARDS,
    NUM_RANKS,
    RANK_VALUES,
    SUIT_BITS,
    cards_to_mask,
    mask_to_cards,
)

Meld = tuple[int, ...]


# --------------------------------------------------------------------------- tables
def _build_run_tables() -> tuple[list[int], list[tuple[tuple[int, int], ...]]]:
    """Best runs-only deadwood of every 13-bit suit mask, and the runs (lo, hi) achieving it."""
    size = 1 << NUM_RANKS
    best = [0] * size
    runs: list[tuple[tuple[int, int], ...]] = [()] * size
    for m in range(1, size):
        low = (m & -m).bit_length() - 1
        # The lowest card is either deadwood or the bottom of a run starting there.
        best[m] = RANK_VALUES[low] + best[m ^ (1 << low)]
        runs[m] = runs[m ^ (1 << low)]
        run_mask = 1 << low
        hi = low
        while hi + 1 < NUM_RANKS and m >> (hi + 1) & 1:
            hi += 1
            run_mask |= 1 << hi
            if hi - low >= 2:
                rest = m & ~run_mask
                if best[rest] < best[m]:
                    best[m] = best[rest]
                    runs[m] = ((low, hi),) + runs[rest]
    return best, runs


_RUN_DEADWOOD_LIST, RUN_MELDS = _build_run_tables()
#: For each suit mask: (rank, runs-only deadwood of the mask without that rank) per held rank.
_REMOVALS: list[tuple[tuple[int, int], ...]] = [
    tuple((r, _RUN_DEADWOOD_LIST[m ^ 1 << r]) for r in range(NUM_RANKS) if m >> r & 1)
    for m in range(1 << NUM_RANKS)
]
#: Minimum deadwood of one suit's 13-bit mask using runs only.
RUN_DEADWOOD = np.array(_RUN_DEADWOOD_LIST, dtype=np.int16)


def _build_set_options() -> list[tuple[int, ...]]:
    """For a 4-bit pattern of suits present at a rank: the suit subsets a set may take."""
    options: list[tuple[int, ...]] = []
    for pattern in range(16):
        opts = [0]
        held = [s for s in range(4) if pattern >> s & 1]
        if len(held) == 3:
            opts.append(pattern)
        elif len(held) == 4:
            opts += [pattern & ~(1 << s) for s in held]
            opts.append(pattern)
        options.append(tuple(opts))
    return options


SET_OPTIONS = _build_set_options()
_MAX_OPTIONS = 6
_SET_OPTIONS_ARRAY = np.zeros((16, _MAX_OPTIONS), dtype=np.int64)
for _p, _opts in enumerate(SET_OPTIONS):
    _SET_OPTIONS_ARRAY[_p, : len(_opts)] = _opts  # padding repeats "no set"
_LOWEST_BIT = np.array([(m & -m).bit_length() - 1 for m in range(1 << NUM_RANKS)], dtype=np.int64)


# --------------------------------------------------------------------------- single hands
def _suits(mask: int) -> tuple[int, int, int, int]:
    return (mask & SUIT_BITS, mask >> 13 & SUIT_BITS, mask >> 26 & SUIT_BITS, mask >> 39 & SUIT_BITS)


def _set_ranks(s0: int, s1: int, s2: int, s3: int) -> int:
    """13-bit mask of ranks held in at least three suits."""
    return (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)


def _set_choices(suits: tuple[int, ...], set_ranks: int) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every combination of (rank, suit pattern) sets; () means no set at that rank."""
    per_rank = []
    while set_ranks:
        low = set_ranks & -set_ranks
        r = low.bit_length() - 1
        set_ranks ^= low
        pattern = sum(((suits[s] >> r) & 1) << s for s in range(4))
        per_rank.append([(r, p) for p in SET_OPTIONS[pattern]])
    return itertools.product(*per_rank)


def _remove_sets(suits: tuple[int, ...], choice: tuple[tuple[int, int], ...]) -> list[int]:
    left = list(suits)
    for r, pattern in choice:
        for s in range(4):
            if pattern >> s & 1:
                left[s] &= ~(1 << r)
    return left


def _build_run_capable() -> list[int]:
    """For each 13-bit suit mask: the bits that belong to at least one 3-card run of the mask."""
    out = [0] * (1 << NUM_RANKS)
    for m in range(1 << NUM_RANKS):
        three = m & m >> 1 & m >> 2  # bit r: r, r+1, r+2 all held
        out[m] = three | three << 1 | three << 2
    return out


#: Cards of a suit mask that some run of that suit could use. A set rank none of whose cards
#: is run-capable is always best taken as a full set (those cards are otherwise deadwood).
RUN_CAPABLE = _build_run_capable()
_RUN_CAPABLE = RUN_CAPABLE


def _build_option_flags() -> list[tuple[tuple[int, int, int, int], ...]]:
    """For a 4-bit suit pattern at a set rank: each set option as per-suit 0/1 removal flags."""
    return [tuple(tuple(opt >> s & 1 for s in range(4)) for opt in opts) for opts in SET_OPTIONS]


_OPTION_FLAGS = _build_option_flags()


def deadwood_of_mask(mask: int) -> int:
    """Exact minimum deadwood of a hand mask (any size up to 11 cards), uncached.

    Fast paths (same result as enumerating every set choice): no rank held three times is
    four lookups; set ranks whose cards no run could use are taken as full sets; a single
    remaining set rank has a closed form (suits are independent); two or three remaining
    set ranks enumerate their set options.
    """
    table = _RUN_DEADWOOD_LIST
    s0 = mask & 0x1FFF
    s1 = mask >> 13 & 0x1FFF
    s2 = mask >> 26 & 0x1FFF
    s3 = mask >> 39 & 0x1FFF
    sr = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    if not sr:
        return table[s0] + table[s1] + table[s2] + table[s3]
    cap = _RUN_CAPABLE[s0] | _RUN_CAPABLE[s1] | _RUN_CAPABLE[s2] | _RUN_CAPABLE[s3]
    forced = sr & ~cap
    if forced:
        keep = ~forced
        s0 &= keep
        s1 &= keep
        s2 &= keep
        s3 &= keep
        sr &= cap
        if not sr:
            return table[s0] + table[s1] + table[s2] + table[s3]
    t0, t1, t2, t3 = table[s0], table[s1], table[s2], table[s3]
    base = t0 + t1 + t2 + t3
    if not sr & (sr - 1):  # one set rank left: each suit's change is independent
        b = sr
        keep = ~b
        total = 0
        most = 0  # best change to undo by leaving one suit out of a 4-card set
        held = 0
        if s0 & b:
            d = table[s0 & keep] - t0
            total += d
            most = d if d > most else most
            held += 1
        if s1 & b:
            d = table[s1 & keep] - t1
            total += d
            most = d if d > most else most
            held += 1
        if s2 & b:
            d = table[s2 & keep] - t2
            total += d
            most = d if d > most else most
            held += 1
        if s3 & b:
            d = table[s3 & keep] - t3
            total += d
            most = d if d > most else most
            held += 1
        if held == 4:
            total -= most
        return base + total if total < 0 else base
    per_rank = []
    while sr:
        b = sr & -sr
        sr ^= b
        pattern = (s0 & b and 1) | (s1 & b and 2) | (s2 & b and 4) | (s3 & b and 8)
        per_rank.append([(f0 * b, f1 * b, f2 * b, f3 * b) for f0, f1, f2, f3 in _OPTION_FLAGS[pattern]])
    best = base
    if len(per_rank) == 2:
        first, second = per_rank
        for a0, a1, a2, a3 in first:
            for c0, c1, c2, c3 in second:
                dw = (table[s0 & ~(a0 | c0)] + table[s1 & ~(a1 | c1)]
                      + table[s2 & ~(a2 | c2)] + table[s3 & ~(a3 | c3)])
                if dw < best:
                    best = dw
        return best
    for choice in itertools.product(*per_rank):
        r0 = r1 = r2 = r3 = 0
        for a0, a1, a2, a3 in choice:
            r0 |= a0
            r1 |= a1
            r2 |= a2
            r3 |= a3
        dw = table[s0 & ~r0] + table[s1 & ~r1] + table[s2 & ~r2] + table[s3 & ~r3]
        if dw < best:
            best = dw
    return best




#: Cached minimum deadwood by mask: play revisits the same hands (knock checks, agents).
cached_deadwood = lru_cache(maxsize=1 << 17)(deadwood_of_mask)


_BIT_OF = {c: 1 << c for c in range(NUM_CARDS)}.__getitem__


def min_deadwood(cards: Iterable[int] | str) -> int:
    """Minimum deadwood of a hand given as card ids or text, e.g. ``"4H 5H 6H KD"``."""
    if type(cards) is tuple or type(cards) is list:
        # Fast path for ids; anything unusual (bad ids, duplicates) goes through cards_to_mask.
        try:
            mask = sum(map(_BIT_OF, cards))
        except (KeyError, TypeError):
            mask = -1
        if mask >= 0 and mask.bit_count() == len(cards):  # distinct ids add without carries
            return deadwood_of_mask(mask)
    return deadwood_of_mask(cards_to_mask(cards))


def best_arrangement_of_mask(mask: int) -> tuple[list[int], int]:
    """A minimum-deadwood arrangement as meld masks, and its deadwood.

    Ties are broken deterministically: the first set choice in enumeration order wins.
    """
    suits = _suits(mask)
    table = _RUN_DEADWOOD_LIST
    best_dw, best_choice, best_left = 1 << 30, (), list(suits)
    for choice in _set_choices(suits, _set_ranks(*suits)):
        left = _remove_sets(suits, choice)
        dw = table[left[0]] + table[left[1]] + table[left[2]] + table[left[3]]
        if dw < best_dw:
            best_dw, best_choice, best_left = dw, choice, left
    melds = []
    for r, pattern in best_choice:
        if pattern:
            melds.append(sum(1 << (s * NUM_RANKS + r) for s in range(4) if pattern >> s & 1))
    for s in range(4):
        for lo, hi in RUN_MELDS[best_left[s]]:
            melds.append(sum(1 << (s * NUM_RANKS + r) for r in range(lo, hi + 1)))
    return melds, best_dw


def best_melds(cards: Iterable[int] | str) -> tuple[list[Meld], int]:
    """A minimum-deadwood arrangement: (melds as tuples of card ids, deadwood)."""
    melds, dw = best_arrangement_of_mask(cards_to_mask(cards))
    return [mask_to_cards(m) for m in melds], dw


def deadwood_after_discard_mask(mask: int) -> dict[int, int]:
    """For each card of the hand: the minimum deadwood of the hand without it.

    This is the one call knock legality needs for an 11-card hand; keys are in increasing
    card id order. When no rank has three cards, removing a card only changes its own suit's
    lookup; with one such rank the closed form of :func:`deadwood_of_mask` is updated per
    card (only the card's suit changes); with more, each 10-card hand is evaluated.
    """
    table = _RUN_DEADWOOD_LIST
    s0 = mask & 0x1FFF
    s1 = mask >> 13 & 0x1FFF
    s2 = mask >> 26 & 0x1FFF
    s3 = mask >> 39 & 0x1FFF
    set_ranks = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    suits = (s0, s1, s2, s3)
    t = [table[s0], table[s1], table[s2], table[s3]]
    out: dict[int, int] = {}
    if not set_ranks:
        total = t[0] + t[1] + t[2] + t[3]
        removals = _REMOVALS
        for r, dw in removals[s0]:
            out[r] = total - t[0] + dw
        rest = total - t[1]
        for r, dw in removals[s1]:
            out[13 + r] = rest + dw
        rest = total - t[2]
        for r, dw in removals[s2]:
            out[26 + r] = rest + dw
        rest = total - t[3]
        for r, dw in removals[s3]:
            out[39 + r] = rest + dw
        return out
    if not set_ranks & (set_ranks - 1):
        return _after_discard_one_set(suits, t, set_ranks)
    # Two or three set ranks: each 10-card hand on its own (the fast paths of deadwood_of_mask
    # beat one shared pass over up to 6**3 set choices).
    m = mask
    while m:
        low = m & -m
        m ^= low
        out[low.bit_length() - 1] = deadwood_of_mask(mask ^ low)
    return out


def _after_discard_one_set(suits: tuple[int, int, int, int], t: list[int], b: int) -> dict[int, int]:
    """:func:`deadwood_after_discard_mask` for a hand with exactly one rank (bit ``b``) held
    three or four times. With that rank's set options, the deadwood is
    ``base + min(0, sum of the held suits' changes d_s [- max(0, max d_s) for four])`` where
    ``d_s`` is what removing the rank from suit ``s`` changes; dropping a card changes only
    its suit's lookup and ``d_s``."""
    table = _RUN_DEADWOOD_LIST
    removals = _REMOVALS
    keep = ~b
    set_rank = b.bit_length() - 1
    base = t[0] + t[1] + t[2] + t[3]
    d = [table[suits[0] & keep] - t[0], table[suits[1] & keep] - t[1],
         table[suits[2] & keep] - t[2], table[suits[3] & keep] - t[3]]  # 0 without the rank
    four = bool(suits[0] & suits[1] & suits[2] & suits[3] & b)
    total = d[0] + d[1] + d[2] + d[3]
    out: dict[int, int] = {}
    for s in range(4):
        sm = suits[s]
        if not sm:
            continue
        offset = s * NUM_RANKS
        rest_base = base - t[s]
        rest_total = total - d[s]
        if not sm & b:  # three of the rank, none in this suit: the set's change is fixed
            const = rest_base + (rest_total if rest_total < 0 else 0)
            for r, tl in removals[sm]:
                out[offset + r] = const + tl
            continue
        # Best change to undo by leaving one of the other suits out of a 4-card set.
        others = max(0, d[s - 1], d[s - 2], d[s - 3]) if four else 0
        without_rank = sm & keep
        for r, tl in removals[sm]:
            if r == set_rank:  # three or two of the rank are left
                change = rest_total if four else 0
            else:
                dl = table[without_rank ^ 1 << r] - tl
                change = rest_total + dl
                if four:
                    change -= others if others > dl else (dl if dl > 0 else 0)
            out[offset + r] = rest_base + tl + (change if change < 0 else 0)
    return out


#: Cached :func:`deadwood_after_discard_mask` by mask, shared by the game's knock check and the
#: observation's take-the-discard lookahead (taking the discard top then discarding revisits
#: the same 11 cards). The dicts are shared: read them, never mutate them.
cached_after_discard = lru_cache(maxsize=1 << 14)(deadwood_after_discard_mask)


def deadwood_after_discard(cards: Iterable[int] | str) -> dict[int, int]:
    """Card id -> minimum deadwood of the rest, for every card of the hand."""
    return deadwood_after_discard_mask(cards_to_mask(cards))


# --------------------------------------------------------------------------- batched
_SUIT_SHIFTS = np.array([0, 13, 26, 39], dtype=np.uint64)
_RUN_DEADWOOD_64 = RUN_DEADWOOD.astype(np.int64)
_RUN_CAPABLE_64 = np.array(RUN_CAPABLE, dtype=np.int64)


def _suits_array(masks: np.ndarray) -> np.ndarray:
    h = np.asarray(masks, dtype=np.uint64).reshape(-1, 1)
    return ((h >> _SUIT_SHIFTS) & np.uint64(SUIT_BITS)).astype(np.int64)


_MASK_LIMIT = 1 << NUM_CARDS
_HAS_BITWISE_COUNT = hasattr(np, "bitwise_count")  # numpy >= 2.0


def _mask_array(hand_masks: np.ndarray | Iterable[int]) -> np.ndarray:
    """Check the input of :func:`min_deadwood_batch` and return it as a uint64 array.

    Raises ``TypeError`` for a non-integer dtype and ``ValueError`` for a negative mask, a
    mask with bits above 51, a hand of more than 11 cards, or an array that holds card ids
    (rows of 10 or 11 values, all below 64) instead of masks. A few microseconds per call.
    """
    arr = np.asarray(hand_masks)
    if arr.size == 0:
        return arr.astype(np.uint64)
    if arr.dtype == object:  # Python ints too large for int64 and uint64 alike
        raise ValueError("min_deadwood_batch takes 52-bit hand masks (ints in 0..2**52-1); got values "
                         "that do not fit in 64 bits")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"min_deadwood_batch takes integer 52-bit hand masks (e.g. uint64), got dtype "
                        f"{arr.dtype}; build masks with hgin_env.cards.cards_to_mask")
    if arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise ValueError(f"hand masks cannot be negative, got {int(arr.min())}")
    masks = arr.astype(np.uint64, copy=False)
    union = int(np.bitwise_or.reduce(masks, axis=None))  # one pass for both range checks
    if union >= _MASK_LIMIT:
        raise ValueError(f"hand masks have 52 bits (cards 0..51), got a mask with bit {union.bit_length() - 1} set")
    if union < 64 and arr.ndim >= 1 and arr.shape[-1] in (10, 11):
        raise ValueError(f"min_deadwood_batch takes one 52-bit mask per hand, but this array of shape "
                         f"{arr.shape} holds only values below 64: card ids, it seems. Convert each hand "
                         "with hgin_env.cards.cards_to_mask(ids), or (np.uint64(1) << ids).sum(axis=-1)")
    if _HAS_BITWISE_COUNT:
        counts = np.bitwise_count(masks)
        most = int(counts.max())
        if most > 11:
            where = np.unravel_index(int(np.argmax(counts)), masks.shape)
            raise ValueError(f"min_deadwood_batch supports hands of at most 11 cards; the hand at index "
                             f"{tuple(int(i) for i in where)} has {most}")
    return masks


def min_deadwood_batch(hand_masks: np.ndarray | Iterable[int]) -> np.ndarray:
    """Minimum deadwood of each hand in an array of 52-bit masks (uint64), hands of <= 11 cards.

    Returns an int16 array of the same shape. The same fast paths as :func:`deadwood_of_mask`,
    vectorised over whole columns (one array per suit): set ranks no run can use are taken as
    full sets, one remaining set rank uses the closed form, and only the few hands left with
    two or three set ranks enumerate their set choices.

    Input is checked: a non-integer dtype raises ``TypeError``; negative masks, bits above
    51, hands of more than 11 cards and card ids given instead of masks (rows of 10 or 11
    values all below 64) raise ``ValueError``. Build masks with
    :func:`hgin_env.cards.cards_to_mask`.
    """
    masks = _mask_array(hand_masks)
    shape = masks.shape
    h = masks.reshape(-1).view(np.int64)  # masks have 52 bits: the signed view is the same number
    s0 = h & SUIT_BITS
    s1 = (h >> 13) & SUIT_BITS
    s2 = (h >> 26) & SUIT_BITS
    s3 = (h >> 39) & SUIT_BITS
    table = _RUN_DEADWOOD_64
    set_ranks = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    if not set_ranks.any():
        return (table[s0] + table[s1] + table[s2] + table[s3]).astype(np.int16).reshape(shape)
    x = set_ranks & (set_ranks - 1)
    x &= x - 1
    if (x & (x - 1)).any():
        raise ValueError("min_deadwood_batch supports hands of at most 11 cards")
    capable = _RUN_CAPABLE_64
    capable = capable[s0] | capable[s1] | capable[s2] | capable[s3]
    keep = ~(set_ranks & ~capable)  # forced full sets leave every suit
    s0 &= keep
    s1 &= keep
    s2 &= keep
    s3 &= keep
    set_ranks &= capable
    t0, t1, t2, t3 = table[s0], table[s1], table[s2], table[s3]
    out = t0 + t1 + t2 + t3
    # One set rank (its lowest bit; hands without any get zero changes): closed form.
    bit = set_ranks & -set_ranks
    keep = ~bit
    d0 = table[s0 & keep] - t0
    d1 = table[s1 & keep] - t1
    d2 = table[s2 & keep] - t2
    d3 = table[s3 & keep] - t3
    total = d0 + d1 + d2 + d3
    most = np.maximum(np.maximum(d0, d1), np.maximum(d2, d3))
    np.maximum(most, 0, out=most)
    most *= (s0 & s1 & s2 & s3 & bit) != 0  # only a 4-card set may leave one suit out
    total -= most
    np.minimum(total, 0, out=total)
    out += total
    multi = np.flatnonzero(set_ranks & (set_ranks - 1))
    if multi.size:
        sr = set_ranks[multi]
        ranks = np.full((multi.size, 3), -1, dtype=np.int64)
        for k in range(3):
            has = sr != 0
            ranks[has, k] = _LOWEST_BIT[sr[has]]
            sr[has] &= sr[has] - 1
        count = (ranks >= 0).sum(axis=1)
        suits = np.stack([s0[multi], s1[multi], s2[multi], s3[multi]], axis=1)
        for k in (2, 3):
            idx = np.flatnonzero(count == k)
            if idx.size:
                out[multi[idx]] = _batch_with_sets(suits[idx], ranks[idx, :k])
    return out.astype(np.int16).reshape(shape)


def deadwood_without_batch(hand_masks: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """Minimum deadwood of ``hand_masks[i]`` without card ``cards[i, j]``: int16 [n, m].

    The batched engine's "deadwood after each discard" (and after taking the discard top).
    Why it is cheaper than :func:`min_deadwood_batch` on the n*m smaller hands: a hand
    without any rank held three times melds by runs only, suit by suit, so removing one
    card changes one suit's table lookup (``total - RUN[suit] + RUN[suit without card]``).
    Only hands with a possible set take the general path.
    """
    masks = np.asarray(hand_masks, dtype=np.uint64).reshape(-1)
    cards = np.asarray(cards, dtype=np.int64)
    n, m = cards.shape
    if n == 0:
        return np.zeros((0, m), dtype=np.int16)
    h = masks.view(np.int64)
    suits = np.empty((n, 4), dtype=np.int64)
    for s in range(4):
        suits[:, s] = (h >> (13 * s)) & SUIT_BITS
    s0, s1, s2, s3 = suits[:, 0], suits[:, 1], suits[:, 2], suits[:, 3]
    has_set = ((s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)) != 0
    table = _RUN_DEADWOOD_64
    per_suit = table[suits]  # (n, 4)
    total = per_suit.sum(axis=1)
    suit_of = cards // NUM_RANKS
    rows = np.arange(n)[:, None]
    own = suits[rows, suit_of]
    out = total[:, None] - per_suit[rows, suit_of] + table[own & ~(1 << (cards % NUM_RANKS))]
    general = np.flatnonzero(has_set)
    if general.size:
        sub = masks[general, None] & ~CARD_BITS_U64[cards[general]]
        out[general] = min_deadwood_batch(sub)
    return out.astype(np.int16)


#: The mask bit of each card id as uint64 (``CARD_BITS_U64[c] == 1 << c``): turns 0/1 card
#: vectors into hand masks and back, for the batched code here and in its users.
CARD_BITS_U64 = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)


def _batch_with_sets(suits: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Minimum over every set choice for hands that all have ``ranks.shape[1]`` set ranks."""
    left = _set_choice_lefts(suits, ranks)
    dw = RUN_DEADWOOD[left].sum(axis=-1, dtype=np.int16)
    return dw.reshape(len(suits), -1).min(axis=1)


def _set_choice_lefts(suits: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The suit masks left after each set choice: int64 [n, 6, ..., 6 (k times), 4] for
    hands that all have ``k = ranks.shape[1]`` set ranks (padding repeats "no set")."""
    n, k = ranks.shape
    suit_ids = np.arange(4)
    # removal[n, k, option, suit]: the bit that option removes from that suit.
    pattern = ((suits[:, None, :] >> ranks[:, :, None]) & 1) << suit_ids  # (n, k, 4)
    pattern = pattern.sum(axis=-1)  # (n, k)
    opts = _SET_OPTIONS_ARRAY[pattern]  # (n, k, 6)
    removal = ((opts[..., None] >> suit_ids) & 1) << ranks[:, :, None, None]  # (n, k, 6, 4)
    combined = np.zeros((n,) + (_MAX_OPTIONS,) * k + (4,), dtype=np.int64)
    for j in range(k):
        index = [slice(None)] + [None] * k + [slice(None)]
        index[1 + j] = slice(None)
        combined = combined | removal[:, j][tuple(index)]
    return suits.reshape((n,) + (1,) * k + (4,)) & ~combined


def _build_best_removal() -> np.ndarray:
    """For each 13-bit suit mask: the least runs-only deadwood of the mask without one of
    its cards, minus the mask's own (``_NO_CARD`` for the empty mask: nothing to remove)."""
    table = _RUN_DEADWOOD_LIST
    out = np.full(1 << NUM_RANKS, _NO_CARD, dtype=np.int64)
    for m in range(1, 1 << NUM_RANKS):
        out[m] = min(dw for _r, dw in _REMOVALS[m]) - table[m]
    return out


_NO_CARD = 1 << 20
_RANK_VALUES_64 = np.array(RANK_VALUES, dtype=np.int64)
_BEST_REMOVAL = _build_best_removal()


def _sum4(x: np.ndarray) -> np.ndarray:
    """Sum over a last axis of 4 (column adds: numpy reductions over 4-entry rows are slow)."""
    return x[..., 0] + x[..., 1] + x[..., 2] + x[..., 3]


def _min4(x: np.ndarray) -> np.ndarray:
    return np.minimum(np.minimum(x[..., 0], x[..., 1]), np.minimum(x[..., 2], x[..., 3]))


def _best_discard_one_set(suits: np.ndarray, bit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`best_discard_deadwood_batch` for hands (suit masks [n, 4]) with one rank
    (``bit``) held three or four times, in closed form; and the hands' own minimum deadwood
    (the closed form of :func:`min_deadwood_batch`).

    With ``A``/``Q`` a suit's runs-only deadwood and its least after dropping one card, kept
    (``k``) or without the rank (``r``), and ``d_s = A_r - A_k``: dropping a card of suit
    ``s`` leaves ``base - A_k[s] + M[s]``, where ``M[s]`` is the better of keeping suit
    ``s``'s rank card out of the set (``Q_k[s]`` plus the best set change over the other
    suits: nothing, or with four cards the three others) and putting it in a set
    (``Q_r[s]`` plus the other suits of that set: with three cards all of them, with four
    all of them or all but the one whose change is largest).
    """
    run, best_removal = _RUN_DEADWOOD_64, _BEST_REMOVAL
    without = suits & ~bit[:, None]
    a_k, a_r = run[suits], run[without]
    q_k, q_r = best_removal[suits] + a_k, best_removal[without] + a_r
    d = a_r - a_k  # 0 where the suit lacks the rank
    total = _sum4(d)
    rest = total[:, None] - d  # the set's change over the other suits
    four = ((suits[:, 0] & suits[:, 1] & suits[:, 2] & suits[:, 3] & bit) != 0)[:, None]
    # Largest change among the other suits (the one a four-card set may leave out).
    d0, d1, d2, d3 = d[:, 0], d[:, 1], d[:, 2], d[:, 3]
    other_max = np.stack([np.maximum(np.maximum(d1, d2), d3), np.maximum(np.maximum(d0, d2), d3),
                          np.maximum(np.maximum(d0, d1), d3), np.maximum(np.maximum(d0, d1), d2)], axis=1)
    keep_out = np.where(four, np.minimum(0, rest), 0)
    put_in = rest - np.where(four, np.maximum(0, other_max), 0)
    m = np.minimum(q_k + keep_out, q_r + put_in)
    base = _sum4(a_k)
    best = _min4(base[:, None] - a_k + m)
    most = np.maximum(np.maximum(np.maximum(d0, d1), np.maximum(d2, d3)), 0) * four[:, 0]
    return best, base + np.minimum(total - most, 0)


def best_discard_deadwood_batch(hand_masks: np.ndarray | Iterable[int]) -> np.ndarray:
    """For each hand (1 to 11 cards, 52-bit masks): the least minimum deadwood of the hand
    without one of its cards, i.e. ``min(deadwood_without_batch(h, cards of h))``. int16,
    the input's shape; checked like :func:`min_deadwood_batch`.

    Why a formula instead of the ``len(h)`` smaller hands: for a choice ``C`` of sets, the
    cards left meld by runs only, suit by suit, and dropping a card changes one suit's
    lookup. So the answer is the minimum over set choices ``C`` (each a valid set choice
    of the whole hand; a set that used the dropped card is another choice without it) of
    ``sum_s RUN[L_s] + min_s (least RUN[L_s without a card] - RUN[L_s])`` with ``L = h - C``:
    one choice (no set) for most hands, four lookups and a minimum per suit.

    A set rank none of whose cards a run could use (as in :func:`deadwood_of_mask`) stays
    a full set unless the dropped card is one of its own: then the hand's deadwood is that
    of the hand without those ranks, plus the two cards left of a three-card rank (nothing
    for a four-card one). So those ranks leave the enumeration; the last set rank left has a
    closed form (:func:`_best_discard_one_set`), after each set choice of the others.
    """
    masks = _mask_array(hand_masks)
    shape = masks.shape
    h = masks.reshape(-1).view(np.int64)
    s0, s1, s2, s3 = h & SUIT_BITS, (h >> 13) & SUIT_BITS, (h >> 26) & SUIT_BITS, (h >> 39) & SUIT_BITS
    set_ranks = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)
    capable = _RUN_CAPABLE_64
    forced = set_ranks & ~(capable[s0] | capable[s1] | capable[s2] | capable[s3])
    with_forced = np.flatnonzero(forced)
    if with_forced.size:
        four = forced & s0 & s1 & s2 & s3
        keep = ~forced
        s0, s1, s2, s3 = s0 & keep, s1 & keep, s2 & keep, s3 & keep
        set_ranks &= keep
    run, best_removal = _RUN_DEADWOOD_64, _BEST_REMOVAL
    dw = run[s0] + run[s1] + run[s2] + run[s3]  # the hand's deadwood where no set rank is left
    out = dw + np.minimum(np.minimum(best_removal[s0], best_removal[s1]),
                          np.minimum(best_removal[s2], best_removal[s3]))
    general = np.flatnonzero(set_ranks)
    if general.size:
        sr = set_ranks[general]
        several = (sr & (sr - 1)) != 0
        one = general[~several]
        if one.size:
            out[one], dw[one] = _best_discard_one_set(
                np.stack([s0[one], s1[one], s2[one], s3[one]], axis=1), set_ranks[one])
        many = general[several]
        if many.size:
            sr = set_ranks[many]
            ranks = np.full((many.size, 3), -1, dtype=np.int64)
            for k in range(3):  # at most three ranks held three times in 11 cards
                has = sr != 0
                ranks[has, k] = _LOWEST_BIT[sr[has]]
                sr[has] &= sr[has] - 1
            if (sr != 0).any():
                raise ValueError("best_discard_deadwood_batch supports hands of at most 11 cards")
            count = (ranks >= 0).sum(axis=1)
            for k in (2, 3):  # each set choice of the first k - 1 ranks, then the closed form
                idx = np.flatnonzero(count == k)
                if idx.size:
                    rows = many[idx]
                    suits = np.stack([s0[rows], s1[rows], s2[rows], s3[rows]], axis=1)
                    left = _set_choice_lefts(suits, ranks[idx, :k - 1]).reshape(-1, 4)
                    last = np.repeat(1 << ranks[idx, k - 1], _MAX_OPTIONS ** (k - 1))
                    best, own = _best_discard_one_set(left, last)
                    out[rows] = best.reshape(idx.size, -1).min(axis=1)
                    dw[rows] = own.reshape(idx.size, -1).min(axis=1)
    if with_forced.size:  # or drop a card of a forced rank
        four = four[with_forced]
        three = forced[with_forced] & ~four
        low = _LOWEST_BIT[three & -three]  # the least valued three-card rank
        extra = np.where(four != 0, 0, 2 * _RANK_VALUES_64[np.maximum(low, 0)])
        out[with_forced] = np.minimum(out[with_forced], dw[with_forced] + extra)
    return out.astype(np.int16).reshape(shape)


# --------------------------------------------------------------------------- enumeration
def all_melds_of_mask(mask: int) -> list[int]:
    """Every valid meld (as a mask) made only of cards in the hand."""
    suits = _suits(mask)
    melds = []
    for s in range(4):
        sm = suits[s]
        for lo in range(NUM_RANKS - 2):
            run = 0
            for hi in range(lo, NUM_RANKS):
                if not sm >> hi & 1:
                    break
                run |= 1 << (s * NUM_RANKS + hi)
                if hi - lo >= 2:
                    melds.append(run)
    set_ranks = _set_ranks(*suits)
    while set_ranks:
        low = set_ranks & -set_ranks
        r = low.bit_length() - 1
        set_ranks ^= low
        pattern = sum(((suits[s] >> r) & 1) << s for s in range(4))
        for p in SET_OPTIONS[pattern][1:]:
            melds.append(sum(1 << (s * NUM_RANKS + r) for s in range(4) if p >> s & 1))
    return melds


def meld_collections_of_mask(mask: int) -> Iterator[tuple[list[int], int]]:
    """Every collection of pairwise-disjoint melds of the hand, with its deadwood."""
    melds = all_melds_of_mask(mask)
    total = sum(CARD_VALUES[c] for c in mask_to_cards(mask))
    values = [sum(CARD_VALUES[c] for c in mask_to_cards(m)) for m in melds]

    def extend(start: int, used: int, chosen: list[int], melded: int) -> Iterator[tuple[list[int], int]]:
        yield list(chosen), total - melded
        for i in range(start, len(melds)):
            if not melds[i] & used:
                chosen.append(melds[i])
                yield from extend(i + 1, used | melds[i], chosen, melded + values[i])
                chosen.pop()

    yield from extend(0, 0, [], 0)


def meld_partners(card: int) -> int:
    """Mask of the cards that could form a meld (set or run) together with ``card``."""
    r, s = card % NUM_RANKS, card // NUM_RANKS
    mask = 0
    for t in range(4):
        if t != s:
            mask |= 1 << (t * NUM_RANKS + r)
    for dr in (-2, -1, 1, 2):
        if 0 <= r + dr < NUM_RANKS:
            mask |= 1 << (s * NUM_RANKS + r + dr)
    return mask


def melds_with(card: int, hand: int) -> bool:
    """Whether ``card`` forms at least one meld (set or run) with cards of ``hand``.

    This is Neller's test for taking a face-up card: is it in any meld of hand + card. It
    lives here (not with the agents) because determinization weighs worlds by it too.
    """
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    same_rank = sum(1 for s in range(4) if s != suit and hand >> (s * NUM_RANKS + rank) & 1)
    if same_rank >= 2:
        return True
    base = suit * NUM_RANKS

    def has(r: int) -> bool:
        return 0 <= r < NUM_RANKS and bool(hand >> (base + r) & 1)

    return (has(rank - 2) and has(rank - 1)) or (has(rank - 1) and has(rank + 1)) \
        or (has(rank + 1) and has(rank + 2))
