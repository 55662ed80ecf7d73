"""The leaner PPO update (docs/learning.md, "A leaner update"): the per-card scorer on the
legal cards alone gives the dense scorer's logits and gradients to float rounding (the
matrix products run on fewer rows, which may pick another kernel of the BLAS); the dense
scorer (in place) is the code before it, bit for bit; and the heap keeps a training step's
freed memory."""

from __future__ import annotations

import resource

import gymnasium as gym
import numpy as np
import pytest
import torch as th

from agents.batched import BatchedRandom
from agents.nets.card_net import CARD_EMBEDDING, MASKED_LOGIT, NUM_CARDS, CardExtractor, CardHead
from agents.nets.heap import keep_freed_memory
from hgin_env.batch import BatchGame
from hgin_env.observation import ObservationLayout

LAYOUT = ObservationLayout(3, "duel")


def _states(n: int = 48, steps: int = 40, seed: int = 5) -> tuple[th.Tensor, th.Tensor]:
    """Observations and legal-action masks at many points of random play (draws, discards,
    knocks), stacked."""
    batch, agent = BatchGame(n, rules="hollywood", seed=seed), BatchedRandom(seed=seed)
    observations, masks = [], []
    for _ in range(steps):
        obs, legal = batch.observations(), batch.legal_action_masks()
        observations.append(obs.copy())
        masks.append(legal.copy())
        batch.step(agent.act(obs, legal))
    return th.as_tensor(np.concatenate(observations)).float(), th.as_tensor(np.concatenate(masks)).bool()


def _network(relations: bool, knock_bound: float, seed: int = 0) -> tuple[CardExtractor, CardHead]:
    th.manual_seed(seed)
    extractor = CardExtractor(LAYOUT.size, LAYOUT, hidden=32, summary=16, relations=relations)
    head = CardHead(extractor.num_card_features, 16, hidden=8, knock_bound=knock_bound)
    with th.no_grad():  # non-trivial logits
        for param in head.parameters():
            param.normal_(0, 0.5)
    return extractor, head


def _before(head: CardHead, latent: th.Tensor) -> th.Tensor:
    """CardHead's forward as it was before the in-place sums (commit b19731e)."""
    batch, f = latent.shape[0], head.num_card_features
    cards = latent[:, :NUM_CARDS * f].detach().reshape(batch, NUM_CARDS, f)
    summary = latent[:, NUM_CARDS * f:]
    first, rest = head.card_mlp[0], head.card_mlp[1:]
    w_card, w_emb, w_ctx = first.weight[:, :f], first.weight[:, f:f + CARD_EMBEDDING], \
        first.weight[:, f + CARD_EMBEDDING:]
    per_emb = head.embedding(head.card_ids) @ w_emb.T + first.bias
    hidden = cards @ w_card.T + per_emb.unsqueeze(0) + (summary @ w_ctx.T).unsqueeze(1)
    per_card = rest(hidden)
    discard, knock = per_card[:, :, 0], per_card[:, :, 1]
    if head.knock_bound:
        knock = discard + head.knock_bound * th.tanh((knock - discard) / head.knock_bound)
    return th.cat([discard, knock, head.global_logits(summary)], dim=1)


def _gradients(head: CardHead, latent: th.Tensor, logits_of) -> tuple[th.Tensor, list[th.Tensor]]:
    """The masked log-softmax's value and every parameter's gradient of a fixed weighting."""
    head.zero_grad()
    latent = latent.detach().requires_grad_(True)
    log_p = th.log_softmax(logits_of(latent), dim=1)
    weights = th.linspace(-1, 1, log_p.numel()).reshape(log_p.shape)
    (log_p.clamp(min=-50) * weights).sum().backward()
    return log_p.detach(), [p.grad.clone() for p in head.parameters()] + [latent.grad.clone()]


@pytest.mark.parametrize("relations,knock_bound", [(False, 0.0), (True, 2.2)])
def test_legal_cards_scorer_gives_the_dense_logits(relations, knock_bound):
    obs, masks = _states()
    extractor, head = _network(relations, knock_bound)

    def same(legal: th.Tensor, dense: th.Tensor, mask: th.Tensor) -> None:
        assert th.equal(legal[~mask], dense[~mask])  # every illegal action at MASKED_LOGIT
        th.testing.assert_close(legal[mask], dense[mask], rtol=1e-6, atol=1e-6)

    with th.no_grad():
        latent = extractor.forward_actor(obs)
        dense = head(latent).masked_fill(~masks, MASKED_LOGIT)
        same(head(latent, masks), dense, masks)
        for rows in (slice(0, 1), slice(3, 40), slice(0, 128)):  # other batch sizes
            same(head(latent[rows], masks[rows]), dense[rows], masks[rows])
        draw = masks.clone()
        draw[:, :2 * NUM_CARDS] = False  # no card to score: every card logit masked
        assert th.equal(head(latent, draw), head(latent).masked_fill(~draw, MASKED_LOGIT))
    legal_rows = (masks[:, :NUM_CARDS] | masks[:, NUM_CARDS:2 * NUM_CARDS]).float().mean()
    assert 0.05 < legal_rows < 0.3  # the states cover both kinds of decision


@pytest.mark.parametrize("relations,knock_bound", [(False, 0.0), (True, 2.2)])
def test_legal_cards_scorer_gradients_equal_the_dense_ones_to_rounding(relations, knock_bound):
    obs, masks = _states()
    extractor, head = _network(relations, knock_bound)
    with th.no_grad():
        latent = extractor.forward_actor(obs)
    dense_log_p, dense = _gradients(head, latent, lambda x: head(x).masked_fill(~masks, MASKED_LOGIT))
    legal_log_p, legal = _gradients(head, latent, lambda x: head(x, masks))
    th.testing.assert_close(dense_log_p, legal_log_p, rtol=1e-6, atol=1e-5)
    for a, b in zip(dense, legal, strict=True):  # sums of the same terms in another order
        th.testing.assert_close(a, b, rtol=1e-4, atol=1e-5 * float(a.abs().max()))


def test_dense_scorer_is_the_code_before_bit_for_bit():
    """The in-place sums and ReLU change nothing: logits and every gradient as before."""
    obs, masks = _states(steps=12)
    extractor, head = _network(True, 2.2)
    with th.no_grad():
        latent = extractor.forward_actor(obs)
    now = _gradients(head, latent, lambda x: head(x).masked_fill(~masks, MASKED_LOGIT))
    before = _gradients(head, latent, lambda x: _before(head, x).masked_fill(~masks, MASKED_LOGIT))
    assert th.equal(now[0], before[0])
    for a, b in zip(now[1], before[1], strict=True):
        assert th.equal(a, b)


def test_policy_switch_selects_the_scorer():
    """CardAwarePolicy.legal_cards_only: the training path's two scorers, the same values,
    log-probabilities and entropies."""
    from agents.nets.policy import CardAwarePolicy

    class Dense(CardAwarePolicy):
        legal_cards_only = False

    obs, masks = _states(steps=12)
    spaces = gym.spaces.Box(-np.inf, np.inf, (LAYOUT.size,), np.float32), gym.spaces.Discrete(masks.shape[1])
    kwargs = {"hidden": 32, "summary": 16, "card_hidden": 8}
    th.manual_seed(0)
    legal = CardAwarePolicy(*spaces, lambda _: 1e-3, **kwargs)
    dense = Dense(*spaces, lambda _: 1e-3, **kwargs)
    dense.load_state_dict(legal.state_dict())
    actions = th.as_tensor([int(np.flatnonzero(m)[0]) for m in masks.numpy()])
    with th.no_grad():
        a = legal.evaluate_actions(obs, actions, action_masks=masks.numpy())
        b = dense.evaluate_actions(obs, actions, action_masks=masks.numpy())
    assert th.equal(a[0], b[0])  # the values do not go through the scorer
    for x, y in zip(a[1:], b[1:], strict=True):
        th.testing.assert_close(x, y, rtol=1e-6, atol=1e-5)


@pytest.mark.skipif(not keep_freed_memory(), reason="glibc's mallopt only (Linux)")
def test_a_training_step_reuses_freed_memory():
    """With the heap kept (agents.nets.heap, set by building a CardHead), a minibatch of
    1,024 page-faults a few times, not once per 4 KB page of its (1,024 x 52 x 32) tensors
    (1,664 pages each, several per step, without it)."""
    th.manual_seed(0)
    head = CardHead(9, 64, hidden=32)
    latent = th.rand(1024, NUM_CARDS * 9 + 64, requires_grad=True)

    def step():
        head.zero_grad()
        head(latent).sum().backward()

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5 < 500
