"""Slow, obviously-correct reference implementation of the Gin Rummy rules.

Written from ``RULES.md`` only (sections 1, 5, 6, 8, 9, 10), independently of the fast
engine in ``hgin_env``.  Everything here is exhaustive enumeration: clarity over speed.

Card id = suit * 13 + rank; suits C=0, D=1, H=2, S=3; rank 0=A, 1=2, ..., 9=T, 10=J,
11=Q, 12=K.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


# --------------------------------------------------------------------------- cards


def rank_of(card: int) -> int:
    return card % 13


def suit_of(card: int) -> int:
    return card // 13


def value_of(card: int) -> int:
    """Deadwood value: A=1, 2..10 face value, J/Q/K=10 (RULES §1.3)."""
    return min(rank_of(card) + 1, 10)


def make_card(rank: int, suit: int) -> int:
    return suit * 13 + rank


def card_from_text(token: str) -> int:
    token = token.strip()
    rank_text, suit_text = token[:-1], token[-1]
    suit_text = SUIT_SYMBOLS.get(suit_text, suit_text).upper()
    rank_text = rank_text.upper()
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in RANK_CHARS or suit_text not in SUIT_CHARS:
        raise ValueError(f"bad card {token!r}")
    return make_card(RANK_CHARS.index(rank_text), SUIT_CHARS.index(suit_text))


def cards(text_or_ids) -> tuple[int, ...]:
    """Accept a text string ("4H 5H 6H") or an iterable of ids; return a tuple of ids."""
    if isinstance(text_or_ids, str):
        return tuple(card_from_text(t) for t in text_or_ids.split())
    return tuple(int(c) for c in text_or_ids)


def card_text(card: int) -> str:
    return RANK_CHARS[rank_of(card)] + SUIT_CHARS[suit_of(card)]


def hand_text(hand) -> str:
    return " ".join(card_text(c) for c in sorted(hand))


def hand_value(hand) -> int:
    return sum(value_of(c) for c in hand)


# --------------------------------------------------------------------------- melds


def is_set(group) -> bool:
    """3 or 4 cards of the same rank (necessarily distinct suits, one deck)."""
    group = set(group)
    return len(group) in (3, 4) and len({rank_of(c) for c in group}) == 1


def is_run(group) -> bool:
    """3+ cards of one suit with consecutive ranks, ace low, no wrap (RULES §1.2, §5.2)."""
    group = set(group)
    if len(group) < 3 or len({suit_of(c) for c in group}) != 1:
        return False
    ranks = sorted(rank_of(c) for c in group)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def is_meld(group) -> bool:
    return is_set(group) or is_run(group)


def all_melds(hand) -> list[tuple[int, ...]]:
    """Every valid meld whose cards all lie in ``hand`` (each as a sorted tuple)."""
    hand = set(cards(hand))
    melds = []
    # Sets: every 3- and 4-subset of one rank.
    for rank in range(13):
        same = sorted(c for c in hand if rank_of(c) == rank)
        for size in (3, 4):
            for combo in itertools.combinations(same, size):
                melds.append(tuple(combo))
    # Runs: every start rank and every length >= 3 inside one suit.
    for suit in range(4):
        for start in range(13):
            top = start  # ranks start .. top-1 are all in the hand
            while top < 13 and make_card(top, suit) in hand:
                top += 1
            for end in range(start + 3, top + 1):
                melds.append(tuple(make_card(r, suit) for r in range(start, end)))
    for m in melds:
        assert is_meld(m)
    return melds


def meld_collections(hand):
    """Yield every collection (tuple of melds) of pairwise-disjoint melds, incl. the empty one."""
    melds = all_melds(hand)

    def rec(i, used, chosen):
        if i == len(melds):
            yield tuple(chosen)
            return
        yield from rec(i + 1, used, chosen)  # skip meld i
        if not used & set(melds[i]):
            yield from rec(i + 1, used | set(melds[i]), chosen + [melds[i]])

    yield from rec(0, frozenset(), [])


def unmelded(hand, melds) -> list[int]:
    used = {c for m in melds for c in m}
    return sorted(c for c in cards(hand) if c not in used)


def deadwood_of(hand, melds) -> int:
    return hand_value(unmelded(hand, melds))


@cache
def _min_deadwood_sorted(hand: tuple[int, ...]) -> int:
    return min(deadwood_of(hand, coll) for coll in meld_collections(hand))


def min_deadwood(hand) -> int:
    return _min_deadwood_sorted(tuple(sorted(cards(hand))))


def deadwood_after_discard(hand) -> dict[int, int]:
    hand = cards(hand)
    return {c: min_deadwood([x for x in hand if x != c]) for c in hand}


def check_melds(hand, melds) -> None:
    """Assert that ``melds`` are valid, pairwise disjoint and drawn from ``hand``."""
    hand = set(cards(hand))
    seen: set[int] = set()
    for m in melds:
        m = list(m)
        assert len(set(m)) == len(m), f"duplicate card in meld {hand_text(m)}"
        assert is_meld(m), f"not a meld: {hand_text(m)}"
        assert set(m) <= hand, f"meld {hand_text(m)} not in hand {hand_text(hand)}"
        assert not seen & set(m), f"meld {hand_text(m)} overlaps another meld"
        seen |= set(m)


# --------------------------------------------------------------------------- lay-offs


def can_lay_off(card: int, group) -> bool:
    """A set of 3 takes the 4th card; a run takes a card at either end (RULES §8.1).

    Adding a card to a meld keeps it a meld exactly in those cases."""
    return card not in group and is_meld(set(group) | {card})


def defender_best(defender, knocker_melds) -> int:
    """Min defender deadwood: own melds + lay-offs onto the knocker's melds (RULES §8.1-8.4).

    Exhaustive search over every sequence of single-card lay-offs (so chains such as
    3-4-5S <- 6S <- 7S are included); at every reachable state the defender melds the rest
    as well as it can."""
    return _defender_best(
        tuple(sorted(cards(defender))),
        tuple(sorted(tuple(sorted(m)) for m in knocker_melds)),
    )


@cache
def _defender_best(defender: tuple[int, ...], knocker_melds: tuple[tuple[int, ...], ...]) -> int:
    best = [10**9]
    seen = set()

    def rec(remaining: frozenset, groups: tuple[frozenset, ...]):
        key = (remaining, groups)
        if key in seen:
            return
        seen.add(key)
        best[0] = min(best[0], min_deadwood(remaining))
        for c in remaining:
            for i, g in enumerate(groups):
                if can_lay_off(c, g):
                    rec(remaining - {c}, groups[:i] + (g | {c},) + groups[i + 1 :])

    rec(frozenset(defender), tuple(frozenset(m) for m in knocker_melds))
    return best[0]


# --------------------------------------------------------------------------- hand score


@dataclass(frozen=True)
class Outcome:
    winner: str  # "knocker" / "defender"
    points: int
    kind: str  # "gin" / "knock" / "undercut"
    knocker_deadwood: int
    defender_deadwood: int
    knocker_melds: tuple[tuple[int, ...], ...] = ()

    @property
    def signed(self) -> int:
        return self.points if self.winner == "knocker" else -self.points


def hand_score(k: int, d: int, gin_bonus: int = 25, undercut_bonus: int = 25,
               multiplier: int = 1) -> tuple[str, int, str]:
    """RULES §9.  ``d`` for gin is the defender's own min deadwood (no lay-offs)."""
    if k == 0:
        return "knocker", (gin_bonus + d) * multiplier, "gin"
    if k < d:
        return "knocker", (d - k) * multiplier, "knock"
    return "defender", (k - d + undercut_bonus) * multiplier, "undercut"


def settle_outcomes(knocker, defender, knock_limit: int = 10, gin_bonus: int = 25,
                    undercut_bonus: int = 25, multiplier: int = 1) -> list[Outcome]:
    """The outcome of every knocker arrangement (meld collection) with deadwood <= limit."""
    knocker = cards(knocker)
    defender = cards(defender)
    assert len(set(knocker) | set(defender)) == len(knocker) + len(defender)
    outcomes = []
    for coll in meld_collections(knocker):
        k = deadwood_of(knocker, coll)
        if k > knock_limit:
            continue
        if k == 0:
            d = min_deadwood(defender)
        else:
            d = defender_best(defender, coll)
        winner, points, kind = hand_score(k, d, gin_bonus, undercut_bonus, multiplier)
        outcomes.append(Outcome(winner, points, kind, k, d, coll))
    return outcomes


def settle(knocker, defender, knock_limit: int = 10, gin_bonus: int = 25,
           undercut_bonus: int = 25, multiplier: int = 1) -> Outcome:
    """Best outcome for the knocker over all its legal arrangements (RULES §8.4)."""
    outcomes = settle_outcomes(knocker, defender, knock_limit, gin_bonus, undercut_bonus,
                               multiplier)
    if not outcomes:
        raise ValueError("knocker deadwood exceeds the knock limit")
    return max(outcomes, key=lambda o: o.signed)


# --------------------------------------------------------------------------- scoreboard


class RefScoreboard:
    """Hollywood columns, RULES §10 (default: 3 columns to 100, majority of columns)."""

    def __init__(self, columns: int = 3, target: int = 100):
        self.ncols = columns
        self.target = target
        self.totals = [[0] * columns for _ in range(2)]
        self.winners: list[int | None] = [None] * columns
        self.win_counts = [0, 0]

    def record(self, player: int, points: int) -> None:
        self.win_counts[player] += 1
        opened = min(self.win_counts[player], self.ncols)  # k-th win scores in cols 1..k
        for col in range(opened):
            if self.winners[col] is not None:
                continue  # decided: frozen for both players
            self.totals[player][col] += points
            if self.totals[player][col] >= self.target:
                self.winners[col] = player

    @property
    def match_over(self) -> bool:
        return all(w is not None for w in self.winners)

    @property
    def match_winner(self) -> int | None:
        if not self.match_over:
            return None
        for p in (0, 1):
            if 2 * sum(1 for w in self.winners if w == p) > self.ncols:
                return p
        return None


# --------------------------------------------------------------------------- generators


def random_meld(rng, available: set[int]) -> tuple[int, ...] | None:
    """A random valid meld made of ``available`` cards (None if the draw fails)."""
    if rng.random() < 0.5:
        rank = int(rng.integers(13))
        same = [c for c in sorted(available) if rank_of(c) == rank]
        size = 3 if rng.random() < 0.7 else 4
        if len(same) < size:
            return None
        return tuple(sorted(int(c) for c in rng.choice(same, size, replace=False)))
    suit = int(rng.integers(4))
    length = int(rng.choice([3, 3, 3, 4, 4, 5, 6]))
    start = int(rng.integers(0, 14 - length))
    run = tuple(make_card(r, suit) for r in range(start, start + length))
    if not set(run) <= available:
        return None
    return run


def random_meldy_hand(rng, available: set[int], size: int = 10) -> tuple[int, ...]:
    """A random hand of ``size`` cards from ``available``: a few random melds plus filler."""
    available = set(available)
    hand: list[int] = []
    for _ in range(int(rng.integers(1, 4))):
        m = random_meld(rng, available)
        if m is not None and len(hand) + len(m) <= size:
            hand.extend(m)
            available -= set(m)
    hand.extend(int(c) for c in rng.choice(sorted(available), size - len(hand), replace=False))
    return tuple(hand)


def random_knocker(rng, knock_limit: int = 10, size: int = 10,
                   gin_rate: float = 0.2) -> tuple[int, ...]:
    """A random hand of ``size`` cards whose min deadwood is <= knock_limit (gin hands are
    kept only with probability ``gin_rate``)."""
    while True:
        hand = random_meldy_hand(rng, set(range(52)), size)
        dw = min_deadwood(hand)
        if dw <= knock_limit and (dw > 0 or rng.random() < gin_rate):
            return hand


def lay_off_candidates(hand) -> set[int]:
    """Cards outside ``hand`` that could ever be laid off on one of its melds (or chains)."""
    hand = set(hand)
    out = set()
    for m in all_melds(hand):
        for c in range(52):
            if c not in hand and can_lay_off(c, m):
                out.add(c)
                # one step of chaining: the next card beyond it
                for c2 in range(52):
                    if c2 not in hand and c2 != c and can_lay_off(c2, set(m) | {c}):
                        out.add(c2)
    return out


def random_defender(rng, knocker, bias: float = 0.5, size: int = 10,
                    strong: bool = False) -> tuple[int, ...]:
    """A random hand disjoint from ``knocker``; with probability ``bias`` per candidate it
    includes cards that could be laid off on the knocker's melds.  ``strong`` hands are
    built around random melds (to produce undercuts)."""
    knocker = set(knocker)
    hand: list[int] = []
    for c in sorted(lay_off_candidates(knocker)):
        if len(hand) < size and rng.random() < bias:
            hand.append(c)
    available = set(range(52)) - knocker - set(hand)
    if strong:
        hand.extend(random_meldy_hand(rng, available, size - len(hand)))
    else:
        hand.extend(int(c) for c in rng.choice(sorted(available), size - len(hand), replace=False))
    return tuple(hand)
