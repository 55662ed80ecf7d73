"""The vectorised learner environments over the batched engine."""

from __future__ import annotations

import numpy as np
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from agents.batched import BatchedRandom, BatchedSimple
from hgin_env.batch.vector import HollywoodVectorEnv, LearnerBatch
from train.envs import BatchedVecEnv


def _random_actions(rng, masks):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_learner_always_acts_and_matches_finish():
    core = LearnerBatch(6, [BatchedSimple(seed=0), BatchedRandom(seed=1)], [1, 1], reward="points",
                        match_bonus=1.0, seed=0)
    rng = np.random.default_rng(0)
    finished = []
    for _ in range(1500):
        masks = core.action_masks()
        assert (core.batch.current_player == core.seat).all()
        _, terminated, truncated, done = core.step(_random_actions(rng, masks))
        assert set(np.flatnonzero(terminated | truncated)) == set(done)
        finished += done.values()
    assert finished
    s = finished[0]["episode_summary"]
    assert {"won", "lost", "columns_won", "column_totals", "opponent_column_totals", "hand_kinds"} <= set(s)
    assert {f["opponent_spec"] for f in finished} <= {"simple", "random"}
    assert all(f["episode"]["l"] > 0 for f in finished)


def test_seeded_reproducible():
    def run(seed):
        core = LearnerBatch(4, [BatchedSimple(seed=0)], rules="gin_us_uk", reward="points", seed=seed)
        rng = np.random.default_rng(1)
        out = []
        for _ in range(200):
            r, *_ = core.step(_random_actions(rng, core.action_masks()))
            out.append(r)
        return np.array(out)

    assert np.array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


def test_gymnasium_vector_env():
    env = HollywoodVectorEnv(4, [BatchedSimple(seed=0)], rules="gin_us_uk", reward="match", seed=0)
    obs, info = env.reset(seed=1)
    assert obs.shape == (4, 382) and env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(800):
        obs, rewards, term, trunc, info = env.step(_random_actions(rng, info["action_mask"]))
        if term.any():
            ended += int(term.sum())
            i = int(np.flatnonzero(term)[0])
            assert info["_episode_summary"][i] and info["final_obs"][i].shape == (382,)  # one column
            summary = info["episode_summary"][i]
            assert rewards[i] == float(summary["won"]) - float(summary["lost"])
    assert ended > 0


def test_sb3_vec_env_masks_for_maskable_ppo():
    env = BatchedVecEnv(5, ["simple", "random"], [0.5, 0.5], seed=0)
    assert is_masking_supported(env)
    obs = env.reset()
    masks = get_action_masks(env)
    assert obs.shape == (5, 394) and masks.shape == (5, 108) and masks.dtype == bool
    rng = np.random.default_rng(0)
    env.step_async(_random_actions(rng, masks))
    obs, rewards, dones, infos = env.step_wait()
    assert obs.shape == (5, 394) and rewards.shape == (5,) and len(infos) == 5
    env.set_opponent_specs(["random"], [1.0])
    assert env.opponent_specs == ["random"]


def test_a_learner_may_wait_at_no_move():
    """``step(allow_no_move=True)``: rows at NO_MOVE stay as they are (no step counted, no
    shaping term, no reward) while the other rows play on."""
    from hgin_env.actions import NO_MOVE

    core = LearnerBatch(4, [BatchedSimple(seed=0)], reward="points", seed=2, shaping=0.5, shaping_gamma=0.9)
    rng = np.random.default_rng(3)
    for _ in range(5):
        core.step(_random_actions(rng, core.action_masks()))
    obs, lengths = core.observations().copy(), core.episode_length.copy()
    rewards, terminated, truncated, done = core.step(np.full(4, NO_MOVE), allow_no_move=True)
    assert not rewards.any() and not (terminated | truncated).any() and not done
    np.testing.assert_array_equal(core.observations(), obs)
    np.testing.assert_array_equal(core.episode_length, lengths)
    actions = _random_actions(rng, core.action_masks())
    actions[1] = NO_MOVE
    rewards, *_ = core.step(actions, allow_no_move=True)
    assert rewards[1] == 0.0 and core.episode_length[1] == lengths[1]
    np.testing.assert_array_equal(core.observations()[1], obs[1])
    assert (core.episode_length[[0, 2, 3]] == lengths[[0, 2, 3]] + 1).all()
    assert not (core.observations()[[0, 2, 3]] == obs[[0, 2, 3]]).all(axis=1).any()
