"""The privileged critic: what the batched engine supplies, that nothing hidden reaches the
policy, and that a policy trained with it plays from the ordinary observation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.batched import BatchedRandom
from agents.ppo import PPOAgent, checkpoint_meta, save_checkpoint
from hgin_env.batch import PRIVILEGED_SIZE, PRIVILEGED_SLICES, BatchGame
from hgin_env.cards import NUM_CARDS, mask_to_cards
from hgin_env.melds import min_deadwood
from hgin_env.observation import observation_dict
from hgin_env.rules import get_rules


def _states(n: int = 64, steps: int = 120, seed: int = 3):
    """(batch, observations, privileged) at many points of random play."""
    batch = BatchGame(n, rules="hollywood", seed=seed)
    agent = BatchedRandom(seed=seed)
    for _ in range(steps):
        obs, masks = batch.observations(), batch.legal_action_masks()
        yield batch, obs.copy(), batch.privileged_observations()
        batch.step(agent.act(obs, masks))


def test_privileged_features_are_the_hidden_facts():
    assert PRIVILEGED_SIZE == sum(w for _, w in PRIVILEGED_SLICES) == 2 * NUM_CARDS + 1
    checked = 0
    for batch, obs, priv in _states():
        for i in range(0, batch.n, 7):
            q = 1 - int(batch.current_player[i])
            hand = int(batch.hands[i, q])
            assert set(np.flatnonzero(priv[i, :NUM_CARDS])) == set(mask_to_cards(hand))
            pos = int(batch.stock_pos[i])
            nxt = np.flatnonzero(priv[i, NUM_CARDS:2 * NUM_CARDS])
            assert list(nxt) == ([int(batch.decks[i, pos])] if pos < NUM_CARDS else [])
            assert priv[i, 2 * NUM_CARDS] == pytest.approx(min(min_deadwood(mask_to_cards(hand)), 100) / 100)
            # Never in the player's own observation: the opponent's unknown cards are not in it.
            assert not (set(mask_to_cards(hand)) & set(np.flatnonzero(obs[i, :NUM_CARDS])))
            checked += 1
    assert checked > 1000


@pytest.fixture(scope="module")
def privileged_model():
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from train.envs import BatchedVecEnv

    env = BatchedVecEnv(8, ["random"], rules="hollywood", seed=1, privileged=True)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=16, batch_size=64, n_epochs=1, device="cpu", seed=0,
                        policy_kwargs={"hidden": 32, "summary": 16, "card_hidden": 8,
                                       "privileged": PRIVILEGED_SIZE, "shared_trunk": True})
    model.learn(256)  # trained a little, so the critic's weights on the hidden facts are not zero
    return model, env


@pytest.mark.parametrize("shared_trunk", [True, False])
def test_policy_outputs_do_not_depend_on_privileged_input(shared_trunk):
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from train.envs import BatchedVecEnv

    env = BatchedVecEnv(16, ["simple"], rules="hollywood", seed=5, privileged=True)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=8, device="cpu", seed=0,
                        policy_kwargs={"hidden": 32, "summary": 16, "card_hidden": 8, "relations": True,
                                       "privileged": PRIVILEGED_SIZE, "shared_trunk": shared_trunk})
    policy = model.policy
    obs = env.reset()
    masks = env.action_masks()
    noisy = obs.copy()
    noisy[:, -PRIVILEGED_SIZE:] = np.random.default_rng(0).normal(size=(obs.shape[0], PRIVILEGED_SIZE)) * 10
    size = obs.shape[1] - PRIVILEGED_SIZE
    with torch.no_grad():
        probs = [policy.get_distribution(torch.as_tensor(x), action_masks=masks).distribution.probs
                 for x in (obs, noisy, obs[:, :size])]
        values = [policy.predict_values(torch.as_tensor(x)) for x in (obs, noisy)]
        logits = [policy.action_net(policy.mlp_extractor.forward_actor(torch.as_tensor(x))) for x in (obs, noisy)]
    assert torch.equal(probs[0], probs[1]) and torch.equal(probs[0], probs[2])  # bit-identical
    assert torch.equal(logits[0], logits[1])
    assert not torch.equal(values[0], values[1])  # the critic does read them


def test_saved_privileged_policy_plays_from_the_ordinary_observation(privileged_model, tmp_path):
    from agents.batched import make_batched_agent

    model, env = privileged_model
    rules = get_rules("hollywood")
    meta = checkpoint_meta(rules, {"privileged_size": PRIVILEGED_SIZE})
    path = save_checkpoint(model, tmp_path / "priv.zip", meta)
    agent = PPOAgent.load(path)
    batch = BatchGame(4, rules="hollywood", seed=9)
    obs, masks = batch.observations(), batch.legal_action_masks()
    for o, m in zip(obs, masks, strict=True):
        action = agent(observation_dict(o, m.astype(np.int8)))
        assert m[action]
    batched = make_batched_agent(f"ppo:{path}")
    acts = batched.act(obs, masks)
    assert masks[np.arange(4), acts].all()
    # The same probabilities as the model fed with any privileged columns.
    full = np.concatenate([obs, np.random.default_rng(1).random((4, PRIVILEGED_SIZE), dtype=np.float32)], axis=1)
    with torch.no_grad():
        want = model.policy.get_distribution(torch.as_tensor(full), action_masks=masks).distribution.probs
    np.testing.assert_array_equal(batched.probabilities(obs, masks), want.numpy())


def test_metadata_must_account_for_the_privileged_columns(privileged_model, tmp_path):
    from agents.ppo import CheckpointError

    model, _ = privileged_model
    path = save_checkpoint(model, tmp_path / "bad.zip", checkpoint_meta(get_rules("hollywood")))
    with pytest.raises(CheckpointError, match="privileged"):
        PPOAgent.load(path)


def test_fast_training_path_equals_sb3_masked_distribution():
    """CardAwarePolicy's own forward/evaluate_actions give SB3's masked-distribution numbers."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.nets.policy import CardAwarePolicy
    from train.envs import BatchedVecEnv

    env = BatchedVecEnv(32, ["simple"], rules="hollywood", seed=2)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=8, device="cpu", seed=0,
                        policy_kwargs={"hidden": 32, "summary": 16, "card_hidden": 8, "shared_trunk": True})
    policy = model.policy
    with torch.no_grad():  # non-trivial logits
        for param in policy.action_net.parameters():
            param.normal_(0, 0.5)
    obs = torch.as_tensor(env.reset())
    masks = env.action_masks()
    actions = torch.as_tensor(np.argmax(masks * np.random.default_rng(0).random(masks.shape), axis=1)).float()
    with torch.no_grad():
        mine = policy.evaluate_actions(obs, actions, action_masks=masks)
        theirs = MaskableActorCriticPolicy.evaluate_actions(policy, obs, actions, action_masks=masks)
        for a, b in zip(mine, theirs, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
        acts, values, log_prob = policy(obs, action_masks=masks)
        assert masks[np.arange(32), acts.numpy()].all()
        torch.testing.assert_close(values, theirs[0])
        torch.testing.assert_close(log_prob, policy.evaluate_actions(obs, acts, action_masks=masks)[1])
