"""Refusals that change nothing, integer-only actions, and env()'s checks done natively
(order enforcement, out of bounds, an illegal move ends the game), also under ``python -O``."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import greedy_action, same_state

from hgin_env import actions as A
from hgin_env import hollywood_gin_v0

ROOT = Path(__file__).resolve().parents[1]
NOT_INTEGERS = ["105", 105.7, 104.0, True, False, np.bool_(True), np.float32(104), None, [104], b"h"]
OUT_OF_BOUNDS = [-1, A.NUM_ACTIONS, 10**6, np.int64(-3)]


def snapshot(env):
    return copy.deepcopy(env)


def refusals(env, rng) -> list:
    legal = set(np.flatnonzero(env.game.legal_action_mask()).tolist())
    illegal = [a for a in range(A.NUM_ACTIONS) if a not in legal]
    return NOT_INTEGERS + OUT_OF_BOUNDS + [int(rng.choice(illegal)), np.int16(rng.choice(illegal))]


@pytest.mark.parametrize("reward", ["points", "columns", "match"])
def test_refused_actions_leave_every_field_unchanged(reward):
    rng = np.random.default_rng(7)
    owed_refusals = 0
    for seed in range(2):
        env = hollywood_gin_v0.raw_env(reward=reward, rules={"target": 25})  # columns decided often
        env.reset(seed=seed)
        for decisions, agent in enumerate(env.agent_iter()):
            _, _, term, trunc, _ = env.last()
            if term or trunc or decisions > 120:
                break
            before = snapshot(env)
            owed_refusals += env._cumulative_rewards[agent] != 0
            for bad in refusals(env, rng):
                with pytest.raises((TypeError, ValueError)):
                    env.step(bad)
                same_state(env, before)
            env.step(greedy_action(env.game, rng))  # knocks often: many hands are scored
    if reward != "match":  # the reported case: refused right after a scored hand, reward owed
        assert owed_refusals > 0


@pytest.mark.parametrize("make", [hollywood_gin_v0.raw_env, hollywood_gin_v0.env])
def test_only_integers_are_actions(make):
    env = make()
    env.reset(seed=0)
    assert A.TAKE_DISCARD in np.flatnonzero(env.last()[0]["action_mask"])
    for bad in ("105", 105.7, True, np.bool_(True), np.float64(105.0)):
        with pytest.raises(TypeError, match=repr(bad).replace("(", r"\(").replace(")", r"\)")):
            env.step(bad)
    for bad in OUT_OF_BOUNDS:
        with pytest.raises(ValueError, match="out of bounds"):
            env.step(bad)
    assert env.unwrapped.match.action_history == [] and not any(env.terminations.values())
    env.step(np.int64(A.TAKE_DISCARD))  # numpy integers are integers
    assert env.unwrapped.match.action_history == [A.TAKE_DISCARD]


def test_illegal_move_in_env_ends_the_game_with_zero_masks():
    env = hollywood_gin_v0.env(reward="points")
    env.reset(seed=0)
    offender = env.agent_selection
    other = "player_0" if offender == "player_1" else "player_1"
    env.step(3)  # a discard in the first-upcard phase: illegal
    assert env.rewards == {offender: -1.0, other: 0.0}
    assert all(env.terminations.values()) and all(env.truncations.values())
    seen = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        assert term and trunc and not obs["action_mask"].any()  # a finished agent's mask is zero
        assert env.observe(offender)["action_mask"].sum() == 0
        seen.append((agent, reward))
        env.step(None)
    assert dict(seen) == {offender: -1.0, other: 0.0} and env.agents == []


def test_env_enforces_order():
    env = hollywood_gin_v0.env()
    for name in ("agents", "rewards", "agent_selection", "terminations", "num_agents"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), lambda: env.render(),
                 lambda: env.agent_iter()):
        with pytest.raises(AssertionError, match="reset"):
            call()
    env.reset(seed=1)
    it = iter(env.agent_iter())
    next(it)
    with pytest.raises(RuntimeError, match="step"):
        next(it)  # no step() since the last agent
    assert env.unwrapped is env and isinstance(env, hollywood_gin_v0.raw_env)


def test_env_checks_hold_under_python_O():
    code = """
import numpy as np
from hgin_env import hollywood_gin_v0
assert False, "asserts are on"
"""
    script = """
import warnings
warnings.simplefilter("ignore")
from hgin_env import hollywood_gin_v0
env = hollywood_gin_v0.env()
for bad, kind in ((108, ValueError), (-1, ValueError), ("105", TypeError), (2.0, TypeError), (True, TypeError)):
    try:
        env.step(bad)
    except AssertionError:
        pass  # step before reset
    else:
        raise SystemExit("step before reset accepted")
env.reset(seed=0)
for bad, kind in ((108, ValueError), (-1, ValueError), ("105", TypeError), (2.0, TypeError), (True, TypeError)):
    try:
        env.step(bad)
    except kind as exc:
        assert repr(bad) in str(exc) or str(bad) in str(exc)
    else:
        raise SystemExit(f"accepted {bad!r}")
agent = env.agent_selection
env.step(3)
print(env.rewards[agent], env.terminations[agent], int(env.last()[0]["action_mask"].sum()))
"""
    out = subprocess.run([sys.executable, "-O", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, "python -O did not strip asserts"
    out = subprocess.run([sys.executable, "-O", "-c", script], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1].split() == ["-1.0", "True", "0"]


@pytest.mark.parametrize("seed,error,message", [
    ("a", TypeError, "seed must be an integer or None, got 'a' (str)"),
    (1.5, TypeError, "seed must be an integer or None, got 1.5 (float)"),
    (True, TypeError, "seed must be an integer or None, got True (bool)"),
    ([1, 2], TypeError, "seed must be an integer or None, got [1, 2] (list)"),
    (-1, ValueError, "seed must be a non-negative integer, got -1"),
])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused_naming_seed(seed, error, message):
    """The env's reset and a Match of any format (a duel, its single hand, a three-hand
    match) refuse the same seeds with the same message (one check,
    hgin_env.game.checked_seed), not numpy's 'SeedSequence expects int ...'."""
    from hgin_env.match import Match

    for make in (lambda: hollywood_gin_v0.env().reset(seed=seed), lambda: Match("hollywood", seed=seed),
                 lambda: Match("hollywood", seed=seed, single_hand=True),
                 lambda: Match("hollywood_three_hand", seed=seed)):
        with pytest.raises(error) as refused:
            make()
        assert str(refused.value) == message
    env = hollywood_gin_v0.env()
    env.reset(seed=np.int64(3))  # numpy integers are integers
    assert env.game_seed == 3 and type(env.game_seed) is int
