"""Hollywood score sheets (RULES.md §10, §13): the one :class:`Sheet` of every format.

A :class:`Sheet` has one row per *entry*, a player (the duel, three-hand) or a team
(partnership), and ``Rules.columns`` columns. It follows the Hollywood rules of RULES.md
§10 for any number of rows: an entry's n-th win scores in its first min(n, columns)
columns; a column is decided when any entry's total in it reaches the target, and then
every total in it freezes. With one column it is the one game to the target of source 004.
The duel's :class:`~hgin_env.scoring.Scoreboard` is this sheet with two rows, its own
names (``dead_hands``, ``record_dead``) and its own draw rule (below).

Settlement (box and game bonuses) is settled column by column as each closes: the
column's winner gets the game bonus (``shutout_game_bonus`` instead when every other
entry scored 0 in that column, a shutout), and every entry gets the box bonus per win
that scored in the column. Settlement never decides the match.

The match winner is the entry with the most columns won; a tie goes to the larger sum of
the column totals over all columns (frozen and running), and is a draw (``None``) if that
ties too (the duel's Scoreboard leaves an even split of columns a draw: RULES.md §13).
With ``short_session`` the match ends when the first column is decided and the larger
sum of running totals wins; a tie there goes to the decided column's winner if it is
among the tied entries, else it is a draw.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Self

import numpy as np

from .rules import Rules, get_rules

COLUMN_NAMES = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")


@dataclass
class Sheet:
    """Hollywood columns (or one game) for ``size`` entries: players or teams."""

    rules: Rules | str | dict | None = None
    size: int = 3
    #: Row labels for ``str()`` and ``to_dict`` ("player_0", "team_0", ...).
    labels: tuple[str, ...] | None = None
    #: Running totals: an int64 numpy array of shape (size, columns), row = entry, so that
    #: ``columns[i, j]``, ``columns[:, j]`` and ``columns.sum(axis=1)`` work; ``to_dict()``
    #: gives the same numbers as nested lists.
    columns: np.ndarray = field(init=False)
    #: Per column: the row that won it, or None while it is open.
    column_winners: list[int | None] = field(init=False)
    #: Hands (or rounds) won by each row.
    wins: list[int] = field(init=False)
    #: Wins each row scored in each column (int64 array, size x columns).
    boxes: np.ndarray = field(init=False)
    #: Box and game bonuses settled as columns close (int64 array, size x columns).
    settlement: np.ndarray = field(init=False)
    #: Hands (duel, three-hand) or rounds (partnership) that scored nothing.
    void: int = field(init=False, default=0)
    #: Order in which columns were decided.
    decided_order: list[int] = field(init=False)

    #: What a row is called in error messages.
    row_noun: ClassVar[str] = "row"
    #: What ``void`` counts, in the HTML status line (singular; "s" is added).
    void_noun: ClassVar[str] = "void result"
    #: Whether an even split of columns won goes to the larger sum of totals (else a draw).
    totals_break_column_ties: ClassVar[bool] = True
    #: ``to_dict``'s keys, in order: attribute names (arrays become nested lists).
    dict_keys: ClassVar[tuple[str, ...]] = (
        "labels", "columns", "column_winners", "wins", "boxes", "settlement", "void",
        "match_over", "match_winner")

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
        """Record a won hand (or round) for ``row``; returns the columns it decided.

        The Hollywood column rule (RULES.md §10): the row's n-th win adds ``points`` to its
        first min(n, columns) columns that are still open; a column whose total reaches the
        target is decided for that row, frozen, and settled."""
        if not isinstance(row, int | np.integer) or not 0 <= row < self.size:
            raise ValueError(f"{self.row_noun} must be an int in 0..{self.size - 1}, got {row!r}")
        if not isinstance(points, int | np.integer) or isinstance(points, bool) or points < 0:
            raise ValueError(f"points must be an int >= 0, got {points!r}")
        if self.match_over:
            raise ValueError("the match is over; no more results can be recorded")
        row = int(row)
        self.wins[row] += 1
        decided = []
        target = self.rules.target
        for j in range(min(self.wins[row], self.num_columns)):
            if self.column_winners[j] is not None:
                continue
            self.columns[row, j] += points
            self.boxes[row, j] += 1
            if self.columns[row, j] >= target:
                self.column_winners[j] = row
                self.decided_order.append(j)
                decided.append(j)
                self._settle_column(j, row)
        return decided

    def record_void(self) -> None:
        """A dead hand (duel, three-hand) or a round with a net of 0 (partnership)."""
        if self.match_over:
            raise ValueError("the match is over; no more results can be recorded")
        self.void += 1

    def _settle_column(self, j: int, winner: int) -> None:
        r = self.rules
        bonus = r.game_bonus
        if r.shutout_game_bonus is not None and not any(
                self.columns[i, j] for i in range(self.size) if i != winner):
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
        if self.rules.short_session:
            totals = self.totals
            best = max(totals)
            top = [i for i in range(self.size) if totals[i] == best]
            if len(top) == 1:
                return top[0]
            first = self.column_winners[self.decided_order[0]]
            return first if first in top else None
        won = self.columns_won
        most = max(won)
        top = [i for i in range(self.size) if won[i] == most]
        if len(top) > 1 and self.totals_break_column_ties:
            totals = self.totals
            best = max(totals[i] for i in top)
            top = [i for i in top if totals[i] == best]
        return top[0] if len(top) == 1 else None

    def final_scores(self) -> np.ndarray:
        """Column totals plus settled bonuses, per row and column."""
        return self.columns + self.settlement

    def settled_totals(self) -> np.ndarray:
        """Per row: every column's total plus the settled game, shutout and box bonuses
        (int64 [size]); equals the running totals until a column of a settling profile closes."""
        return self.final_scores().sum(axis=1)

    @property
    def is_settled(self) -> bool:
        """A column has closed under rules with game, shutout or box bonuses."""
        return bool(self.rules.settles_columns and self.decided_order)

    def settlement_text(self, names: Sequence[str] | None = None) -> str:
        """The settlement in words, '' until ``is_settled``: each row's settled total
        (bonuses included), the match winner (else the largest total) first, and the
        difference each other row pays it (004: "el perdedor paga la diferencia entre los
        puntajes al ganador", the loser pays the winner the difference between the scores).
        ``names`` replaces the labels."""
        if not self.is_settled:
            return ""
        names = list(names if names is not None else self.labels or ())
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

    def copy(self) -> Self:
        other = copy.copy(self)
        other.columns = self.columns.copy()
        other.column_winners = list(self.column_winners)
        other.wins = list(self.wins)
        other.boxes = self.boxes.copy()
        other.settlement = self.settlement.copy()
        other.decided_order = list(self.decided_order)
        return other

    def to_dict(self) -> dict:
        out = {}
        for key in self.dict_keys:
            value = getattr(self, key)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, list | tuple):
                value = list(value)
            out[key] = value
        return out

    def _repr_html_(self) -> str:
        """The sheet as an HTML table (Jupyter shows it when the sheet is a cell's value):
        one column per contest, ``-`` where a row has not opened it, a decided column's
        winning total in bold on gold, and the hands won."""
        labels = self.labels or ()
        names = COLUMN_NAMES[: self.num_columns]
        cell = "padding:2px 10px;text-align:right;border:1px solid #bbb"
        head = "".join(f'<th style="{cell}">{n}</th>' for n in names)
        rows = []
        won = self.columns_won
        for i, label in enumerate(labels):
            cells = []
            for j in range(self.num_columns):
                if j >= self.wins[i]:
                    cells.append(f'<td style="{cell}">-</td>')
                elif self.column_winners[j] == i:
                    cells.append(f'<td style="{cell};background:#f9d45c;color:#000;font-weight:bold" '
                                 f'title="column won">{int(self.columns[i, j])}</td>')
                else:
                    cells.append(f'<td style="{cell}">{int(self.columns[i, j])}</td>')
            rows.append(f'<tr><th style="{cell};text-align:left">{label}</th>{"".join(cells)}'
                        f'<td style="{cell}">{self.wins[i]}</td><td style="{cell}">{won[i]}</td></tr>')
        status = "match running"
        if self.match_over:
            w = self.match_winner
            status = "match over: " + ("a draw" if w is None else f"{labels[w]} wins")
        if self.void:
            status += f"; {self.void} {self.void_noun}{'s' if self.void > 1 else ''}"
        if self.is_settled:
            status += f"; {self.settlement_text()}"
        return (f'<table style="border-collapse:collapse"><caption style="text-align:left">Hollywood sheet '
                f'({self.num_columns} column{"s" if self.num_columns > 1 else ""} to {self.rules.target}); '
                f'{status}</caption><tr><th style="{cell}"></th>{head}<th style="{cell}">hands won</th>'
                f'<th style="{cell}">columns won</th></tr>{"".join(rows)}</table>')

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
