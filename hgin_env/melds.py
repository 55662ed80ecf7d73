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
    NUM_RANKS,
    RANK_VALUES,
    SUIT_BITS,
    as_card_ids,
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


def deadwood_of_mask(mask: int) -> int:
    """Exact minimum deadwood of a hand mask (any size up to 11 cards), uncached."""
    suits = _suits(mask)
    table = _RUN_DEADWOOD_LIST
    set_ranks = _set_ranks(*suits)
    if not set_ranks:
        return table[suits[0]] + table[suits[1]] + table[suits[2]] + table[suits[3]]
    best = 1 << 30
    for choice in _set_choices(suits, set_ranks):
        left = _remove_sets(suits, choice)
        dw = table[left[0]] + table[left[1]] + table[left[2]] + table[left[3]]
        if dw < best:
            best = dw
    return best


#: Cached minimum deadwood by mask: play revisits the same hands (knock checks, agents).
cached_deadwood = lru_cache(maxsize=1 << 17)(deadwood_of_mask)


def min_deadwood(cards: Iterable[int] | str) -> int:
    """Minimum deadwood of a hand given as card ids or text, e.g. ``"4H 5H 6H KD"``."""
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

    This is the one call knock legality needs for an 11-card hand. When no rank has three
    cards, removing a card only changes its own suit's lookup.
    """
    suits = _suits(mask)
    table = _RUN_DEADWOOD_LIST
    out: dict[int, int] = {}
    set_ranks = _set_ranks(*suits)
    if not set_ranks:
        total = table[suits[0]] + table[suits[1]] + table[suits[2]] + table[suits[3]]
        for card in mask_to_cards(mask):
            s, r = divmod(card, NUM_RANKS)
            out[card] = total - table[suits[s]] + table[suits[s] & ~(1 << r)]
        return out
    # With sets possible: the 10-card hand without c has exactly the set choices of the
    # 11-card hand that do not use c, so one pass over the choices serves every discard.
    cards = mask_to_cards(mask)
    for card in cards:
        out[card] = 1 << 30
    for choice in _set_choices(suits, set_ranks):
        left = _remove_sets(suits, choice)
        free = left[0] | left[1] << 13 | left[2] << 26 | left[3] << 39
        t = [table[x] for x in left]
        total = t[0] + t[1] + t[2] + t[3]
        for card in cards:
            if not free >> card & 1:
                continue
            s, r = divmod(card, NUM_RANKS)
            dw = total - t[s] + table[left[s] & ~(1 << r)]
            if dw < out[card]:
                out[card] = dw
    return out


def deadwood_after_discard(cards: Iterable[int] | str) -> dict[int, int]:
    """Card id -> minimum deadwood of the rest, for every card of the hand."""
    return deadwood_after_discard_mask(cards_to_mask(cards))


# --------------------------------------------------------------------------- batched
def _suits_array(masks: np.ndarray) -> np.ndarray:
    h = np.asarray(masks, dtype=np.uint64)
    return np.stack([((h >> np.uint64(13 * s)) & np.uint64(SUIT_BITS)).astype(np.int64)
                     for s in range(4)], axis=-1)


def min_deadwood_batch(hand_masks: np.ndarray | Iterable[int]) -> np.ndarray:
    """Minimum deadwood of each hand in an array of 52-bit masks (uint64), hands of <= 11 cards.

    Returns an int16 array of the same shape.
    """
    masks = np.asarray(hand_masks, dtype=np.uint64)
    shape = masks.shape
    suits = _suits_array(masks.reshape(-1))
    out = RUN_DEADWOOD[suits].sum(axis=-1, dtype=np.int16)
    a, b, c, d = suits.T
    set_ranks = (a & b & (c | d)) | ((a | b) & c & d)
    if set_ranks.any():
        # Peel off up to three set ranks per hand; hands with k set ranks share 6**k combos.
        ranks = np.full((len(suits), 4), -1, dtype=np.int64)
        left = set_ranks.copy()
        for k in range(4):
            has = left != 0
            ranks[has, k] = _LOWEST_BIT[left[has]]
            left[has] &= left[has] - 1
        if (ranks[:, 3] >= 0).any():
            raise ValueError("min_deadwood_batch supports hands of at most 11 cards")
        count = (ranks[:, :3] >= 0).sum(axis=1)
        for k in (1, 2, 3):
            idx = np.nonzero(count == k)[0]
            if idx.size:
                out[idx] = _batch_with_sets(suits[idx], ranks[idx, :k])
    return out.reshape(shape)


def _batch_with_sets(suits: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Minimum over every set choice for hands that all have ``ranks.shape[1]`` set ranks."""
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
    left = suits.reshape((n,) + (1,) * k + (4,)) & ~combined
    dw = RUN_DEADWOOD[left].sum(axis=-1, dtype=np.int16)
    return dw.reshape(n, -1).min(axis=1)


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


def validate_hand(cards: Iterable[int] | str, size: int | None = None) -> tuple[int, ...]:
    """Card ids of a hand, checking its size when one is given."""
    ids = as_card_ids(cards)
    if size is not None and len(ids) != size:
        raise ValueError(f"expected {size} cards, got {len(ids)}")
    return ids
