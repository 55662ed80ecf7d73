"""The trunks' first layers from the observation's nonzero entries
(agents/nets/sparse_input.py): the same function as ``nn.Linear``, outputs and every
gradient equal to float rounding, on observations of real play in every format, with the
privileged critic's columns and with one shared trunk; the policy's switch; and the dense
path wherever the sparse one does not apply."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch as th

from agents.batched import BatchedRandom
from agents.nets.card_net import CardExtractor
from agents.nets.sparse_input import common_values, sparse_linears
from hgin_env.batch import BatchGame, privileged_size
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules


def _play(rules: str, n: int = 32, steps: int = 30, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and privileged columns at many points of random play."""
    batch, agent = BatchGame(n, rules=rules, seed=seed), BatchedRandom(seed=seed)
    observations, privileged = [], []
    for _ in range(steps):
        obs, legal = batch.observations(), batch.legal_action_masks()
        observations.append(obs.copy())
        privileged.append(batch.privileged_observations().copy())
        batch.step(agent.act(obs, legal))
    return np.concatenate(observations).astype(np.float32), np.concatenate(privileged).astype(np.float32)


def _both_paths(extractor: CardExtractor, features: th.Tensor) -> list[tuple[th.Tensor, ...]]:
    """(latent_pi, latent_vf, every parameter's gradient) from the dense and the sparse path."""
    results = []
    for sparse in (False, True):
        extractor.zero_grad()
        latent_pi, latent_vf = extractor(features, sparse=sparse)
        (latent_pi.square().mean() + latent_vf.sum()).backward()
        results.append((latent_pi.detach(), latent_vf.detach(), *[p.grad.clone() for p in extractor.parameters()]))
    return results


@pytest.mark.parametrize("rules", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
@pytest.mark.parametrize("privileged, shared_trunk", [(False, False), (True, False), (True, True)])
def test_sparse_first_layers_are_the_dense_function(rules, privileged, shared_trunk):
    obs, hidden = _play(rules)
    fmt = get_rules(rules).format
    layout = ObservationLayout(3, fmt)
    assert obs.shape[1] == layout.size
    features = np.concatenate([obs, hidden], axis=1) if privileged else obs
    width = privileged_size(fmt) if privileged else 0
    th.manual_seed(0)
    extractor = CardExtractor(layout.size + width, layout, hidden=64, summary=32, privileged=width,
                              shared_trunk=shared_trunk)
    _, sparse = _both_paths(extractor, th.as_tensor(features))
    # The reference is the dense function in float64: float32's dense product is itself
    # off by float rounding, more on some CPUs' kernels than others (a critic bias gradient
    # of magnitude 535, a sum over 960 rows, was 0.095 from the float64 value on one machine
    # where the sparse path was 3e-5 from it), so the two float32 paths are not compared
    # with each other.
    exact = _both_paths(copy.deepcopy(extractor).double(), th.as_tensor(features, dtype=th.float64))[0]
    for a, b in zip(exact, sparse, strict=True):
        th.testing.assert_close(b.double(), a, rtol=1e-5, atol=1e-5 * max(1.0, float(a.abs().max())))
    # Most of an observation is its common values: the point of the sparse path.
    common = common_values(layout, layout.size)
    assert (obs != common).mean() < 0.2


def test_the_common_values_make_observations_sparse():
    """1.0 in discard_deadwood (every card not held in the discard phase), 0 elsewhere: in
    real play most of discard_deadwood is 1.0, and an observation less its common values
    has about a tenth of its columns nonzero, against about a quarter without them."""
    obs, _ = _play("hollywood", steps=40)
    layout = ObservationLayout(3, "duel")
    common = common_values(layout, layout.size)
    assert set(np.flatnonzero(common)) == set(range(layout.size)[layout.slice("discard_deadwood")])
    assert (obs[:, layout.slice("discard_deadwood")] == 1.0).mean() > 0.75
    assert (obs != common).mean() < 0.15 < (obs != 0).mean()


def test_policy_switch_and_the_dense_paths():
    """CardAwarePolicy.sparse_input selects the training path's first layers (the same values
    and log-probabilities to float rounding); agents' paths and float64 stay dense."""
    from agents.nets.policy import CardAwarePolicy

    class Dense(CardAwarePolicy):
        sparse_input = False

    obs, _ = _play("hollywood", steps=12)
    batch = BatchGame(8, rules="hollywood", seed=1)
    masks = np.repeat(batch.legal_action_masks()[:1], len(obs), axis=0)
    layout = ObservationLayout(3, "duel")
    spaces = gym.spaces.Box(-np.inf, np.inf, (layout.size,), np.float32), gym.spaces.Discrete(masks.shape[1])
    th.manual_seed(0)
    sparse = CardAwarePolicy(*spaces, lambda _: 1e-3, hidden=32, summary=16, card_hidden=8)
    dense = Dense(*spaces, lambda _: 1e-3, hidden=32, summary=16, card_hidden=8)
    dense.load_state_dict(sparse.state_dict())
    actions = th.as_tensor([int(np.flatnonzero(m)[0]) for m in masks])
    x = th.as_tensor(obs)
    with th.no_grad():
        a = sparse.evaluate_actions(x, actions, action_masks=masks)
        b = dense.evaluate_actions(x, actions, action_masks=masks)
    for u, v in zip(a, b, strict=True):
        th.testing.assert_close(u, v, rtol=1e-5, atol=1e-5)
    # float64 layers (or another device) take nn.Linear itself: the same bits.
    layer = th.nn.Linear(layout.size, 8).double()
    common = th.as_tensor(common_values(layout, layout.size)).double()
    assert th.equal(sparse_linears(x.double(), common, [layer])[0], layer(x.double()))
