"""Batched agents decide as the scalar agents on the same observations."""

from __future__ import annotations

import numpy as np
from helpers import simple_states

from agents.batched import (
    BatchedPolicy,
    BatchedRandom,
    BatchedSimple,
    RowByRow,
    make_batched_agent,
    most_likely_moves,
)
from agents.expert import ExpertAgent
from agents.ppo import SHIPPED_POLICY, PPOAgent, most_likely_move
from agents.simple import SimpleAgent
from hgin_env import actions as A
from hgin_env.batch import BatchGame
from hgin_env.observation import ObservationLayout


def test_simple_equals_scalar_where_deterministic():
    obs, masks = simple_states()
    batched = BatchedSimple(seed=1).act(obs, masks)
    scalar = SimpleAgent(seed=1)
    layout = ObservationLayout()
    compared = 0
    for o, m, b in zip(obs, masks, batched, strict=True):
        assert m[b]
        phase = int(layout.get(o, "phase").argmax())
        if phase == 2:
            dd = np.where(m[:52], layout.get(o, "discard_deadwood"), np.inf)
            if (dd == dd.min()).sum() > 1:
                continue  # a random tie: both pick uniformly among the same cards
        assert scalar({"observation": o, "action_mask": m.astype(np.int8)}) == b
        compared += 1
    assert compared > 3000


def test_simple_takes_and_knocks():
    obs, masks = simple_states()
    actions = BatchedSimple(seed=2).act(obs, masks)
    assert (actions == A.TAKE_DISCARD).any() and (actions >= A.KNOCK).any()


def test_random_is_legal_and_uniform():
    obs, masks = simple_states(n=8, steps=40)
    agent = BatchedRandom(seed=3)
    picks = np.stack([agent.act(obs, masks) for _ in range(200)])
    assert masks[np.arange(len(obs))[None, :], picks].all()
    row = int(np.argmax(masks.sum(axis=1)))  # a discard state with ~20 legal moves
    counts = np.bincount(picks[:, row], minlength=108)[masks[row]]
    assert (counts > 0).sum() == masks[row].sum()


def test_row_by_row_is_the_scalar_agent():
    obs, masks = simple_states(n=4, steps=20)
    batched = RowByRow(ExpertAgent(seed=0)).act(obs, masks)
    scalar = ExpertAgent(seed=0)
    assert [scalar({"observation": o, "action_mask": m.astype(np.int8)}) for o, m in zip(obs, masks, strict=True)] \
        == batched.tolist()


def test_most_likely_moves_equals_scalar():
    rng = np.random.default_rng(0)
    probs = rng.random((200, 108)) ** 4
    probs[:, 52:104] *= rng.random((200, 1))
    probs /= probs.sum(axis=1, keepdims=True)
    assert most_likely_moves(probs).tolist() == [most_likely_move(p) for p in probs]


def test_policy_one_call_equals_ppo_agent():
    obs, masks = simple_states(n=16, steps=30)
    scalar = PPOAgent.load(SHIPPED_POLICY)
    batched = make_batched_agent(f"ppo:{SHIPPED_POLICY}")
    assert isinstance(batched, BatchedPolicy)
    probs = batched.probabilities(obs, masks)
    one = np.stack([scalar.action_probabilities({"observation": o, "action_mask": m})
                    for o, m in zip(obs[:50], masks[:50], strict=True)])
    np.testing.assert_allclose(probs[:50], one, atol=1e-5)  # one row or a batch: the matmuls round apart
    acts = batched.act(obs, masks)
    assert masks[np.arange(len(obs)), acts].all()
    sampled = BatchedPolicy(scalar.model, deterministic=False, seed=0).act(obs, masks)
    assert masks[np.arange(len(obs)), sampled].all()


def test_batched_agents_play_without_the_first_upcard_offer():
    # gin_classic (004): every hand starts in the draw phase; pass is never legal.
    batch = BatchGame(16, rules="gin_classic", seed=3)
    players = [BatchedSimple(seed=1, columns=1), BatchedRandom(seed=2, columns=1)]
    layout = ObservationLayout(1)
    hands = 0
    for _ in range(400):
        obs, masks = batch.observations(), batch.legal_action_masks()
        assert not masks[:, A.PASS].any()
        assert not layout.get(obs, "phase")[:, 0].any()
        assert not layout.get(obs, "opponent_passed").any()
        acts = np.where(batch.current_player == 0, players[0].act(obs, masks), players[1].act(obs, masks))
        hands += int(batch.step(acts).hand_over.sum())
    assert hands > 0


def test_policy_probabilities_are_the_distributions_bit_for_bit():
    """BatchedPolicy's fast path (the actor's forward pass, then ``masked_probabilities``)
    gives exactly the floats of sb3_contrib's masked distribution, for every shipped policy
    (duel, three-hand, partnership, and the imitation network), at batch sizes 1 to 200."""
    import torch

    obs, masks = simple_states(n=40, steps=10)
    for name in ("hgin_ppo_scratch.zip", "hgin_ppo.zip", "hgin_ppo_three_hand.zip", "hgin_ppo_partnership.zip"):
        model = PPOAgent.load(SHIPPED_POLICY.parent / name).model
        policy = model.policy
        width = policy.observation_space.shape[0]
        rng = np.random.default_rng(1)
        rows = np.zeros((len(obs), width), dtype=np.float32)  # format rows: the duel's table slices, a context
        rows[:, :obs.shape[1]] = obs[:, :width]
        rows[:, obs.shape[1]:] = rng.random((len(obs), max(width - obs.shape[1], 0)))
        for n in (1, 7, 200):
            with torch.no_grad():
                want = policy.get_distribution(torch.as_tensor(rows[:n]), action_masks=masks[:n]).distribution.probs
            got = BatchedPolicy(model).probabilities(rows[:n], masks[:n])
            assert np.array_equal(got, want.numpy()), (name, n)
