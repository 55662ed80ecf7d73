"""Duplicate matches played all at once on the batched engine, with the tournament's rows.

:func:`eval.tournament.play_match` plays one match at a time; an evaluation of a PPO policy
then pays one torch call per decision. Here every match of an evaluation (each seed in
every seating of its format: the duel's two, a partnership's two, three-hand's six) is one
match of a :class:`hgin_env.batch.BatchGame` seeded with that seed, so it deals the very
same cards as ``play_match``; each side acts through the batched agent
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

from .matches import STAT_KEYS, match_row, seatings


def play_matches_batched(agent_a: Any, agent_b: Any, seeds: Sequence[int], rules: Rules | str | dict | None,
                         label_a: str = "a", label_b: str = "b") -> list[dict[str, Any]]:
    """Play each seed in every seating of its format (:func:`arena.matches.seatings`: the
    duel A in seat 0, then in seat 1; a partnership A's team at seats (0, 2), then (1, 3);
    three-hand A alone at each seat, then B alone at each) with batched agents
    (``act(obs, masks) -> actions``, reading the format's layout); one row per match, as
    ``play_match`` writes it."""
    rules = get_rules(rules)
    arrangements = seatings(rules.format)
    games = [(int(s), k) for s in seeds for k in range(len(arrangements))]
    n = len(games)
    if n == 0:
        return []
    batch = BatchGame(n, rules=rules, seeds=[s for s, _ in games])
    a_side = np.zeros((n, rules.num_players), dtype=bool)  # a_side[i, seat]: agent A plays it
    for i, (_, k) in enumerate(games):
        a_side[i, list(arrangements[k])] = True
    rows_of = np.arange(n)
    done = np.zeros(n, dtype=bool)
    stats = {side: {k: np.zeros(n, dtype=np.int64) for k in STAT_KEYS} for side in "ab"}
    dead = np.zeros(n, dtype=np.int64)
    rows: list[dict[str, Any] | None] = [None] * n
    start = time.perf_counter()
    while not done.all():
        obs, masks = batch.observations(), batch.legal_action_masks()
        actions = np.full(n, -1, dtype=np.int64)
        a_turn = ~done & a_side[rows_of, batch.current_seat]
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
                knocker = "a" if a_side[i, result.knocker[i]] else "b"
                winner = "a" if a_side[i, result.hand_winner[i]] else "b"
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
            rows[i] = _row(games[i], arrangements[games[i][1]], fin, stats, int(dead[i]), i, label_a, label_b,
                           rules)
    seconds = round((time.perf_counter() - start) / n, 4)
    out = []
    for row in rows:
        assert row is not None
        row["seconds"] = seconds
        out.append(row)
    return out


def _row(game: tuple[int, int], a_seats: tuple[int, ...], fin: dict, stats: dict, dead: int, i: int,
         label_a: str, label_b: str, rules: Rules) -> dict[str, Any]:
    """:func:`arena.matches.match_row` of match ``i`` from its final summary and the counts."""
    seed, seating = game
    sheet_row = (lambda seat: seat % 2) if rules.format == "partnership" else (lambda seat: seat)
    return match_row(seed, seating, a_seats, rules, label_a, label_b, sheet_row=sheet_row, columns=fin["columns"],
                     column_winners=fin["scoreboard"]["column_winners"], columns_won=fin["columns_won"],
                     match_winner=fin["match_winner"], hands=fin["hands"], dead_hands=dead,
                     truncated=bool(fin["truncated"]),
                     stats={s: {key: int(stats[s][key][i]) for key in STAT_KEYS} for s in "ab"})
