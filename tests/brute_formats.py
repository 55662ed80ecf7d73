"""Slow, obviously-correct models of the three-hand and partnership formats.

Written from RULES.md §10 and §13 only, independently of ``hgin_env.sheets`` and
``hgin_env.match``: the sheet is recomputed from the whole list of results every time it
is asked for, and the seating is written out case by case.
"""

from __future__ import annotations

from dataclasses import dataclass


# --------------------------------------------------------------------------- sheets
@dataclass
class RefSheetState:
    totals: list[list[int]]  # [row][column]
    winners: list[int | None]  # per column
    wins: list[int]
    hands_in_column: list[list[int]]  # wins that scored in the column, per row
    settlement: list[list[int]]
    decided_order: list[int]
    over: bool
    winner: int | None


def ref_sheet(results: list[tuple[int, int] | None], rows: int, columns: int, target: int,
              box: int = 0, game: int = 0, shutout: int | None = None,
              short: bool = False) -> RefSheetState:
    """The sheet after ``results``: each is (row, points) for a win, or None (a dead hand
    or a round that scored nothing)."""
    totals = [[0] * columns for _ in range(rows)]
    winners: list[int | None] = [None] * columns
    wins = [0] * rows
    boxes = [[0] * columns for _ in range(rows)]
    settlement = [[0] * columns for _ in range(rows)]
    order: list[int] = []

    def over() -> bool:
        if short:
            return len(order) > 0
        return None not in winners

    for result in results:
        assert not over(), "a result after the end of the match"
        if result is None:
            continue
        row, points = result
        wins[row] += 1
        # n-th win: columns 1..n (capped at the number of columns), each if still open.
        for col in range(columns):
            if col + 1 > wins[row]:
                continue
            if winners[col] is not None:
                continue
            totals[row][col] += points
            boxes[row][col] += 1
            if totals[row][col] >= target:
                winners[col] = row
                order.append(col)
                everyone_else_zero = all(totals[r][col] == 0 for r in range(rows) if r != row)
                bonus = shutout if (shutout is not None and everyone_else_zero) else game
                settlement[row][col] += bonus
                for r in range(rows):
                    settlement[r][col] += box * boxes[r][col]
    done = over()
    winner = None
    if done:
        sums = [sum(totals[r]) for r in range(rows)]
        if short:
            best = max(sums)
            leaders = [r for r in range(rows) if sums[r] == best]
            first = winners[order[0]]
            if len(leaders) == 1:
                winner = leaders[0]
            elif first in leaders:
                winner = first
        else:
            counts = [winners.count(r) for r in range(rows)]
            leaders = [r for r in range(rows) if counts[r] == max(counts)]
            if len(leaders) > 1:
                best = max(sums[r] for r in leaders)
                leaders = [r for r in leaders if sums[r] == best]
            if len(leaders) == 1:
                winner = leaders[0]
    return RefSheetState(totals, winners, wins, boxes, settlement, order, done, winner)


# --------------------------------------------------------------------------- three-hand
def three_hand_seating(dealer: int) -> tuple[int, int, int]:
    """(sitter, non-dealer, the seat playing the dealer's part) for a dealer."""
    if dealer == 0:
        return 0, 1, 2
    if dealer == 1:
        return 1, 2, 0
    return 2, 0, 1


def three_hand_next_dealer(dealer: int, players: tuple[int, int], winner: int | None) -> int:
    """004: the loser deals the next hand; a dead hand is redealt by the same dealer."""
    if winner is None:
        return dealer
    return players[0] if winner == players[1] else players[1]


def three_hand_rewards(players: tuple[int, int], winner: int | None, points: int) -> list[float]:
    out = [0.0, 0.0, 0.0]
    if winner is not None:
        loser = players[0] if winner == players[1] else players[1]
        out[winner] = points
        out[loser] = -points
    return out


# --------------------------------------------------------------------------- partnership
def partnership_opponents(round_number: int) -> dict[int, int]:
    """Each seat's opponent: even rounds 0 v 1 and 2 v 3, odd rounds 0 v 3 and 2 v 1."""
    if round_number % 2 == 0:
        return {0: 1, 1: 0, 2: 3, 3: 2}
    return {0: 3, 3: 0, 2: 1, 1: 2}


def partnership_dealing_team(first_team: int, round_number: int) -> int:
    return first_team if round_number % 2 == 0 else 1 - first_team


def team_of(seat: int) -> int:
    return 0 if seat in (0, 2) else 1


def partnership_round(hands: list[tuple[int | None, int]]) -> tuple[int | None, int]:
    """004's round score from the two hands, each (winning seat or None, points):
    (scoring team, points), or (None, 0) for nobody's win."""
    (w1, p1), (w2, p2) = hands
    scored = [(team_of(w), p) for w, p in ((w1, p1), (w2, p2)) if w is not None]
    if not scored:
        return None, 0
    if len(scored) == 1:  # the other table's hand was dead: it counts 0
        team, points = scored[0]
        return (team, points) if points > 0 else (None, 0)
    (t1, q1), (t2, q2) = scored
    if t1 == t2:  # one team won both hands: the sum
        return (t1, q1 + q2) if q1 + q2 > 0 else (None, 0)
    # one hand each: the difference, to the team with the larger hand score
    if q1 > q2:
        return t1, q1 - q2
    if q2 > q1:
        return t2, q2 - q1
    return None, 0
