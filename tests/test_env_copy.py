"""Envs that copy with their state: copy.deepcopy and pickle of raw_env()/env() mid-match carry
the whole state, and the copy plays on exactly like the original."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from helpers import greedy_action, same_state

from hgin_env import hollywood_gin_v0

MAKERS = {"raw_env": hollywood_gin_v0.raw_env, "env": hollywood_gin_v0.env}
COPIERS = {"deepcopy": copy.deepcopy, "pickle": lambda e: pickle.loads(pickle.dumps(e))}


def same_last(a, b) -> None:
    for x, y in zip(a.last(), b.last(), strict=True):
        if isinstance(x, dict) and "observation" in x:
            np.testing.assert_array_equal(x["observation"], y["observation"])
            np.testing.assert_array_equal(x["action_mask"], y["action_mask"])
        else:
            assert x == y


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_copies_mid_match_continue_identically(maker):
    rng = np.random.default_rng(11)
    modes = ("match", "points", "columns")
    for match in range(25):  # 50 matches over the two makers
        env = MAKERS[maker](reward=modes[match % 3], rules={"target": 50})
        env.reset(seed=match)
        copy_at = int(rng.integers(0, 100))
        twin = None
        for step, _agent in enumerate(env.agent_iter()):
            if step == copy_at:
                twin = COPIERS[("deepcopy", "pickle")[match % 2]](env)
                same_state(twin, env)  # (also the position inside env()'s agent_iter loop)
            if twin is not None:
                assert twin.agent_selection == env.agent_selection and twin.agents == env.agents
                same_last(env, twin)
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else greedy_action(env.game, rng)
            if match % 5 == 4 and action is not None and step == copy_at + 7:
                action = 3 if not obs["action_mask"][3] else 104  # an illegal move ends env()'s game
                if maker == "raw_env":
                    action = None
                    with pytest.raises(ValueError):
                        env.step(3 if not obs["action_mask"][3] else 106)
                    with pytest.raises(ValueError):
                        twin.step(3 if not obs["action_mask"][3] else 106)
                    action = greedy_action(env.game, rng)
            env.step(action)
            if twin is not None:
                twin.step(action)
        assert twin is not None, "the match ended before the copy"
        assert twin.agents == [] and env.agents == []
        same_state(twin, env)
        # Both go on to the next match identically (the reset stream is copied too).
        env.reset()
        twin.reset()
        same_state(twin, env)


def test_copy_before_reset_and_copy_independence():
    for make in MAKERS.values():
        fresh = copy.deepcopy(make())
        fresh.reset(seed=3)
        env = make()
        env.reset(seed=3)
        same_state(fresh, env)
        twin = copy.deepcopy(env)
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
        assert twin.game.action_history == [] and env.game.action_history != []
