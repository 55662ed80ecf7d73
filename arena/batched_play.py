"""Duplicate matches played all at once on the batched engine, with the tournament's rows.

:func:`eval.tournament.play_match` plays one match at a time; an evaluation of a PPO policy
then pays one torch call per decision. Here every match of an evaluation (each seed twice,
seats swapped) is one game of a :class:`hgin_env.batch.BatchGame` seeded with that seed, so
it deals the very same cards as ``play_match``; each side acts through the batched agent
interface (:mod:`agents.batched`: a policy answers all its games in one torch call). The
rows have ``play_match``'s keys, so :func:`eval.tournament.summarize_pair` reads them.

With deterministic agents the rows equal ``play_match``'s (a test checks this). Agents
that draw random numbers use one generator for the whole batch instead of one re-seeded
per match, so their games differ from ``play_match``'s while staying seeded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from hgin_env.batch import HAND_KINDS, BatchGame
from hgin_env.rules import Rules, get_rules

_STATS = ("hands_won", "knock_wins", "gin_wins", "undercut_wins", "knocks", "points")


def play_matches_batched(agent_a: Any, agent_b: Any, seeds: Sequence[int], rules: Rules | str | dict | None,
                         label_a: str = "a", label_b: str = "b") -> list[dict[str, Any]]:
    """Play each seed twice (A in seat 0, then in seat 1) with batched agents
    (``act(obs, masks) -> actions``); one row per match, as ``play_match`` writes it."""
    rules = get_rules(rules)
    games = [(int(s), seat) for s in seeds for seat in (0, 1)]
    n = len(games)
    if n == 0:
        return []
    batch = BatchGame(n, rules=rules, seeds=[s for s, _ in games])
    a_seat = np.array([seat for _, seat in games])
    done = np.zeros(n, dtype=bool)
    stats = {side: {k: np.zeros(n, dtype=np.int64) for k in _STATS} for side in "ab"}
    dead = np.zeros(n, dtype=np.int64)
    rows: list[dict[str, Any] | None] = [None] * n
    start = time.perf_counter()
    while not done.all():
        obs, masks = batch.observations(), batch.legal_action_masks()
        actions = np.full(n, -1, dtype=np.int64)
        a_turn = ~done & (batch.current_player == a_seat)
        b_turn = ~done & ~a_turn
        for turn, agent in ((a_turn, agent_a), (b_turn, agent_b)):
            idx = np.flatnonzero(turn)
            if idx.size:
                actions[idx] = agent.act(obs[idx], masks[idx])
        result = batch.step(actions)
        for i in np.flatnonzero(result.hand_over & ~done):
            kind = HAND_KINDS[result.hand_kind[i]]
            if kind == "dead":
                dead[i] += 1
            else:
                knocker = "a" if result.knocker[i] == a_seat[i] else "b"
                winner = "a" if result.hand_winner[i] == a_seat[i] else "b"
                stats[knocker]["knocks"][i] += 1
                stats[winner]["hands_won"][i] += 1
                stats[winner]["points"][i] += int(result.hand_points[i])
                key = "gin_wins" if kind in ("gin", "big_gin") else "undercut_wins" if kind == "undercut" \
                    else "knock_wins"
                stats[winner][key][i] += 1
        for i, fin in result.finished.items():
            if done[i]:
                continue
            done[i] = True
            rows[i] = _row(games[i], fin, stats, int(dead[i]), i, label_a, label_b, rules.columns)
    seconds = round((time.perf_counter() - start) / n, 4)
    out = []
    for row in rows:
        assert row is not None
        row["seconds"] = seconds
        out.append(row)
    return out


def _row(game: tuple[int, int], fin: dict, stats: dict, dead: int, i: int, label_a: str, label_b: str,
         columns: int) -> dict[str, Any]:
    seed, a_seat = game
    seat_of = {"a": a_seat, "b": 1 - a_seat}
    board = fin["scoreboard"]
    row: dict[str, Any] = {
        "seed": seed, "agent_a": label_a, "agent_b": label_b, "a_seat": a_seat,
        "player_0": label_a if a_seat == 0 else label_b,
        "player_1": label_b if a_seat == 0 else label_a,
    }
    for j in range(columns):
        row[f"a_col{j + 1}"] = int(board["columns"][seat_of["a"]][j])
        row[f"b_col{j + 1}"] = int(board["columns"][seat_of["b"]][j])
        w = board["column_winners"][j]
        row[f"col{j + 1}_winner"] = "" if w is None else (label_a if w == seat_of["a"] else label_b)
    row["a_columns_won"] = fin["columns_won"][seat_of["a"]]
    row["b_columns_won"] = fin["columns_won"][seat_of["b"]]
    mw = fin["match_winner"]
    side = None if mw is None else ("a" if mw == seat_of["a"] else "b")
    row["winner"] = "draw" if side is None else (label_a if side == "a" else label_b)
    row["winner_side"] = "" if side is None else side
    row["hands"] = fin["hands"]
    row["dead_hands"] = dead
    row["truncated"] = bool(fin["truncated"])
    for s in "ab":
        for key in _STATS:
            row[f"{s}_{key}"] = int(stats[s][key][i])
    return row
