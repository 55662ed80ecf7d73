"""The checks and the report both soaks share: the scalar soak (:mod:`eval.soak`, through
the match loop) and the batched one (:mod:`eval.soak_batched`, through ``BatchGame``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hgin_env.sheets import Sheet

HARD_CAP_HANDS = 50_000  # a match still running after this many hands counts as a violation


@dataclass
class SoakReport:
    """What a soak played and every violation it found (the scalar and the batched soak)."""

    hands: int = 0
    matches: int = 0
    actions: int = 0
    showdowns: int = 0
    violations: list[str] = field(default_factory=list)

    def merge(self, other: SoakReport) -> None:
        self.hands += other.hands
        self.matches += other.matches
        self.actions += other.actions
        self.showdowns += other.showdowns
        self.violations += other.violations


def check_sheet(board: Sheet, target: int,
                 frozen: dict[int, tuple[int, ...]]) -> str | None:
    """Decided columns never change; a column is decided exactly when a total reaches
    the target (any number of rows: players or teams)."""
    for j, before in frozen.items():
        if tuple(int(v) for v in board.columns[:, j]) != before:
            return f"decided column {j} changed"
    for j, w in enumerate(board.column_winners):
        top = board.columns[:, j]
        if w is None and (top >= target).any():
            return f"column {j} reached the target but is undecided"
        if w is not None and top[w] < target:
            return f"column {j} decided below the target"
    return None


def freeze_decided(board: Sheet, frozen: dict[int, tuple[int, ...]]) -> None:
    """Record the totals of newly decided columns (``check_sheet`` then holds them fixed)."""
    for j, w in enumerate(board.column_winners):
        if w is not None and j not in frozen:
            frozen[j] = tuple(int(v) for v in board.columns[:, j])
