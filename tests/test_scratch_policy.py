"""The from-scratch policy, the shipped default (``ppo:``): loadable by either spec, it plays,
and its metadata says how it was made, with no imitation at any stage."""

from __future__ import annotations

from pathlib import Path

from agents.base import make_agent
from agents.ppo import SHIPPED_POLICY, read_meta
from arena.evaluate import evaluate_against

SCRATCH = Path(__file__).resolve().parent.parent / "agents" / "policies" / "hgin_ppo_scratch.zip"


def test_scratch_policy_metadata_records_no_imitation():
    meta = read_meta(SCRATCH)
    assert meta["imitation"] is False
    assert meta["args"]["imitation_matches"] == 0
    stages = meta["lineage"]
    assert stages and all(stage["imitation_matches"] == 0 for stage in stages)
    assert stages[0]["init_from"] == ""  # the first stage started from random weights
    assert len(meta["averaged_from"]) >= 2  # the weights are a mean of checkpoints (train.average)


def test_scratch_policy_loads_by_spec_and_plays():
    assert SHIPPED_POLICY.resolve() == SCRATCH  # "ppo:" is this policy
    assert make_agent("ppo:").meta == read_meta(SCRATCH)
    agent = make_agent(f"ppo:{SCRATCH}", seed=0)
    summary = evaluate_against(agent, "random", matches=2, seed=5, rules="hollywood")
    assert summary["matches"] == 2 and summary["a_win_rate"] == 1.0
