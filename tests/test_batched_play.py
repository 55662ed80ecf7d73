"""Batched duplicate matches give the tournament's rows."""

from __future__ import annotations

from agents.batched import BatchedPolicy, RowByRow
from agents.expert import ExpertAgent
from agents.ppo import SHIPPED_POLICY, PPOAgent
from arena.batched_play import play_matches_batched
from arena.matches import play_match
from arena.stats import summarize_pair


def test_rows_equal_play_match_for_deterministic_agents():
    ppo = PPOAgent.load(SHIPPED_POLICY)
    seeds = [3]
    rows = play_matches_batched(BatchedPolicy(ppo.model), RowByRow(ExpertAgent(seed=0)), seeds, "hollywood",
                                "ppo", "expert")
    expected = [play_match(ppo, ExpertAgent(seed=0), s, seat, "hollywood", "ppo", "expert")
                for s in seeds for seat in (0, 1)]
    for got, want in zip(rows, expected, strict=True):
        assert {k: v for k, v in got.items() if k != "seconds"} == {k: v for k, v in want.items() if k != "seconds"}
    summary = summarize_pair(rows, "ppo", "expert")
    assert summary["matches"] == 2
