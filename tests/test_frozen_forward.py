"""The policies' frozen graphs (agents.frozen_forward): the eager forward's floats bit for
bit, remade when the weights change, never made for a policy asked too few times."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import simple_states

from agents.batched import actor_logits, masked_probabilities, policy_probabilities
from agents.frozen_forward import FREEZE_AFTER, FROZEN
from agents.ppo import SHIPPED_POLICY, PPOAgent
from arena.matches import derive_seed
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import get_rules

SHIPPED = ("hgin_ppo_scratch.zip", "hgin_ppo.zip", "hgin_ppo_three_hand.zip", "hgin_ppo_partnership.zip")


@pytest.fixture(autouse=True)
def _graphs_on():
    FROZEN.enabled = True
    yield
    FROZEN.enabled = True


def _rows(width: int, n: int = 40, steps: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Duel states widened to ``width`` columns (a format's context: random numbers)."""
    obs, masks = simple_states(n=n, steps=steps)
    rows = np.zeros((len(obs), width), dtype=np.float32)
    rows[:, :min(width, obs.shape[1])] = obs[:, :width]
    rows[:, obs.shape[1]:] = np.random.default_rng(1).random((len(obs), max(width - obs.shape[1], 0)))
    return rows, masks


def _eager(policy, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return masked_probabilities(actor_logits(policy, torch.as_tensor(obs)), masks).numpy()


def _graph(policy):
    entry = FROZEN._entries.get(policy)
    return None if entry is None else entry.graph


def test_the_graph_gives_the_eager_floats_bit_for_bit_for_every_shipped_policy():
    """After FREEZE_AFTER calls a policy answers from its graph; at every batch size the
    probabilities are the eager forward's (and sb3_contrib's distribution's) floats."""
    for name in SHIPPED:
        policy = PPOAgent.load(SHIPPED_POLICY.parent / name).model.policy
        rows, masks = _rows(policy.observation_space.shape[0])
        for _ in range(FREEZE_AFTER):
            policy_probabilities(policy, rows[:3], masks[:3])
        assert _graph(policy) is not None, name
        for n in (1, 2, 7, 64, 300):
            got = policy_probabilities(policy, rows[-n:], masks[-n:])
            assert np.array_equal(got, _eager(policy, rows[-n:], masks[-n:])), (name, n)
            with torch.no_grad():
                want = policy.get_distribution(torch.as_tensor(rows[-n:]), action_masks=masks[-n:]).distribution.probs
            assert np.array_equal(got, want.numpy()), (name, n)


def test_no_rows_give_no_probabilities_with_a_graph_or_without():
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    rows, masks = _rows(policy.observation_space.shape[0], n=4, steps=2)
    for _ in range(FREEZE_AFTER + 1):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    assert policy_probabilities(policy, rows[:0], masks[:0]).shape == (0, masks.shape[1])


def test_a_policy_asked_few_times_or_with_graphs_off_has_no_graph():
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    rows, masks = _rows(policy.observation_space.shape[0], n=4, steps=2)
    for _ in range(FREEZE_AFTER - 1):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is None
    FROZEN.enabled = False
    for _ in range(2 * FREEZE_AFTER):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is None


def test_changed_weights_drop_the_graph_and_give_the_new_weights_answers():
    """An in-place change (an optimizer step's kind) and load_state_dict both count: the
    next answers are the new weights' (eager until asked FREEZE_AFTER times again)."""
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    rows, masks = _rows(policy.observation_space.shape[0], n=8, steps=2)
    for _ in range(FREEZE_AFTER):
        policy_probabilities(policy, rows, masks)
    before = policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    saved = {k: v.clone() for k, v in policy.state_dict().items()}
    with torch.no_grad():
        policy.action_net.global_logits.bias.add_(3.0)  # draw/take/pass/gin logits move
    after = policy_probabilities(policy, rows, masks)
    assert _graph(policy) is None
    assert not np.array_equal(after, before)
    assert np.array_equal(after, _eager(policy, rows, masks))
    for _ in range(FREEZE_AFTER):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    policy.load_state_dict(saved)
    assert np.array_equal(policy_probabilities(policy, rows, masks), before)
    assert _graph(policy) is None


def test_freezing_leaves_the_policy_in_its_training_mode():
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    policy.train(True)
    rows, masks = _rows(policy.observation_space.shape[0], n=4, steps=2)
    for _ in range(FREEZE_AFTER):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    assert policy.training and all(m.training for m in policy.modules())


class _Stop(Exception):
    pass


def _moves(rules_name: str, graphs: bool, moves: int = 160) -> list[int]:
    """The first ``moves`` moves of a match of the shipped policy (every seat) under ``rules_name``."""
    FROZEN.enabled = graphs
    rules = get_rules(rules_name)
    from arena.matches import as_spec

    players = [as_spec("ppo:").build(rules) for _ in range(rules.num_players)]
    for i, player in enumerate(players):
        player.reset(seed=derive_seed(7, i + 1))
    log: list[int] = []

    def record(seat, obs, action, finished) -> None:
        log.append(action)
        if len(log) >= moves:
            raise _Stop

    with pytest.raises(_Stop):
        run_match(Match(rules, seed=7), players, on_move=record)
    return log


@pytest.mark.parametrize("rules_name", ["hollywood", "hollywood_three_hand"])
def test_a_match_is_played_move_for_move_alike_with_graphs_and_without(rules_name):
    assert _moves(rules_name, graphs=True) == _moves(rules_name, graphs=False)
