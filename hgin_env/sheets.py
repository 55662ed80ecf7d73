"""Score sheets for matches of more than two players or of teams (RULES.md §13).

A :class:`Sheet` has one row per *entry*, a player (three-hand) or a team (partnership),
and ``Rules.columns`` columns. It follows the Hollywood rules of RULES.md §10 for any
number of rows: an entry's n-th win scores in its first min(n, columns) columns; a column
is decided when any entry's total in it reaches the target, and then every total in it
freezes. With one column it is the one game to the target of source 004.

Settlement (box and game bonuses) is settled column by column as each closes, as in the
two-player :class:`~hgin_env.scoring.Scoreboard` (which the duel keeps using): the
column's winner gets the game bonus (``shutout_game_bonus`` instead when every other
entry scored 0 in that column, a shutout), and every entry gets the box bonus per win
that scored in the column. Settlement never decides the match.

The match winner is the entry with the most columns won; a tie goes to the larger sum of
the column totals over all columns (frozen and running), and is a draw (``None``) if that
ties too. With ``short_session`` the match ends when the first column is decided and the
larger sum of running totals wins; a tie there goes to the decided column's winner if it
is among the tied entries, else it is a draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .rules import Rules, get_rules
from .scoring import score_win

COLUMN_NAMES = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")


@dataclass
class Sheet:
    """Hollywood columns (or one game) for ``size`` entries: players or teams."""

    rules: Rules | str | dict | None = None
    size: int = 3
    #: Row labels for ``str()`` and ``to_dict`` ("player_0", "team_0", ...).
    labels: tuple[str, ...] | None = None
    columns: np.ndarray = field(init=False)
    column_winners: list[int | None] = field(init=False)
    wins: list[int] = field(init=False)
    boxes: np.ndarray = field(init=False)
    settlement: np.ndarray = field(init=False)
    #: Hands (three-hand) or rounds (partnership) that scored nothing.
    void: int = field(init=False, default=0)
    #: Order in which columns were decided.
    decided_order: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.rules = get_rules(self.rules)
        if not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 2:
            raise ValueError(f"a sheet needs an int size >= 2 (players or teams), got {self.size!r}")
        if self.labels is None:
            self.labels = tuple(f"row_{i}" for i in range(self.size))
        elif len(self.labels) != self.size:
            raise ValueError(f"labels must name {self.size} rows, got {len(self.labels)}")
        self.labels = tuple(self.labels)
        n = self.rules.columns
        self.columns = np.zeros((self.size, n), dtype=np.int64)
        self.column_winners = [None] * n
        self.wins = [0] * self.size
        self.boxes = np.zeros((self.size, n), dtype=np.int64)
        self.settlement = np.zeros((self.size, n), dtype=np.int64)
        self.decided_order = []

    @property
    def num_columns(self) -> int:
        return self.rules.columns

    def open_columns(self, row: int) -> list[bool]:
        """Columns the row's wins have opened (decided ones included)."""
        return [j < self.wins[row] for j in range(self.num_columns)]

    def record(self, row: int, points: int) -> list[int]:
        """Record a won hand (or round) for ``row``; returns the columns it decided."""
        if not isinstance(row, int | np.integer) or not 0 <= row < self.size:
            raise ValueError(f"row must be an int in 0..{self.size - 1}, got {row!r}")
        if not isinstance(points, int | np.integer) or isinstance(points, bool) or points < 0:
            raise ValueError(f"points must be an int >= 0, got {points!r}")
        if self.match_over:
            raise ValueError("the match is over; no more results can be recorded")
        return score_win(self, int(row), points)

    def record_void(self) -> None:
        """A dead hand (three-hand) or a round with a net of 0 (partnership)."""
        if self.match_over:
            raise ValueError("the match is over; no more results can be recorded")
        self.void += 1

    def _settle_column(self, j: int, winner: int) -> None:
        r = self.rules
        others = [i for i in range(self.size) if i != winner]
        bonus = r.game_bonus
        if r.shutout_game_bonus is not None and not self.columns[others, j].any():
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
        return [sum(1 for w in self.column_winners if w == i) for i in range(self.size)]

    @property
    def totals(self) -> list[int]:
        """Sum of each row's column totals (frozen and running), bonuses excluded."""
        return [int(t) for t in self.columns.sum(axis=1)]

    @property
    def match_winner(self) -> int | None:
        """The winning row (None while running, and for a draw)."""
        if not self.match_over:
            return None
        totals = self.totals
        if self.rules.short_session:
            best = max(totals)
            top = [i for i in range(self.size) if totals[i] == best]
            if len(top) == 1:
                return top[0]
            first = self.column_winners[self.decided_order[0]]
            return first if first in top else None
        won = self.columns_won
        most = max(won)
        top = [i for i in range(self.size) if won[i] == most]
        if len(top) > 1:
            best = max(totals[i] for i in top)
            top = [i for i in top if totals[i] == best]
        return top[0] if len(top) == 1 else None

    def final_scores(self) -> np.ndarray:
        """Column totals plus settled bonuses, per row and column."""
        return self.columns + self.settlement

    def settled_totals(self) -> np.ndarray:
        """Per row: every column's total plus the settled game, shutout and box bonuses."""
        return self.final_scores().sum(axis=1)

    @property
    def is_settled(self) -> bool:
        """A column has closed under rules with game, shutout or box bonuses."""
        return bool(self.rules.settles_columns and self.decided_order)

    def settlement_text(self, labels: Sequence[str] | None = None) -> str:
        """The settlement in words, '' until ``is_settled``: each row's settled total
        (bonuses included), the match winner (else the largest total) first, and the
        difference each other row pays it (004)."""
        if not self.is_settled:
            return ""
        names = list(labels if labels is not None else self.labels or ())
        totals = [int(t) for t in self.settled_totals()]
        first = self.match_winner
        if first is None:
            first = max(range(self.size), key=lambda i: (totals[i], -i))
        order = [first] + [i for i in range(self.size) if i != first]
        text = "settled with the bonuses: " + ", ".join(f"{names[i]} {totals[i]}" for i in order)
        pays = []
        for i in order[1:]:
            diff = totals[first] - totals[i]
            if diff > 0:
                pays.append(f"{names[i]} pays {names[first]} {diff}")
            elif diff < 0:
                pays.append(f"{names[first]} pays {names[i]} {-diff}")
        return f"{text}; " + (", ".join(pays) if pays else "nobody pays")

    def copy(self) -> Sheet:
        other = Sheet(self.rules, self.size, self.labels)
        other.columns = self.columns.copy()
        other.column_winners = list(self.column_winners)
        other.wins = list(self.wins)
        other.boxes = self.boxes.copy()
        other.settlement = self.settlement.copy()
        other.void = self.void
        other.decided_order = list(self.decided_order)
        return other

    def to_dict(self) -> dict:
        return {
            "labels": list(self.labels or ()),
            "columns": self.columns.tolist(),
            "column_winners": list(self.column_winners),
            "wins": list(self.wins),
            "boxes": self.boxes.tolist(),
            "settlement": self.settlement.tolist(),
            "void": self.void,
            "match_over": self.match_over,
            "match_winner": self.match_winner,
        }

    def __str__(self) -> str:
        names = COLUMN_NAMES[: self.num_columns]
        width = max(len(label) for label in self.labels or ("",)) + 2
        rows = [" " * width + "".join(f"{n:>6} " for n in names) + "  wins"]
        for i, label in enumerate(self.labels or ()):
            cells = ""
            for j in range(self.num_columns):
                mark = "*" if self.column_winners[j] == i else " "
                cells += f"{int(self.columns[i, j]):>6}{mark}" if j < self.wins[i] else "     - "
            rows.append(f"{label:<{width}}{cells}   {self.wins[i]:>4}")
        if self.is_settled:
            rows.append(self.settlement_text())
        return "\n".join(rows)
