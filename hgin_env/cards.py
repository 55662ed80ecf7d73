"""Cards: ids 0..51, text notation and 52-bit hand masks.

A card id is ``suit * 13 + rank`` with suits in the order clubs, diamonds, hearts, spades
and ranks ``0 = A`` up to ``12 = K``. A hand is an ``int`` bitmask (bit ``id`` set when the
card is held): the suit of a hand is then a 13-bit slice, which is what the meld tables
in :mod:`hgin_env.melds` are indexed by.
"""

from __future__ import annotations

from collections.abc import Iterable

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
SUIT_BITS = 0x1FFF  # 13 bits: one suit of a hand mask

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"

# Deadwood value by rank: A = 1, 2..10 face value, J Q K = 10.
RANK_VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
CARD_VALUES: tuple[int, ...] = tuple(RANK_VALUES[c % NUM_RANKS] for c in range(NUM_CARDS))

_SUIT_OF_TEXT = {ch: i for i, ch in enumerate(SUIT_CHARS)}
_SUIT_OF_TEXT.update({ch: i for i, ch in enumerate(SUIT_SYMBOLS)})
_SUIT_OF_TEXT.update({ch: i for i, ch in enumerate(SUIT_SYMBOLS.replace("\ufe0f", ""))})
_RANK_OF_TEXT = {ch: i for i, ch in enumerate(RANK_CHARS)}
_RANK_OF_TEXT["10"] = 9


def card_id(rank: int, suit: int) -> int:
    """The id of the card of ``rank`` (0 = A .. 12 = K) and ``suit`` (0 = C .. 3 = S)."""
    return suit * NUM_RANKS + rank


def rank_of(card: int) -> int:
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    return card // NUM_RANKS


def card_value(card: int) -> int:
    """Deadwood value of one card."""
    return CARD_VALUES[card]


def parse_card(text: str) -> int:
    """Parse one card such as ``"TD"``, ``"10♦"`` or ``"a♠"``; unknown text raises ValueError."""
    t = text.strip().upper().replace("\ufe0f", "")
    if len(t) < 2:
        raise ValueError(f"unknown card {text!r}: expected rank A23456789TJQK (or 10) + suit CDHS")
    rank_text, suit_text = t[:-1], t[-1]
    if rank_text not in _RANK_OF_TEXT or suit_text not in _SUIT_OF_TEXT:
        raise ValueError(f"unknown card {text!r}: expected rank A23456789TJQK (or 10) + suit CDHS")
    return card_id(_RANK_OF_TEXT[rank_text], _SUIT_OF_TEXT[suit_text])


def parse_cards(text: str) -> tuple[int, ...]:
    """Parse space- or comma-separated cards, e.g. ``"4H 5H 6H"``; duplicates raise ValueError."""
    cards = tuple(parse_card(tok) for tok in text.replace(",", " ").split())
    if len(set(cards)) != len(cards):
        raise ValueError(f"duplicate card in {text!r}")
    return cards


def format_card(card: int, symbols: bool = False) -> str:
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is outside 0..51")
    suits = SUIT_SYMBOLS if symbols else SUIT_CHARS
    return RANK_CHARS[card % NUM_RANKS] + suits[card // NUM_RANKS]


def format_cards(cards: Iterable[int], symbols: bool = False) -> str:
    """Cards as text in the given order, e.g. ``"4H 5H 6H"``."""
    return " ".join(format_card(c, symbols) for c in cards)


def as_card_ids(cards: Iterable[int] | str) -> tuple[int, ...]:
    """Accept card ids or card text; validate ids and reject duplicates."""
    if isinstance(cards, str):
        return parse_cards(cards)
    ids = tuple(int(c) for c in cards)
    for c in ids:
        if not 0 <= c < NUM_CARDS:
            raise ValueError(f"card id {c} is outside 0..51")
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate card in {format_cards(ids)}")
    return ids


def cards_to_mask(cards: Iterable[int] | str) -> int:
    mask = 0
    for c in as_card_ids(cards):
        mask |= 1 << c
    return mask


def mask_to_cards(mask: int) -> tuple[int, ...]:
    """Card ids of a mask in increasing id order (suit-major)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)

