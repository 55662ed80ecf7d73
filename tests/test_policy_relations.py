"""The card network's relation features (``--relations``) and widening a checkpoint into it."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO

from agents.nets.policy import RELATION_KINDS, RELATION_SETS, CardAwarePolicy, load_start_weights
from agents.ppo import PPOAgent
from agents.simple import SimpleAgent
from hgin_env import actions as A
from hgin_env.cards import NUM_CARDS, NUM_RANKS, parse_card
from hgin_env.envs.single_agent import SingleAgentEnv
from hgin_env.melds import meld_partners
from hgin_env.observation import ObservationLayout
from train.ppo import Args, train

SMALL = {"columns": 3, "hidden": 32, "summary": 16, "card_hidden": 8}


def _partners(c: int, kind: str) -> set[int]:
    """Slow and obvious: the meld partners of card c of one kind."""
    out = set()
    for d in range(NUM_CARDS):
        gap = abs(c % NUM_RANKS - d % NUM_RANKS)
        same_suit = c // NUM_RANKS == d // NUM_RANKS
        if (kind == "same_rank" and d != c and gap == 0) or (kind == f"run_{gap}" and same_suit):
            out.add(d)
    return out


def test_partner_kinds_are_meld_partners():
    for c in range(NUM_CARDS):
        union = set().union(*(_partners(c, kind) for kind in RELATION_KINDS))
        assert union == {d for d in range(NUM_CARDS) if meld_partners(c) >> d & 1}, c
    assert _partners(parse_card("7H"), "same_rank") == {parse_card(t) for t in ("7C", "7D", "7S")}
    assert _partners(parse_card("AH"), "run_2") == {parse_card("3H")}


def test_relation_counts_on_random_and_full_sets():
    """Every set at once, each card in it with probability q (q = 1: every card), in each
    of the five sets; the counts against the slow partner sets."""
    layout = ObservationLayout(3)
    extractor = _model(True, SingleAgentEnv(SimpleAgent(seed=0))).policy.mlp_extractor
    rng = np.random.default_rng(0)
    names = ("hand", "opponent_known", "opponent_discards", "discard_top", "discard_rest")
    for q in (0.1, 0.3, 0.6, 1.0):
        obs = np.zeros((8, layout.size), dtype=np.float32)
        for name in names:
            obs[:, layout.slice(name)] = rng.random((8, NUM_CARDS)) < q
        got = extractor._relations(th.as_tensor(obs)).numpy()
        for row in range(8):
            member = {name: obs[row, layout.slice(name)] for name in names}
            # How many times each card counts in each set: the random sets overlap, so the
            # pile counts a card in both of its slices twice and unseen is 0 wherever any set
            # holds the card (it is clamped at 0).
            pile = member["discard_top"] + member["discard_rest"]
            taken = member["hand"] + member["opponent_known"] + pile > 0
            weight = {"hand": member["hand"], "unseen": (~taken).astype(np.float32),
                      "opponent_known": member["opponent_known"],
                      "opponent_discards": member["opponent_discards"], "pile": pile}
            for c in range(NUM_CARDS):
                for s, name in enumerate(RELATION_SETS):
                    for k, kind in enumerate(RELATION_KINDS):
                        expected = sum(weight[name][d] for d in _partners(c, kind))
                        assert got[row, c, s * len(RELATION_KINDS) + k] * 3 == pytest.approx(expected), \
                            (q, row, c, name, kind)


def _model(relations: bool, env) -> MaskablePPO:
    return MaskablePPO(CardAwarePolicy, env, policy_kwargs={**SMALL, "relations": relations},
                       device="cpu", n_steps=64, batch_size=64, seed=0)


def test_relation_features_count_partners_in_each_set():
    env = SingleAgentEnv(SimpleAgent(seed=1))
    layout = ObservationLayout(3)
    extractor = _model(True, env).policy.mlp_extractor
    obs, _ = env.reset(seed=7)
    for _ in range(60):
        got = extractor._relations(th.as_tensor(obs[None]))[0].numpy()  # (52, 15)
        hand = set(np.flatnonzero(obs[layout.slice("hand")]))
        known = set(np.flatnonzero(obs[layout.slice("opponent_known")]))
        pile = set(np.flatnonzero(obs[layout.slice("discard_top")] + obs[layout.slice("discard_rest")]))
        sets = {"hand": hand, "unseen": set(range(NUM_CARDS)) - hand - known - pile, "opponent_known": known,
                "opponent_discards": set(np.flatnonzero(obs[layout.slice("opponent_discards")])), "pile": pile}
        for c in range(NUM_CARDS):
            for s, name in enumerate(RELATION_SETS):
                for k, kind in enumerate(RELATION_KINDS):
                    expected = len(_partners(c, kind) & sets[name]) / 3.0
                    assert got[c, s * len(RELATION_KINDS) + k] == pytest.approx(expected), (c, name, kind)
        mask = env.action_masks()
        obs, _, done, truncated, _ = env.step(int(np.flatnonzero(mask)[-1]))
        if done or truncated:
            obs, _ = env.reset()


def test_widened_network_plays_exactly_as_the_one_it_started_from():
    env = SingleAgentEnv(SimpleAgent(seed=2))
    plain, widened = _model(False, env), _model(True, env)
    load_start_weights(widened.policy, plain.policy)
    obs, _ = env.reset(seed=3)
    for _ in range(40):
        mask = env.action_masks()
        o = th.as_tensor(obs[None])
        with th.no_grad():
            p = plain.policy.get_distribution(o, action_masks=mask[None]).distribution.probs
            w = widened.policy.get_distribution(o, action_masks=mask[None]).distribution.probs
            assert th.allclose(p, w, atol=1e-6)
            assert th.allclose(plain.policy.predict_values(o), widened.policy.predict_values(o))
        obs, _, done, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
        if done or truncated:
            obs, _ = env.reset()
    other = MaskablePPO(CardAwarePolicy, env, policy_kwargs={**SMALL, "card_hidden": 16, "relations": True},
                        device="cpu", n_steps=64, batch_size=64)
    with pytest.raises(ValueError, match="action_net.card_mlp"):
        load_start_weights(other.policy, plain.policy)


def test_toy_run_with_relations_saves_a_loadable_agent(tmp_path):
    args = Args(run_name="rel", out_dir=str(tmp_path), total_timesteps=512, n_envs=8, n_steps=32,
                batch_size=128, n_epochs=1, eval_every=0, checkpoint_every=0, opponents="simple:1",
                relations=True, shaping=1.0, hidden=32, summary=16, card_hidden=8, progress_bar=False)
    agent = PPOAgent.load(train(args))
    assert agent.model.policy.relations
    env = SingleAgentEnv(SimpleAgent(seed=0))
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    assert mask[agent({"observation": obs, "action_mask": mask.astype(np.int8)})]


def test_knock_bound_keeps_play_on_sampled_and_the_sign_of_knock_minus_discard():
    env = SingleAgentEnv(SimpleAgent(seed=5))
    free, bounded = _model(False, env), MaskablePPO(
        CardAwarePolicy, env, policy_kwargs={**SMALL, "knock_bound": 2.2}, device="cpu", n_steps=64, batch_size=64)
    load_start_weights(bounded.policy, free.policy)
    with th.no_grad():  # a knock-happy network: knock logits far above the discard logits
        free.policy.action_net.card_mlp[-1].bias[1] += 20.0
        bounded.policy.action_net.card_mlp[-1].bias[1] += 20.0
    mover = SimpleAgent(seed=6)  # reaches knockable hands
    obs, _ = env.reset(seed=9)
    checked = 0
    for _ in range(400):
        mask = env.action_masks()
        if mask[A.KNOCK:A.KNOCK + NUM_CARDS].any():
            o = th.as_tensor(obs[None])
            with th.no_grad():
                logits_free = free.policy.action_net(free.policy.mlp_extractor.forward_actor(o))[0]
                logits = bounded.policy.action_net(bounded.policy.mlp_extractor.forward_actor(o))[0]
                probs = bounded.policy.get_distribution(o, action_masks=mask[None]).distribution.probs[0]
            gap, gap_free = logits[A.KNOCK:A.KNOCK + NUM_CARDS] - logits[:NUM_CARDS], \
                logits_free[A.KNOCK:A.KNOCK + NUM_CARDS] - logits_free[:NUM_CARDS]
            assert (gap.abs() <= 2.2 + 1e-5).all() and (th.sign(gap) == th.sign(gap_free)).all()
            play_on = probs[:NUM_CARDS].sum() / probs[:2 * NUM_CARDS].sum()
            assert play_on >= 1 / (1 + np.exp(2.2)) - 1e-6  # at least ~10% plays on
            checked += 1
        obs, _, done, truncated, _ = env.step(mover({"observation": obs, "action_mask": mask.astype(np.int8)}))
        if done or truncated:
            obs, _ = env.reset()
    assert checked > 5
    saved = bounded.policy._get_constructor_parameters()
    assert saved["knock_bound"] == 2.2 and "knock_bound" not in free.policy._get_constructor_parameters()


def test_knock_start_gap_starts_a_policy_that_mostly_plays_on():
    env = SingleAgentEnv(SimpleAgent(seed=8))
    start = _model(False, env)
    bounded = MaskablePPO(CardAwarePolicy, env, policy_kwargs={**SMALL, "knock_bound": 2.2},
                          device="cpu", n_steps=64, batch_size=64)
    load_start_weights(bounded.policy, start.policy, knock_start_gap=-1.5)
    obs, _ = env.reset(seed=2)
    with th.no_grad():
        logits = bounded.policy.action_net(bounded.policy.mlp_extractor.forward_actor(th.as_tensor(obs[None])))[0]
    gap = logits[A.KNOCK:A.KNOCK + NUM_CARDS] - logits[:NUM_CARDS]
    assert th.allclose(gap, th.full_like(gap, 2.2 * np.tanh(-1.5 / 2.2)), atol=1e-5)
    with pytest.raises(ValueError, match="--knock-start-gap needs --knock-bound"):
        load_start_weights(_model(False, env).policy, start.policy, knock_start_gap=-1.5)


def test_the_from_scratch_checkpoint_in_the_docs_loads_and_plays():
    """docs/runs/scratch_wait/model.zip (README, PPO from scratch): relation features and
    the knock bound come back from the checkpoint; it plays a short match legally."""
    from pathlib import Path

    from arena.matches import play_match

    path = Path(__file__).resolve().parents[1] / "docs" / "runs" / "scratch_wait" / "model.zip"
    agent = PPOAgent.load(path)
    policy = agent.model.policy
    assert policy.relations and policy.knock_bound == pytest.approx(2.2)
    row = play_match(agent, SimpleAgent(seed=0), seed=5, a_seat=0, rules="hollywood_short")
    assert row["winner"] in ("a", "b", "draw")


def test_knock_start_gap_without_a_start_checkpoint_is_refused(tmp_path):
    args = Args(run_name="gap", out_dir=str(tmp_path), total_timesteps=256, knock_bound=2.2, knock_start_gap=-3.0,
                eval_every=0, checkpoint_every=0, progress_bar=False)
    with pytest.raises(ValueError, match="--knock-start-gap starts from a checkpoint: give --init-from"):
        train(args)
    assert not (tmp_path / "gap").exists()


def test_per_card_block_depends_on_no_parameter():
    """CardHead detaches the per-card block of the latent (its backward pass is skipped): that
    is exact only while the block is a function of the observation alone, and it changes no
    parameter's gradient."""
    env = SingleAgentEnv(SimpleAgent(seed=4))
    policy = _model(True, env).policy
    obs, _ = env.reset(seed=5)
    features = th.as_tensor(np.stack([obs, obs]))
    assert not policy.mlp_extractor.per_card_features(features).requires_grad
    mask = th.as_tensor(env.action_masks()[None].repeat(2, 0))
    actions = th.as_tensor([int(np.flatnonzero(mask[0])[0])] * 2)

    def gradients():
        policy.zero_grad()
        values, log_prob, entropy = policy.evaluate_actions(features, actions, mask)
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
        return [p.grad.clone() for p in policy.parameters() if p.grad is not None]

    detached = gradients()
    original = th.Tensor.detach
    try:  # the same update with the block left attached
        th.Tensor.detach = lambda self: self
        attached = gradients()
    finally:
        th.Tensor.detach = original
    for a, b in zip(detached, attached, strict=True):
        assert th.equal(a, b)
