"""THE episode summary: a finished match from one seat's side, for loggers and trainers.

Every path reports the same keys with the same meaning: the single-agent adapter and the
RLlib view summarize a :class:`~hgin_env.match.Match` (:func:`match_summary`), the batched
engine's vector envs summarize their finished games (:func:`episode_summary` from the
engine's counts), and ``train`` logs what either gives. The duel is the two-row case.

Keys: ``won`` (the seat's sheet row won the match; a one-hand duel episode: the hand),
``lost`` (another row won it; a draw or a truncated match is neither), ``truncated``,
``columns_won`` (decided for its row), ``columns_lost`` (decided for any other row),
``column_totals`` (its row), ``opponent_column_totals`` (the other row; three-hand: the
leading other player's total in each column), ``sheet_columns`` (every row), ``hands``,
``dead_hands``, ``hand_kinds`` / ``opponent_hand_kinds`` (hands won by the seat / by its
opponent at the table, by kind), ``points`` / ``opponent_points`` (hand points the seat /
its opponents scored in the hands it played), ``match_hands`` (every hand of the match,
including those a three-hand seat sat out or a partner played), ``seat``, ``row``; in a
partnership also ``team_points`` / ``opponent_team_points`` (the round scores each team
put on the sheet) and ``rounds``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .match import Match


def episode_summary(*, seat: int, row: int, winner: int | None, truncated: bool,
                    columns: np.ndarray | Sequence[Sequence[int]], columns_won: Sequence[int],
                    hands: int, dead_hands: int, hand_kinds: Mapping[str, int],
                    opponent_hand_kinds: Mapping[str, int], points: int, opponent_points: int,
                    match_hands: int) -> dict[str, Any]:
    """The summary from the counts every engine keeps (``winner``: the winning sheet row,
    None for none; ``columns``: the sheet's column totals, one row per sheet row)."""
    table = np.asarray(columns)
    others = [r for r in range(table.shape[0]) if r != row]
    return {
        "won": winner == row and not truncated,
        "lost": winner is not None and winner != row and not truncated,
        "truncated": bool(truncated),
        "columns_won": int(columns_won[row]),
        "columns_lost": int(sum(columns_won[r] for r in others)),
        "column_totals": table[row].tolist(),
        "opponent_column_totals": table[others].max(axis=0).tolist(),
        "sheet_columns": table.tolist(),
        "hands": int(hands),
        "dead_hands": int(dead_hands),
        "hand_kinds": dict(hand_kinds),
        "opponent_hand_kinds": dict(opponent_hand_kinds),
        "points": int(points),
        "opponent_points": int(opponent_points),
        "match_hands": int(match_hands),
        "seat": int(seat),
        "row": int(row),
    }


def _tally(hands: Iterable[Any], me: int) -> tuple[int, int, Counter[str], Counter[str], list[int]]:
    """Hands ``me`` played (each with ``winner``, ``kind``, ``points``): how many, how many
    dead, kinds won by ``me`` / by its opponent, and the hand points each side scored."""
    kinds_me: Counter[str] = Counter()
    kinds_opp: Counter[str] = Counter()
    points = [0, 0]
    played = dead = 0
    for h in hands:
        played += 1
        if h.winner is None:
            dead += 1
        elif h.winner == me:
            kinds_me[h.kind] += 1
            points[0] += h.points
        else:
            kinds_opp[h.kind] += 1
            points[1] += h.points
    return played, dead, kinds_me, kinds_opp, points


def match_summary(match: Match, seat: int) -> dict[str, Any]:
    """:func:`episode_summary` of a finished (or stopped) ``match`` from ``seat``'s side."""
    row = match.sheet_row(seat)
    sheet = match.sheet
    played, dead, kinds_me, kinds_opp, points = _tally((h for h in match.hand_history if seat in h.seats), seat)
    winner = match.match_winner
    if match.single_hand:  # a one-hand episode is won by the hand's winner
        winner = match.hand_history[-1].winner if match.hand_history else None
    out = episode_summary(seat=seat, row=row, winner=winner, truncated=match.truncated,
                          columns=np.asarray(sheet.columns), columns_won=sheet.columns_won,
                          hands=played, dead_hands=dead, hand_kinds=kinds_me, opponent_hand_kinds=kinds_opp,
                          points=points[0], opponent_points=points[1], match_hands=len(match.hand_history))
    if match.format == "partnership":
        team = [0, 0]
        for r in match.round_history:
            if r.winner is not None:
                team[r.winner] += r.points
        out["team_points"] = team[row]
        out["opponent_team_points"] = team[1 - row]
        out["rounds"] = len(match.round_history)
    return out
