"""The policies' traced graphs (agents.traced_forward): the eager forward's floats bit for
bit, with the weights as they are now, never made for a policy asked too few times."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import simple_states

from agents.batched import actor_logits, masked_probabilities, policy_probabilities
from agents.ppo import SHIPPED_POLICY, PPOAgent
from agents.traced_forward import TRACE_AFTER, TRACED
from arena.matches import derive_seed
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.rules import get_rules

SHIPPED = ("hgin_ppo_scratch.zip", "hgin_ppo.zip", "hgin_ppo_three_hand.zip", "hgin_ppo_partnership.zip")


@pytest.fixture(autouse=True)
def _graphs_on():
    TRACED.enabled = True
    yield
    TRACED.enabled = True


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
    entry = TRACED._entries.get(policy)
    return None if entry is None else entry.graph


def test_the_graph_gives_the_eager_floats_bit_for_bit_for_every_shipped_policy():
    """After TRACE_AFTER calls a policy answers from its graph; at every batch size the
    probabilities are the eager forward's (and sb3_contrib's distribution's) floats."""
    for name in SHIPPED:
        policy = PPOAgent.load(SHIPPED_POLICY.parent / name).model.policy
        rows, masks = _rows(policy.observation_space.shape[0])
        for _ in range(TRACE_AFTER):
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
    for _ in range(TRACE_AFTER + 1):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    assert policy_probabilities(policy, rows[:0], masks[:0]).shape == (0, masks.shape[1])


def test_a_policy_asked_few_times_or_with_graphs_off_has_no_graph():
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    rows, masks = _rows(policy.observation_space.shape[0], n=4, steps=2)
    for _ in range(TRACE_AFTER - 1):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is None
    TRACED.enabled = False
    for _ in range(2 * TRACE_AFTER):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is None


def test_the_graph_answers_with_the_weights_as_they_are_now():
    """A graph reads the policy's own parameters: after an in-place change, Adam's fused
    step (which leaves torch's version counters as they were: a copy of the weights would
    not notice), ``p.data = ...`` and ``load_state_dict``, its answers are the eager
    forward's with the new weights."""
    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    rows, masks = _rows(policy.observation_space.shape[0], n=8, steps=2)
    for _ in range(TRACE_AFTER):
        policy_probabilities(policy, rows, masks)
    graph, before = _graph(policy), policy_probabilities(policy, rows, masks)
    assert graph is not None
    saved = {k: v.clone() for k, v in policy.state_dict().items()}

    def answers_now() -> np.ndarray:
        got = policy_probabilities(policy, rows, masks)
        assert _graph(policy) is graph
        assert np.array_equal(got, _eager(policy, rows, masks))
        return got

    with torch.no_grad():
        policy.action_net.global_logits.bias.add_(3.0)  # draw/take/pass/gin logits move
    assert not np.array_equal(answers_now(), before)
    versions = [p._version for p in policy.parameters()]
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2, fused=True)
    actor_logits(policy, torch.as_tensor(rows)).square().mean().backward()
    optimizer.step()
    assert [p._version for p in policy.parameters()] == versions  # why a copy would go stale
    answers_now()
    with torch.no_grad():
        for p in policy.parameters():
            p.data = p.data * 1.01
    answers_now()
    policy.load_state_dict(saved)
    assert np.array_equal(answers_now(), before)


def test_tracing_leaves_the_policy_in_its_training_mode_and_frees_with_it():
    import gc
    import weakref

    policy = PPOAgent.load(SHIPPED_POLICY).model.policy
    policy.train(True)
    rows, masks = _rows(policy.observation_space.shape[0], n=4, steps=2)
    for _ in range(TRACE_AFTER):
        policy_probabilities(policy, rows, masks)
    assert _graph(policy) is not None
    assert policy.training and all(m.training for m in policy.modules())
    alive = weakref.ref(policy)
    del policy
    gc.collect()
    assert alive() is None


class _Stop(Exception):
    pass


def _moves(rules_name: str, graphs: bool, moves: int = 160) -> list[int]:
    """The first ``moves`` moves of a match of the shipped policy (every seat) under ``rules_name``."""
    TRACED.enabled = graphs
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


def test_self_play_trains_the_same_network_with_graphs_and_without(tmp_path):
    """The live learner as its own opponent is asked every step while its weights change
    every update (Adam's fused step among them): the run must not tell graphs from the
    eager forward."""
    from train.ppo import Args, train

    states = []
    for graphs in (True, False):
        TRACED.enabled = graphs
        path = train(Args(run_name=f"self_{graphs}", out_dir=str(tmp_path), total_timesteps=16384,
                          eval_every=0, checkpoint_every=0, opponents="self", progress_bar=False, seed=3))
        states.append(PPOAgent.load(path).model.policy.state_dict())
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
