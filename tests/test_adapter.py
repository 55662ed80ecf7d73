"""The single-agent Gymnasium adapter used with SB3."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from hgin_env import actions as A
from hgin_env.cards import parse_card
from hgin_env.envs.single_agent import SingleAgentEnv, UniformRandomOpponent
from hgin_env.game import build_deck


def test_gymnasium_env_checker_passes():
    check_env(SingleAgentEnv(), skip_render_check=True)
    check_env(SingleAgentEnv(reward="points", episode="hand", rules="oklahoma"), skip_render_check=True)


def test_pickle_round_trip():
    env = SingleAgentEnv(opponent=UniformRandomOpponent(3))
    clone = pickle.loads(pickle.dumps(env))
    a, _ = env.reset(seed=4)
    b, _ = clone.reset(seed=4)
    np.testing.assert_array_equal(a, b)


def test_seeded_reset_reproduces_episode():
    def run(seed):
        env = SingleAgentEnv(reward="points")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = [info["learner"]]
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            obs, r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            trace.append(round(r, 6))
            done = term or trunc
        return trace, info["episode_summary"]

    assert run(8) == run(8)


def test_learner_gets_reward_on_the_opponents_winning_move():
    # The opponent (player_1, non-dealer) holds a hand that gins after drawing 7H.
    deck = build_deck("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "JS JH JC 5D 6D 7D 8S 4S 3H 3D", "QC", "7H")
    script = iter([A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KD")])
    for reward, expected in (("points", -0.43), ("match", -1.0)):
        script = iter([A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KD")])
        env = SingleAgentEnv(opponent=lambda obs, s=script: next(s), seat=0, episode="hand", reward=reward)
        obs, info = env.reset(seed=0, options={"deck": deck, "first_dealer": 0})
        assert info["learner"] == "player_0"
        assert env.action_masks()[A.PASS] and env.action_masks()[A.TAKE_DISCARD]
        obs, r, term, trunc, info = env.step(A.PASS)
        assert term and not trunc and r == pytest.approx(expected)
        assert info["hand"]["kind"] == "gin" and info["episode_summary"]["lost"]


def test_illegal_action_terminates_or_raises():
    env = SingleAgentEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, r, term, _, info = env.step(illegal)
    assert term and r == -1.0 and info["illegal_action"] == illegal
    with pytest.raises(RuntimeError, match="reset"):
        env.step(illegal)
    strict = SingleAgentEnv(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)


def test_opponent_pool_and_validation():
    calls = {"a": 0, "b": 0}

    def make(name):
        rng = np.random.default_rng(0)

        def act(obs):
            calls[name] += 1
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[rng.integers(len(legal))])
        return act

    env = SingleAgentEnv(opponent=[make("a"), make("b")], opponent_weights=[1, 0], episode="hand")
    for s in range(3):
        env.reset(seed=s)
    assert calls["b"] == 0 and calls["a"] > 0
    with pytest.raises(ValueError, match="opponent_weights"):
        SingleAgentEnv(opponent=[make("a")], opponent_weights=[1, 2])
    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv(seat=2)


def test_maskable_ppo_learns_through_subproc_vec_env():
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    torch.set_num_threads(1)
    venv = SubprocVecEnv([lambda: SingleAgentEnv(reward="points", episode="hand") for _ in range(2)])
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=1, device="cpu",
                            seed=0, verbose=0)
        model.learn(3000)
        assert model.num_timesteps >= 3000
    finally:
        venv.close()
