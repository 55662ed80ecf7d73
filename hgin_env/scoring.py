"""Showdown, hand settlement and the Hollywood three-column ``Scoreboard``.

The showdown is solved exactly (RULES.md §8): the defender picks its melds and chained
lay-offs to minimise its deadwood; the knocker picks, among every arrangement of its
cards within the knock limit, the one with the best result against that reply.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .cards import NUM_RANKS, as_card_ids, mask_to_cards
from .melds import (
    Meld,
    best_arrangement_of_mask,
    cached_deadwood,
    meld_collections_of_mask,
)
from .rules import Rules, get_rules

if TYPE_CHECKING:  # sheets imports this module
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
    remaining = d_mask & ~best_laid
    d_melds, d_dw = best_arrangement_of_mask(remaining)
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
        layoffs=tuple(_assign_layoffs(best_melds, d_mask, best_laid)),
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
def score_win(board: Scoreboard | Sheet, row: int, points: int) -> list[int]:
    """The Hollywood column rule (RULES.md §10), for the duel's :class:`Scoreboard` and the
    formats' :class:`~hgin_env.sheets.Sheet` alike: the row's n-th win adds ``points`` to its
    first min(n, columns) columns that are still open; a column whose total reaches the
    target is decided for that row, frozen, and settled (``board._settle_column``). Returns
    the columns this win decided. The caller has validated ``row`` and ``points``."""
    board.wins[row] += 1
    decided = []
    for j in range(min(board.wins[row], board.num_columns)):
        if board.column_winners[j] is not None:
            continue
        board.columns[row, j] += points
        board.boxes[row, j] += 1
        if board.columns[row, j] >= board.rules.target:
            board.column_winners[j] = row
            board.decided_order.append(j)
            decided.append(j)
            board._settle_column(j, row)
    return decided


@dataclass
class Scoreboard:
    """Hollywood columns for two players (RULES.md §10).

    A player's n-th win scores in its first min(n, columns) columns; every column is one
    contest, decided (and frozen) when a player's total there reaches the target.
    ``settlement`` holds box and game bonuses, settled as each column closes; it never
    decides the match.
    """

    rules: Rules = field(default_factory=Rules)
    #: Running totals: an int64 numpy array of shape (2, columns), row = player, so that
    #: ``columns[p, j]``, ``columns[:, j]`` and ``columns.sum(axis=1)`` work; ``to_dict()``
    #: (and the environment's ``info["scoreboard"]``) gives the same numbers as nested lists.
    columns: np.ndarray = field(init=False)
    #: Per column: the player who won it, or None while it is open.
    column_winners: list[int | None] = field(init=False)
    #: Hands won by each player.
    wins: list[int] = field(init=False)
    #: Hands each player scored in each column (int64 array, 2 x columns).
    boxes: np.ndarray = field(init=False)
    #: Box and game bonuses settled as columns close (int64 array, 2 x columns).
    settlement: np.ndarray = field(init=False)
    dead_hands: int = field(init=False, default=0)
    #: Order in which columns were decided.
    decided_order: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.rules = get_rules(self.rules)
        n = self.rules.columns
        self.columns = np.zeros((2, n), dtype=np.int64)
        self.column_winners = [None] * n
        self.wins = [0, 0]
        self.boxes = np.zeros((2, n), dtype=np.int64)
        self.settlement = np.zeros((2, n), dtype=np.int64)
        self.decided_order = []

    @property
    def num_columns(self) -> int:
        return self.rules.columns

    def open_columns(self, player: int) -> list[bool]:
        """Columns the player's wins have opened (decided ones included)."""
        return [j < self.wins[player] for j in range(self.num_columns)]

    def record(self, player: int, points: int) -> list[int]:
        """Record a won hand; returns the columns this win decided."""
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
        if not isinstance(points, int | np.integer) or points < 0:
            raise ValueError(f"points must be an int >= 0, got {points!r}")
        if self.match_over:
            raise ValueError("the match is over; no more hands can be recorded")
        return score_win(self, player, points)

    def record_dead(self) -> None:
        self.dead_hands += 1

    def _settle_column(self, j: int, winner: int) -> None:
        r = self.rules
        bonus = r.game_bonus
        if r.shutout_game_bonus is not None and self.columns[1 - winner, j] == 0:
            bonus = r.shutout_game_bonus
        self.settlement[winner, j] += bonus
        self.settlement[:, j] += r.box_bonus * self.boxes[:, j]

    @property
    def match_over(self) -> bool:
        if self.rules.short_session:
            return bool(self.decided_order)
        return all(w is not None for w in self.column_winners)

    @property
    def columns_won(self) -> list[int]:
        return [sum(1 for w in self.column_winners if w == p) for p in (0, 1)]

    @property
    def match_winner(self) -> int | None:
        """Majority of columns (None while running, or on an even split of an even count)."""
        if not self.match_over:
            return None
        if self.rules.short_session:
            totals = self.columns.sum(axis=1)
            if totals[0] != totals[1]:
                return int(np.argmax(totals))
            return self.column_winners[self.decided_order[0]]
        won = self.columns_won
        if won[0] == won[1]:
            return None
        return 0 if won[0] > won[1] else 1

    def final_scores(self) -> np.ndarray:
        """Column totals plus settled bonuses, per player and column."""
        return self.columns + self.settlement

    def settled_totals(self) -> np.ndarray:
        """Per player: every column's total plus the settled game, shutout and box bonuses
        (int64 [2]); equals the running totals until a column of a settling profile closes."""
        return self.final_scores().sum(axis=1)

    @property
    def is_settled(self) -> bool:
        """A column has closed under rules with game, shutout or box bonuses."""
        return bool(self.rules.settles_columns and self.decided_order)

    def settlement_text(self, names: Sequence[str] = ("player_0", "player_1")) -> str:
        """The settlement in words, '' until ``is_settled``: each player's settled total
        (bonuses included), the match winner (else the larger total) first, and the
        difference the other pays (004: "el perdedor paga la diferencia entre los puntajes
        al ganador", the loser pays the winner the difference between the scores)."""
        if not self.is_settled:
            return ""
        totals = [int(t) for t in self.settled_totals()]
        first = self.match_winner
        if first is None:
            first = 0 if totals[0] >= totals[1] else 1
        second = 1 - first
        text = (f"settled with the bonuses: {names[first]} {totals[first]}, "
                f"{names[second]} {totals[second]}")
        diff = totals[first] - totals[second]
        if diff > 0:
            return f"{text}; {names[second]} pays {names[first]} {diff}"
        if diff < 0:
            return f"{text}; {names[first]} pays {names[second]} {-diff}"
        return f"{text}; nobody pays"

    def copy(self) -> Scoreboard:
        other = Scoreboard(self.rules)
        other.columns = self.columns.copy()
        other.column_winners = list(self.column_winners)
        other.wins = list(self.wins)
        other.boxes = self.boxes.copy()
        other.settlement = self.settlement.copy()
        other.dead_hands = self.dead_hands
        other.decided_order = list(self.decided_order)
        return other

    def to_dict(self) -> dict:
        return {
            "columns": self.columns.tolist(),
            "column_winners": list(self.column_winners),
            "wins": list(self.wins),
            "settlement": self.settlement.tolist(),
            "dead_hands": self.dead_hands,
            "match_over": self.match_over,
            "match_winner": self.match_winner,
        }

    def _repr_html_(self) -> str:
        """The sheet as an HTML table (Jupyter shows it when the board is a cell's value):
        one column per contest, ``-`` where a player has not opened it, a decided column's
        winning total in bold on gold, and the hands won."""
        names = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][: self.num_columns]
        cell = "padding:2px 10px;text-align:right;border:1px solid #bbb"
        head = "".join(f'<th style="{cell}">{n}</th>' for n in names)
        rows = []
        for p in (0, 1):
            cells = []
            for j in range(self.num_columns):
                if j >= self.wins[p]:
                    cells.append(f'<td style="{cell}">-</td>')
                elif self.column_winners[j] == p:
                    cells.append(f'<td style="{cell};background:#f9d45c;color:#000;font-weight:bold" '
                                 f'title="column won">{int(self.columns[p, j])}</td>')
                else:
                    cells.append(f'<td style="{cell}">{int(self.columns[p, j])}</td>')
            rows.append(f'<tr><th style="{cell};text-align:left">player_{p}</th>{"".join(cells)}'
                        f'<td style="{cell}">{self.wins[p]}</td><td style="{cell}">{self.columns_won[p]}</td></tr>')
        status = "match running"
        if self.match_over:
            w = self.match_winner
            status = "match over: " + ("a draw" if w is None else f"player_{w} wins")
        if self.dead_hands:
            status += f"; {self.dead_hands} dead hand{'s' if self.dead_hands > 1 else ''}"
        if self.is_settled:
            status += f"; {self.settlement_text()}"
        return (f'<table style="border-collapse:collapse"><caption style="text-align:left">Hollywood sheet '
                f'({self.num_columns} column{"s" if self.num_columns > 1 else ""} to {self.rules.target}); '
                f'{status}</caption><tr><th style="{cell}"></th>{head}<th style="{cell}">hands won</th>'
                f'<th style="{cell}">columns won</th></tr>{"".join(rows)}</table>')

    def __str__(self) -> str:
        names = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][: self.num_columns]
        head = "          " + "".join(f"{n:>6} " for n in names) + "  wins"
        rows = [head]
        for p in (0, 1):
            cells = ""
            for j in range(self.num_columns):
                mark = "*" if self.column_winners[j] == p else " "
                opened = j < self.wins[p]
                cells += f"{int(self.columns[p, j]):>6}{mark}" if opened else "     - "
            rows.append(f"player_{p}  {cells}   {self.wins[p]:>4}")
        if self.is_settled:
            rows.append(self.settlement_text())
        return "\n".join(rows)
