"""League opponents that are policies in one forward (agents/policy_stack.py): the stacked
forward equals each policy's own, the moves are the per-opponent path's, and the batched
engine asks all the policies of a pass together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import simple_states

from agents.batched import BatchedPolicy, BatchedSimple, policy_probabilities
from agents.policy_stack import PolicyStacks
from agents.ppo import PPOAgent
from hgin_env.batch.vector import LearnerBatch, act_together
from train.envs import LivePolicy

POLICIES = Path(__file__).resolve().parent.parent / "agents" / "policies"
SCRATCH = str(POLICIES / "hgin_ppo_scratch.zip")
IMITATION = str(POLICIES / "hgin_ppo.zip")


def _snapshots(k: int, path: str = SCRATCH) -> list:
    """``k`` policies of one architecture with different weights (as a league's snapshots)."""
    models = []
    gen = torch.Generator().manual_seed(0)
    for i in range(k):
        model = PPOAgent.load(path, seed=i).model
        with torch.no_grad():
            for p in model.policy.parameters():
                p.add_(0.05 * i * torch.randn(p.shape, generator=gen))
        models.append(model)
    return models


def test_stacked_forward_equals_each_policys_own():
    obs, masks = simple_states(32, 40)
    models = _snapshots(4)
    other = PPOAgent.load(IMITATION).model  # another architecture (wider): a forward of its own
    sizes = [7, 1, 40, 13, 9]
    starts = np.cumsum([0, *sizes])
    jobs = [(m.policy, obs[a:b], masks[a:b])
            for m, a, b in zip([*models, other], starts[:-1], starts[1:], strict=True)]
    stacks = PolicyStacks()
    stacked = stacks.probabilities(jobs)
    assert len(stacks._stacks) == 1  # the four snapshots in one stack; the other alone
    for (policy, o, m), p in zip(jobs, stacked, strict=True):
        alone = policy_probabilities(policy, o, m)
        assert p.shape == alone.shape and p.dtype == np.float32
        np.testing.assert_allclose(p, alone, atol=1e-5)  # a batched product rounds apart
        assert (p[~m.astype(bool)] == 0).all()
    np.testing.assert_array_equal(stacked[-1], policy_probabilities(other.policy, *jobs[-1][1:]))  # alone: same bits


def test_a_new_snapshot_joins_the_stack_and_the_old_ones_stay():
    obs, masks = simple_states(n=8, steps=10)
    models = _snapshots(3)
    stacks = PolicyStacks()
    stacks.probabilities([(m.policy, obs[:5], masks[:5]) for m in models[:2]])
    first = next(iter(stacks._stacks.values()))
    stacks.probabilities([(m.policy, obs[:5], masks[:5]) for m in models[1:]])
    second = next(iter(stacks._stacks.values()))
    assert second is not first and [id(p) for p in second.policies] == [id(m.policy) for m in (models[1], models[2],
                                                                                                  models[0])]
    stacks.probabilities([(models[0].policy, obs[:3], masks[:3]), (models[2].policy, obs[3:9], masks[3:9])])
    assert next(iter(stacks._stacks.values())) is second  # a subset: the same stack, indexed


@pytest.mark.parametrize("deterministic", [False, True])
def test_act_together_plays_the_moves_of_each_policy_alone(deterministic):
    obs, masks = simple_states(32, 40)
    models = _snapshots(3)
    together = [BatchedPolicy(m, deterministic=deterministic, seed=10 + i) for i, m in enumerate(models)]
    alone = [BatchedPolicy(m, deterministic=deterministic, seed=10 + i) for i, m in enumerate(models)]
    cuts = [(0, 50), (50, 51), (51, 200)]
    jobs = [(agent, obs[a:b], masks[a:b]) for agent, (a, b) in zip(together, cuts, strict=True)]
    for _ in range(3):  # each agent's generator goes on as it would alone
        moves = act_together(jobs)
        for agent, (a, b), got in zip(alone, cuts, moves, strict=True):
            np.testing.assert_array_equal(got, agent.act(obs[a:b], masks[a:b]))


def test_the_league_plays_as_with_one_forward_per_opponent(monkeypatch):
    """Matches against three snapshots, Simple and the live learner: the moves and outcomes
    of a whole stretch of play equal the per-opponent path's (each policy its own forward)."""
    models = _snapshots(3)

    def play(stacked: bool) -> list:
        if not stacked:
            monkeypatch.setattr(BatchedPolicy, "act_together", None)
        live = LivePolicy(seed=5)
        live.model = models[0]
        opponents = [BatchedPolicy(m, deterministic=False, seed=i) for i, m in enumerate(models)]
        batch = LearnerBatch(24, [*opponents, BatchedSimple(seed=3), live], None, "hollywood", "points", 0.0, 7)
        learner = BatchedSimple(seed=4)
        trace = []
        for _ in range(60):
            obs, masks = batch.observations().copy(), batch.action_masks().copy()
            rewards, *_ = batch.step(learner.act(obs, masks))
            trace.append((obs, rewards.copy()))
        monkeypatch.undo()
        return trace

    calls = []
    real = BatchedPolicy.act_together
    monkeypatch.setattr(BatchedPolicy, "act_together", staticmethod(lambda jobs: calls.append(len(jobs)) or real(jobs)))
    stacked = play(True)
    assert max(calls) == 3  # the three snapshots asked together (the live policy alone)
    reference = play(False)
    for (o1, r1), (o2, r2) in zip(stacked, reference, strict=True):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)


def test_the_side_by_side_measurement_runs(capsys):
    """``python -m eval.league_opponents`` (docs/training.md's figure) at toy size: both
    paths play the same moves."""
    from eval.league_opponents import main

    assert main(["--snapshots", "2", "--steps", "3", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "same moves: True" in out and "stacked:" in out
