"""Meld / deadwood functions of the engine against the brute-force reference (tests/brute.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hgin_env import cards as hc
from hgin_env import melds as hm

try:
    from tests import brute as B
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute as B

ADVERSARIAL = [
    # RULES §10 example: 10 cards and the 11-card hand after drawing 7H.
    "4H 5H 6H 9C 9D 9S AC 2C 3C KD",
    "4H 5H 6H 9C 9D 9S AC 2C 3C KD 7H",
    # 4-card sets overlapping runs.
    "7C 7D 7H 7S 5C 6C 8C 9C 5D 6D",
    "7C 7D 7H 7S 5C 6C 8C 5D 6D 8D 9S",
    "5C 5D 5H 5S 3C 4C 6C 7C 3H 4H 6H",
    "9C 9D 9H 9S TC JC 8D 7D TH JH",
    "AC AD AH AS 2C 3C 2D 3D 2H 3H",
    # All 4 aces, 2s and 3s.
    "AC AD AH AS 2C 2D 2H 2S 3C 3D",
    "AC AD AH AS 2C 2D 2H 2S 3C 3D 3H",
    "AC AD AH AS 2C 2D 2H 2S 3C 3D 3S",
    # Two overlapping sets + runs.
    "3C 3D 3H 4C 4D 4H 5C 5D 5H 6S",
    "3C 3D 3H 4C 4D 4H 5C 5D 5H 6S 6C",
    "JC JD JH QC QD QH KC KD KH TC TD",
    "8C 8D 8H 8S 9C 9D 9H 9S TC TD TH",
    "QC QD QH QS KC KD KH KS JC JD",
    # Long runs (ace low, no wrap).
    "AS 2S 3S 4S 5S 6S 7S 8S 9S TS",
    "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS",
    "4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    "QH KH AH 2H 3H 4H JD QD KD AD 2D",
    "QC KC AC JD QD KD AD 2D 3D 5S 6S",
    "2C 3C 4C 5C 6C 7C 8C 5D 5H 5S 8D",
    "6C 7C 8C 9C TC 8D 8H 8S 7H 9H 6H",
    # No melds at all / high cards.
    "KC QD JH TS 9C 8D 7H 6S 5C 4D",
    "KC KD QC QD JC JD TS TH 9S 9H 8C",
    # Runs crossing a set in the middle.
    "3C 4C 5C 6C 7C 5D 5H 6D 6H 7D 7H",
    "2D 3D 4D 5D 6D 7D 4C 4H 4S 7C 7S",
]


def _ids(x) -> list[int]:
    return [int(c) for c in x]


def random_hands(seed: int, n: int, size: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield tuple(int(c) for c in rng.choice(52, size, replace=False))


# ------------------------------------------------------------------ brute self-tests


def test_brute_known_values():
    assert B.min_deadwood("4H 5H 6H 9C 9D 9S AC 2C 3C KD") == 10
    dad = B.deadwood_after_discard("4H 5H 6H 9C 9D 9S AC 2C 3C KD 7H")
    assert dad[B.card_from_text("KD")] == 0
    assert B.min_deadwood("AC AD AH AS 2C 2D 2H 2S 3C 3D") == 3
    assert B.min_deadwood("3C 3D 3H 4C 4D 4H 5C 5D 5H 6S") == 6
    assert B.min_deadwood("7C 7D 7H 7S 5C 6C 8C 9C 5D 6D") == 11
    assert B.min_deadwood("QH KH AH 2H 3H 4H 7C 8D 9S TC") == 10 + 10 + 7 + 8 + 9 + 10
    assert B.min_deadwood("KC QD JH TS 9C 8D 7H 6S 5C 4D") == 79  # no melds
    assert B.min_deadwood("AS 2S 3S 4S 5S 6S 7S 8S 9S TS") == 0
    assert B.is_run(B.cards("AS 2S 3S")) and not B.is_run(B.cards("QS KS AS"))
    assert B.is_set(B.cards("7C 7D 7H 7S")) and not B.is_set(B.cards("7C 7D"))
    assert not B.is_meld(B.cards("7C 8C 7D"))


@pytest.mark.parametrize("seed", [1, 2])
def test_brute_all_melds_is_every_meld_subset(seed):
    """all_melds must equal the set of all subsets of the hand that are melds."""
    for hand in itertools.chain(random_hands(seed, 40, 11), map(B.cards, ADVERSARIAL)):
        expected = set()
        for size in range(3, len(hand) + 1):
            for sub in itertools.combinations(sorted(hand), size):
                if B.is_meld(sub):
                    expected.add(tuple(sorted(sub)))
        assert {tuple(sorted(m)) for m in B.all_melds(hand)} == expected


def test_brute_min_deadwood_is_partition_minimum():
    """Cross-check: min deadwood by trying every assignment of cards to meld labels."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        size = int(rng.integers(5, 8))
        hand = B.random_meldy_hand(rng, set(range(52)), size)
        best = B.hand_value(hand)
        # each card labelled 0 (deadwood) or 1..3 (group); every non-empty group a meld
        for labels in itertools.product(range(4), repeat=size):
            groups = [[c for c, lab in zip(hand, labels, strict=True) if lab == g]
                      for g in (1, 2, 3)]
            if all(not g or B.is_meld(g) for g in groups):
                dw = sum(B.value_of(c) for c, lab in zip(hand, labels, strict=True) if lab == 0)
                best = min(best, dw)
        assert B.min_deadwood(hand) == best, B.hand_text(hand)


# ------------------------------------------------------------------ cards


def test_parse_and_format_cards():
    text = "4H 5H 6H 9C 9D 9S AC 2C 3C KD"
    assert tuple(_ids(hc.parse_cards(text))) == B.cards(text)
    assert tuple(_ids(hc.parse_cards("10♦ A♠ K♣ 7♥"))) == B.cards("TD AS KC 7H")
    for c in range(52):
        assert _ids(hc.parse_cards(B.card_text(c))) == [c]
        assert _ids(hc.parse_cards(hc.format_cards([c]))) == [c]
    rng = np.random.default_rng(0)
    for _ in range(50):
        ids = [int(c) for c in rng.choice(52, 10, replace=False)]
        assert _ids(hc.parse_cards(hc.format_cards(ids))) == ids
    assert hc.cards_to_mask(B.cards("AC KS")) == (1 << 0) | (1 << 51)
    for bad in ["1C", "AX", "11H", "ZZ", "A", "KDD"]:
        with pytest.raises(ValueError):
            hc.parse_cards(bad)


# ------------------------------------------------------------------ min_deadwood / best_melds


def _check_best_melds(hand):
    melds, dw = hm.best_melds(list(hand))
    melds = [tuple(_ids(m)) for m in melds]
    B.check_melds(hand, melds)
    expected = B.min_deadwood(hand)
    assert int(dw) == expected, (B.hand_text(hand), dw, expected)
    assert B.deadwood_of(hand, melds) == expected, (B.hand_text(hand), melds)


@pytest.mark.parametrize("size,seed,n", [(10, 11, 2500), (11, 12, 2500), (7, 13, 300)])
def test_min_deadwood_random(size, seed, n):
    for hand in random_hands(seed, n, size):
        assert int(hm.min_deadwood(list(hand))) == B.min_deadwood(hand), B.hand_text(hand)


@pytest.mark.parametrize("size,seed,n", [(10, 21, 1500), (11, 22, 1500)])
def test_best_melds_random_meldy(size, seed, n):
    """Hands built around melds (many more overlaps than uniform random hands)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        hand = B.random_meldy_hand(rng, set(range(52)), size)
        _check_best_melds(hand)
        assert int(hm.min_deadwood(hand)) == B.min_deadwood(hand)


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_hands(text):
    hand = B.cards(text)
    assert int(hm.min_deadwood(text)) == B.min_deadwood(hand)
    assert int(hm.min_deadwood(list(hand))) == B.min_deadwood(hand)
    _check_best_melds(hand)
    if len(hand) == 11:
        got = {int(k): int(v) for k, v in hm.deadwood_after_discard(list(hand)).items()}
        assert got == B.deadwood_after_discard(hand)


def test_adversarial_expected_values():
    """Hand-checked values, so that the brute force itself is pinned down."""
    expect = {
        "AC AD AH AS 2C 2D 2H 2S 3C 3D 3H": 0,  # AAAA 2222 333
        "AC AD AH AS 2C 2D 2H 2S 3C 3D": 3,  # A(CHS) 2(CHS) A23D + 3C
        "3C 3D 3H 4C 4D 4H 5C 5D 5H 6S 6C": 6,  # 3456C 345D 345H + 6S
        "QC QD QH QS KC KD KH KS JC JD": 10,  # JQK-C QQQ KKK + JD
        "4S 5S 6S 7S 8S 9S TS JS QS KS AS": 1,  # no wrap: AS is deadwood
        "QH KH AH 2H 3H 4H JD QD KD AD 2D": 10 + 10 + 1 + 2,
        "KC QD JH TS 9C 8D 7H 6S 5C 4D": 10 + 10 + 10 + 10 + 9 + 8 + 7 + 6 + 5 + 4,
    }
    for text, value in expect.items():
        assert B.min_deadwood(text) == value, text
        assert int(hm.min_deadwood(text)) == value, text


# ------------------------------------------------------------------ batch / after discard


def test_min_deadwood_batch():
    rng = np.random.default_rng(31)
    hands = []
    for i in range(2400):
        size = int(rng.integers(0, 12)) if i % 3 == 0 else int(rng.choice([10, 11]))
        if i % 2:
            hands.append(tuple(int(c) for c in rng.choice(52, size, replace=False)))
        else:
            hands.append(B.random_meldy_hand(rng, set(range(52)), max(size, 0)))
    hands += [B.cards(t) for t in ADVERSARIAL]
    masks = np.array([sum(1 << c for c in h) for h in hands], dtype=np.uint64)
    got = np.asarray(hm.min_deadwood_batch(masks))
    assert got.shape == (len(hands),)
    for h, g in zip(hands, got, strict=True):
        assert int(g) == B.min_deadwood(h), B.hand_text(h)
        assert int(g) == int(hm.min_deadwood(list(h)))
        assert hc.cards_to_mask(h) == sum(1 << c for c in h)


def test_best_discard_deadwood_batch():
    """The least deadwood after one more discard, for hands of 1..11 cards (random, meldy,
    set-rich and the adversarial ones), against the brute force over every discard."""
    rng = np.random.default_rng(43)
    hands = [B.cards(t) for t in ADVERSARIAL]
    for i in range(600):
        size = int(rng.integers(1, 12)) if i % 3 == 0 else int(rng.choice([10, 11]))
        if i % 3 == 1:
            hands.append(tuple(int(c) for c in rng.choice(52, size, replace=False)))
        elif i % 3 == 2:
            hands.append(B.random_meldy_hand(rng, set(range(52)), size))
        else:  # three or four of several ranks (forced and run-capable sets), some runs
            ranks = rng.choice(13, 4, replace=False)
            pool = [s * 13 + r for r in ranks for s in range(4)] + [int(c) for c in rng.choice(52, 6)]
            hands.append(tuple(sorted({int(c) for c in rng.permutation(pool)[:size]})))
    masks = np.array([sum(1 << c for c in h) for h in hands], dtype=np.uint64)
    got = hm.best_discard_deadwood_batch(masks.reshape(-1, 1))
    assert got.shape == (len(hands), 1) and got.dtype == np.int16
    for h, g in zip(hands, got[:, 0], strict=True):
        assert int(g) == min(B.min_deadwood(tuple(c for c in h if c != x)) for x in h), B.hand_text(h)
    with pytest.raises(ValueError, match="at most 11 cards"):
        hm.best_discard_deadwood_batch(np.array([(1 << 12) - 1], dtype=np.uint64))
    with pytest.raises(TypeError):
        hm.best_discard_deadwood_batch(np.array([0.5]))


def test_deadwood_after_discard_random():
    rng = np.random.default_rng(41)
    for i in range(1200):
        if i % 2:
            hand = tuple(int(c) for c in rng.choice(52, 11, replace=False))
        else:
            hand = B.random_meldy_hand(rng, set(range(52)), 11)
        got = {int(k): int(v) for k, v in hm.deadwood_after_discard(list(hand)).items()}
        assert got == B.deadwood_after_discard(hand), B.hand_text(hand)
