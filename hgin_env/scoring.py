"""Showdown, hand settlement and the duel's Hollywood ``Scoreboard`` (a two-row ``Sheet``).

The showdown is solved exactly (RULES.md §8): the defender picks its melds and chained
lay-offs to minimise its deadwood; the knocker picks, among every arrangement of its
cards within the knock limit, the one with the best result against that reply.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from .cards import NUM_RANKS, as_card_ids, mask_to_cards
from .melds import (
    Meld,
    best_arrangement_of_mask,
    cached_deadwood,
    meld_collections_of_mask,
)
from .rules import Rules, get_rules
from .sheets import Sheet


@dataclass(frozen=True)
class HandResult:
    """How one hand ended, with everything shown at the table.

    ``winner`` is "knocker" or "defender" (None for a dead hand); ``points`` already
    includes bonuses and the Oklahoma multiplier.
    """

    kind: str  # "gin", "big_gin", "knock", "undercut" or "dead"
    winner: str | None
    points: int
    knocker_deadwood: int = 0
    defender_deadwood: int = 0
    knocker_melds: tuple[Meld, ...] = ()
    defender_melds: tuple[Meld, ...] = ()
    #: (card, index into knocker_melds) for each defender card laid off.
    layoffs: tuple[tuple[int, int], ...] = ()
    knocker_deadwood_cards: tuple[int, ...] = ()
    defender_deadwood_cards: tuple[int, ...] = ()
    multiplier: int = 1
    knock_limit: int = 10

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "winner": self.winner, "points": self.points,
            "knocker_deadwood": self.knocker_deadwood,
            "defender_deadwood": self.defender_deadwood,
            "knocker_melds": [list(m) for m in self.knocker_melds],
            "defender_melds": [list(m) for m in self.defender_melds],
            "layoffs": [list(x) for x in self.layoffs],
            "knocker_deadwood_cards": list(self.knocker_deadwood_cards),
            "defender_deadwood_cards": list(self.defender_deadwood_cards),
            "multiplier": self.multiplier, "knock_limit": self.knock_limit,
        }


DEAD_HAND = HandResult(kind="dead", winner=None, points=0)


# --------------------------------------------------------------------------- lay-offs
def _layoff_chains(knocker_melds: Iterable[int], defender: int) -> list[tuple[int, list[int]]]:
    """(meld index, cards the defender could add in order) for each open end of each meld.

    A 3-card set takes its missing 4th card; a run takes cards extending either end, one
    after another, stopping at the first card the defender does not hold.
    """
    chains = []
    for index, meld in enumerate(knocker_melds):
        cards = mask_to_cards(meld)
        ranks = {c % NUM_RANKS for c in cards}
        if len(ranks) == 1:
            if len(cards) == 3:
                rank = cards[0] % NUM_RANKS
                missing = next(s * NUM_RANKS + rank for s in range(4)
                               if not meld >> (s * NUM_RANKS + rank) & 1)
                if defender >> missing & 1:
                    chains.append((index, [missing]))
            continue
        suit_base = cards[0] - cards[0] % NUM_RANKS
        lo, hi = cards[0] % NUM_RANKS, cards[-1] % NUM_RANKS
        down = []
        for r in range(lo - 1, -1, -1):
            if not defender >> (suit_base + r) & 1:
                break
            down.append(suit_base + r)
        up = []
        for r in range(hi + 1, NUM_RANKS):
            if not defender >> (suit_base + r) & 1:
                break
            up.append(suit_base + r)
        for chain in (down, up):
            if chain:
                chains.append((index, chain))
    return chains


def _reply_to_chains(chains: list[list[int]], defender: int) -> tuple[int, int]:
    """Any union of chain prefixes can be laid off (chains meeting from two runs split at
    any point), so the search is over the prefix length of each chain."""
    best_dw, best_laid = cached_deadwood(defender), 0
    if not chains:
        return best_dw, 0
    prefix_masks = []
    for chain in chains:
        masks, m = [0], 0
        for card in chain:
            m |= 1 << card
            masks.append(m)
        prefix_masks.append(masks)
    seen = {0}
    for combo in itertools.product(*prefix_masks):
        laid = 0
        for m in combo:
            laid |= m
        if laid in seen:
            continue
        seen.add(laid)
        dw = cached_deadwood(defender & ~laid)
        if dw < best_dw:
            best_dw, best_laid = dw, laid
    return best_dw, best_laid


def _assign_layoffs(knocker_melds: list[int], defender: int, laid: int) -> list[tuple[int, int]]:
    """Which knocker meld each laid-off card goes onto (first chain that reaches it)."""
    out = []
    for index, chain in _layoff_chains(knocker_melds, defender):
        for card in chain:
            if not laid >> card & 1:
                break
            out.append((card, index))
            laid &= ~(1 << card)
    return out


def _hand_value(knocker_dw: int, defender_dw: int, undercut_bonus: int) -> int:
    """Signed points for the knocker: positive if it wins, minus the defender's otherwise."""
    if knocker_dw < defender_dw:
        return defender_dw - knocker_dw
    return -(knocker_dw - defender_dw + undercut_bonus)


def _reply_details(knocker_melds: list[int], defender: int,
                   laid: int) -> tuple[int, tuple[tuple[int, int], ...], list[int]]:
    """The defender's deadwood, lay-offs (card, meld index) and own meld masks once the
    cards in ``laid`` are laid off."""
    melds, dw = best_arrangement_of_mask(defender & ~laid)
    return dw, tuple(_assign_layoffs(knocker_melds, defender, laid)), melds


def defender_reply(knocker_melds: Iterable[Iterable[int]], defender: Iterable[int] | str,
                   gin: bool = False) -> tuple[int, tuple[tuple[int, int], ...], tuple[Meld, ...]]:
    """The defender's best answer to melds the knocker laid (RULES.md §8.1): the least
    deadwood it can reach, its lay-offs as (card, index into ``knocker_melds``) in an order
    they can be laid one by one (each chain outward from its meld), and its own melds.
    Against gin (``gin=True``) nothing is laid off.

    :func:`settle` answers every arrangement of the knocker with this same search; this is
    the answer to one arrangement that is already on the table (a player laying off at
    another engine's table, e.g. ``arena.openspiel``)."""
    d_cards = as_card_ids(defender)
    d_mask = sum(1 << c for c in d_cards)
    melds = [sum(1 << c for c in as_card_ids(m)) for m in knocker_melds]
    if any(m & d_mask for m in melds):
        raise ValueError("the defender holds a card of the knocker's melds")
    laid = 0 if gin else _reply_to_chains(sorted(c for _, c in _layoff_chains(melds, d_mask)), d_mask)[1]
    dw, layoffs, own = _reply_details(melds, d_mask, laid)
    return dw, layoffs, tuple(mask_to_cards(m) for m in own)


# --------------------------------------------------------------------------- settle
def settle(knocker: Iterable[int] | str, defender: Iterable[int] | str,
           rules: Rules | str | None = None, knock_limit: int | None = None,
           multiplier: int = 1) -> HandResult:
    """Settle a hand: the knocker's 10 cards (11 for big gin) against the defender's 10.

    ``knock_limit`` overrides the rules' limit (Oklahoma hands); ``multiplier`` scales the
    points (Oklahoma spade upcard). Raises ``ValueError`` when the knocker may not knock.
    """
    rules = get_rules(rules)
    limit = rules.knock_limit if knock_limit is None else knock_limit
    k_cards, d_cards = as_card_ids(knocker), as_card_ids(defender)
    if len(d_cards) != 10:
        raise ValueError(f"the defender must hold 10 cards, got {len(d_cards)}")
    if set(k_cards) & set(d_cards):
        raise ValueError("knocker and defender share cards")
    k_mask = sum(1 << c for c in k_cards)
    d_mask = sum(1 << c for c in d_cards)
    k_min = cached_deadwood(k_mask)

    if len(k_cards) == 11:
        if rules.big_gin_bonus is None:
            raise ValueError("big gin is not allowed by these rules (big_gin_bonus=None)")
        if k_min != 0:
            raise ValueError(f"big gin needs all 11 cards melded; deadwood is {k_min}")
        return _gin_result("big_gin", rules.big_gin_bonus, k_mask, d_mask, multiplier, limit)
    if len(k_cards) != 10:
        raise ValueError(f"the knocker must hold 10 cards, got {len(k_cards)}")
    if k_min == 0:
        return _gin_result("gin", rules.gin_bonus, k_mask, d_mask, multiplier, limit)
    if k_min > limit:
        raise ValueError(f"cannot knock: deadwood {k_min} exceeds the knock limit {limit}")

    best: tuple[int, int] | None = None  # (value, -knocker deadwood)
    best_melds: list[int] = []
    best_laid = 0
    replies: dict[tuple[tuple[int, ...], ...], tuple[int, int]] = {}
    for melds, k_dw in meld_collections_of_mask(k_mask):
        if k_dw > limit:
            continue
        # The reply depends only on the lay-off chains the arrangement exposes.
        chains = sorted(c for _, c in _layoff_chains(melds, d_mask))
        key = tuple(tuple(c) for c in chains)
        reply = replies.get(key)
        if reply is None:
            reply = replies[key] = _reply_to_chains(chains, d_mask)
        d_dw, laid = reply
        score = (_hand_value(k_dw, d_dw, rules.undercut_bonus), -k_dw)
        if best is None or score > best:
            best, best_melds, best_laid = score, list(melds), laid
    assert best is not None
    k_dw = -best[1]
    value = best[0]
    d_dw, layoffs, d_melds = _reply_details(best_melds, d_mask, best_laid)
    k_melded = 0
    for m in best_melds:
        k_melded |= m
    d_melded = best_laid
    for m in d_melds:
        d_melded |= m
    return HandResult(
        kind="knock" if value > 0 else "undercut",
        winner="knocker" if value > 0 else "defender",
        points=abs(value) * multiplier,
        knocker_deadwood=k_dw,
        defender_deadwood=d_dw,
        knocker_melds=tuple(mask_to_cards(m) for m in best_melds),
        defender_melds=tuple(mask_to_cards(m) for m in d_melds),
        layoffs=layoffs,
        knocker_deadwood_cards=mask_to_cards(k_mask & ~k_melded),
        defender_deadwood_cards=mask_to_cards(d_mask & ~d_melded),
        multiplier=multiplier,
        knock_limit=limit,
    )


def _gin_result(kind: str, bonus: int, k_mask: int, d_mask: int, multiplier: int,
                limit: int) -> HandResult:
    """Gin: the defender counts its own melds only; no lay-offs, never undercut."""
    k_melds, _ = best_arrangement_of_mask(k_mask)
    d_melds, d_dw = best_arrangement_of_mask(d_mask)
    d_melded = 0
    for m in d_melds:
        d_melded |= m
    return HandResult(
        kind=kind, winner="knocker", points=(bonus + d_dw) * multiplier,
        knocker_deadwood=0, defender_deadwood=d_dw,
        knocker_melds=tuple(mask_to_cards(m) for m in k_melds),
        defender_melds=tuple(mask_to_cards(m) for m in d_melds),
        defender_deadwood_cards=mask_to_cards(d_mask & ~d_melded),
        multiplier=multiplier, knock_limit=limit,
    )


# --------------------------------------------------------------------------- scoreboard
@dataclass
class Scoreboard(Sheet):
    """Hollywood columns for two players (RULES.md §10): the duel's two-row
    :class:`~hgin_env.sheets.Sheet`, rows ``player_0`` and ``player_1``.

    A player's n-th win scores in its first min(n, columns) columns; every column is one
    contest, decided (and frozen) when a player's total there reaches the target.
    ``settlement`` holds box and game bonuses, settled as each column closes; it never
    decides the match. ``columns`` is an int64 numpy array of shape (2, columns), row =
    player; ``to_dict()`` (and the environment's ``info["scoreboard"]``) gives the same
    numbers as nested lists. Unlike the formats' sheets, an even split of the columns won
    is a draw (``match_winner`` None).
    """

    rules: Rules = field(default_factory=Rules)
    size: int = field(default=2, init=False)
    labels: tuple[str, ...] = field(default=("player_0", "player_1"), init=False)

    row_noun = "player"
    void_noun = "dead hand"
    totals_break_column_ties = False
    dict_keys = ("columns", "column_winners", "wins", "settlement", "dead_hands",
                 "match_over", "match_winner")

    @property
    def dead_hands(self) -> int:
        """Hands that ended dead (the sheet's ``void``)."""
        return self.void

    @dead_hands.setter
    def dead_hands(self, value: int) -> None:
        self.void = value

    def record_dead(self) -> None:
        self.record_void()
