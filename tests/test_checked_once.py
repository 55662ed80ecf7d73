"""Each action is checked once on each path (docs/architecture.md): the outermost layer that
accepts it checks its type, range and legality; the layers inside trust it. Counted by
wrapping the checks themselves."""

from __future__ import annotations

import numpy as np
import pytest

import hgin_env.actions as A
from agents.batched import BatchedRandom
from hgin_env import hollywood_gin_v0
from hgin_env.game import Hand


@pytest.fixture
def counts(monkeypatch):
    """Calls of Hand.is_legal / check_legal (legality, on every table: the duel's hands are
    Hands too) and of as_action / as_actions (type and range)."""
    seen = {"legal": 0, "as_action": 0, "as_actions": 0, "engine_as_actions": 0}
    check_legal, is_legal, as_action, as_actions = Hand.check_legal, Hand.is_legal, A.as_action, A.as_actions

    def counted_legal(self, *args, **kwargs):
        seen["legal"] += 1
        return check_legal(self, *args, **kwargs)

    def counted_is_legal(self, *args, **kwargs):  # a refusal then calls check_legal for its text
        seen["legal"] += 1
        return is_legal(self, *args, **kwargs)

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            seen[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(Hand, "check_legal", counted_legal)
    monkeypatch.setattr(Hand, "is_legal", counted_is_legal)
    import hgin_env.batch.core as core
    import hgin_env.batch.vector as vector
    import hgin_env.envs.aec as aec
    import hgin_env.envs.single_agent as single_agent
    import hgin_env.loop as loop

    for module in (aec, single_agent, loop):
        if hasattr(module, "as_action"):
            monkeypatch.setattr(module, "as_action", counted("as_action", as_action))
    monkeypatch.setattr(vector, "as_actions", counted("as_actions", as_actions))
    # BatchGame.step checks through the module (A.as_actions) unless told the batch is checked.
    monkeypatch.setattr(core.A, "as_actions", counted("engine_as_actions", as_actions))
    return seen


def _first_legal(obs: dict) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.parametrize("profile", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
@pytest.mark.parametrize("factory", ["env", "raw_env"])
def test_env_checks_each_action_once(counts, profile, factory):
    env = getattr(hollywood_gin_v0, factory)(rules=profile)
    env.reset(seed=1)
    for _ in range(40):
        agent = env.agent_selection
        obs = env.observe(agent)
        counts.update(legal=0, as_action=0)
        env.step(_first_legal(obs))
        # env(): its wrapper checks legality itself (to end the game instead of raising) and
        # tells Match.apply the action is checked; raw_env: Match.apply checks it. Once each.
        assert counts["as_action"] == 1
        assert counts["legal"] == 1


def test_single_agent_checks_learner_and_opponent_moves_once(counts):
    from hgin_env.envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv(opponent=lambda obs: _first_legal(obs), seat=0)
    obs, info = env.reset(seed=3)
    counts.update(legal=0, as_action=0)
    learner_moves = 0
    opponent_moves_before = len(env.aec.match.action_history)
    for _ in range(30):
        action = int(np.flatnonzero(env.action_masks())[0])
        obs, reward, term, trunc, info = env.step(action)
        learner_moves += 1
        if term or trunc:
            break
    total = len(env.aec.match.action_history) - opponent_moves_before
    opponent = total - learner_moves
    # The learner's: one as_action, its mask (no check_legal); each opponent move: the
    # env's step, one as_action and one legality check.
    assert counts["as_action"] == learner_moves + opponent
    assert counts["legal"] == opponent


def test_run_match_checks_each_answer_once(counts):
    from hgin_env.loop import run_match
    from hgin_env.match import Match

    match = Match("hollywood_short", seed=4)
    run_match(match, [_first_legal, _first_legal])
    moves = len(match.action_history)
    assert counts["as_action"] == moves and counts["legal"] == moves


def test_vector_env_checks_each_batch_once(counts):
    from hgin_env.batch.vector import LearnerBatch

    core = LearnerBatch(16, [BatchedRandom(seed=0)], rules="hollywood", seed=2)
    masks = core.action_masks()
    counts.update(as_actions=0, engine_as_actions=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        before = counts["as_actions"]
        core.step(actions)
        # The learners' batch is checked once, and each batch of opponent moves once (at
        # least one: every learner waits for its opponent's reply); never again in the engine.
        assert counts["as_actions"] - before >= 2
        masks = core.action_masks()
    assert counts["engine_as_actions"] == 0 and counts["legal"] == 0
