"""Every format on the batched engine's learner side: the vector envs (the learner's seat,
its partner, the opponents), the privileged critic's features of every hidden hand, the
batched agents' decisions against the scalar agents, and batched duplicate play."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import batched_states

from agents.batched import BatchedExpert, BatchedRandom, BatchedSimple, RowByRow
from agents.expert import ExpertAgent
from agents.simple import SimpleAgent
from arena.batched_play import play_matches_batched
from arena.matches import play_match, seatings
from hgin_env.batch import BatchGame, privileged_size, privileged_slices
from hgin_env.batch.vector import HollywoodVectorEnv, LearnerBatch
from hgin_env.cards import NUM_CARDS, mask_to_cards
from hgin_env.melds import min_deadwood
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules
from train.envs import BatchedVecEnv

FORMATS = ["hollywood_three_hand", "gin_three_hand", "hollywood_partnership", "gin_partnership"]


def short(profile: str, target: int = 40):
    return get_rules(profile).replace(target=target, name=profile)


def _random_actions(rng, masks):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


@pytest.mark.parametrize("profile,partner", [("hollywood_three_hand", None), ("gin_partnership", None),
                                             ("hollywood_partnership", "simple")])
def test_learner_acts_at_its_seats_and_is_paid_the_seats_outcome(profile, partner):
    rules = short(profile)
    partner_agent = BatchedSimple(seed=9, layout=ObservationLayout.for_rules(rules)) if partner else None
    core = LearnerBatch(6, [BatchedSimple(seed=0, layout=ObservationLayout.for_rules(rules))], rules=rules,
                        reward="match", seed=0, partner=partner_agent)
    rng = np.random.default_rng(0)
    finished = []
    seats_seen = set()
    for _ in range(900):
        masks = core.action_masks()  # the opponents' first moves wait for the first query
        seat = core.batch.current_seat
        if rules.format == "partnership" and partner is None:
            assert ((seat == core.seat) | (seat == (core.seat + 2) % 4)).all()
            seats_seen |= set((seat - core.seat) % 4)
        else:
            assert (seat == core.seat).all()
        assert core.observations().shape == (6, ObservationLayout.for_rules(rules).size)
        rewards, terminated, truncated, done = core.step(_random_actions(rng, masks))
        assert set(np.flatnonzero(terminated | truncated)) == set(done)
        for info in done.values():
            s = info["episode_summary"]
            assert info["learner"] == f"player_{s['seat']}"
            lose = -0.5 if rules.format == "three_hand" else -1.0
            want = 1.0 if s["won"] else lose if s["lost"] else 0.0
            assert info["episode"]["r"] == pytest.approx(want)  # the match reward, once per episode
            finished.append(s)
    assert len(finished) >= 6
    assert {s["seat"] for s in finished} == set(range(rules.num_players))
    if rules.format == "partnership" and partner is None:
        assert seats_seen == {0, 2}  # the learner played both seats of its team


def test_partner_is_refused_outside_a_partnership():
    with pytest.raises(ValueError, match="only format='partnership' has partners"):
        LearnerBatch(2, [BatchedRandom(seed=0)], rules="hollywood_three_hand", partner=BatchedRandom(seed=1))


def test_gymnasium_vector_env_in_a_format():
    rules = short("hollywood_three_hand")
    env = HollywoodVectorEnv(4, [BatchedSimple(seed=0, layout=ObservationLayout.for_rules(rules))], rules=rules,
                             reward="points", match_bonus=1.0, seed=0)
    obs, info = env.reset(seed=1)
    assert obs.shape == (4, 434) and env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        obs, _, term, trunc, info = env.step(_random_actions(rng, info["action_mask"]))
        assert env.observation_space.contains(obs)
        ended += int((term | trunc).sum())
    assert ended > 0


@pytest.mark.parametrize("profile,opponents", [("hollywood_three_hand", ["simple"]),
                                               ("hollywood_partnership", ["self"])])
def test_sb3_vec_env_in_a_format_with_a_privileged_critic(profile, opponents):
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy

    rules = get_rules(profile)
    width = privileged_size(rules.format)
    env = BatchedVecEnv(8, opponents, rules=rules, seed=1, privileged=True,
                        partner_spec="expert" if rules.format == "partnership" else None)
    assert env.observation_space.shape == (ObservationLayout.for_rules(rules).size + width,)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=16, batch_size=64, n_epochs=1, device="cpu", seed=0,
                        policy_kwargs={"hidden": 32, "summary": 16, "card_hidden": 8, "privileged": width,
                                       "format": rules.format, "columns": rules.columns})
    env.set_live_model(model)
    model.learn(256)
    assert model.num_timesteps >= 256


def test_privileged_features_hold_every_hidden_hand():
    assert privileged_size("three_hand") == privileged_size("duel") == 2 * NUM_CARDS + 1
    assert [name for name, _ in privileged_slices("partnership")][3:] == [
        "partner_hand", "partner_opponent_hand", "partner_deadwood", "partner_opponent_deadwood"]
    batch = BatchGame(16, rules="hollywood_partnership", seed=4)
    agent = BatchedRandom(seed=4)
    checked = finished_partner = 0
    for _ in range(400):
        obs, masks = batch.observations(), batch.legal_action_masks()
        priv = batch.privileged_observations()
        assert priv.shape == (16, privileged_size("partnership"))
        for i in range(0, 16, 3):
            t = int(batch.acting_table[i])
            p = int(batch.current_player[t])
            own = set(np.flatnonzero(obs[i, :NUM_CARDS]))
            opp = set(mask_to_cards(int(batch.hands[t, 1 - p])))
            assert set(np.flatnonzero(priv[i, :NUM_CARDS])) == opp and not own & opp
            other = t ^ 1
            base = 2 * NUM_CARDS + 1
            if batch.phase[other] >= 3:  # the partner's hand is over: nothing there
                assert not priv[i, base:].any()
                finished_partner += 1
                continue
            partner = (int(batch.current_seat[i]) + 2) % 4
            pp = list(batch.table_seats[other]).index(partner)
            partner_hand = mask_to_cards(int(batch.hands[other, pp]))
            their_opp = mask_to_cards(int(batch.hands[other, 1 - pp]))
            assert set(np.flatnonzero(priv[i, base:base + NUM_CARDS])) == set(partner_hand)
            assert set(np.flatnonzero(priv[i, base + NUM_CARDS:base + 2 * NUM_CARDS])) == set(their_opp)
            assert priv[i, base + 2 * NUM_CARDS] == pytest.approx(min(min_deadwood(partner_hand), 100) / 100)
            assert priv[i, base + 2 * NUM_CARDS + 1] == pytest.approx(min(min_deadwood(their_opp), 100) / 100)
            checked += 1
        batch.step(agent.act(obs, masks))
    assert checked > 1000 and finished_partner > 0


def _format_states(profile: str, n: int = 32, steps: int = 96, seed: int = 0):
    """(observations, masks) of the acting seats of batched matches of ``profile``: the
    Expert, Simple and Random at the seats, matches to a low target so sheets move."""
    rules = short(profile, target=60)
    layout = ObservationLayout.for_rules(rules)
    batch = BatchGame(n, rules=rules, seed=seed)
    players = [BatchedExpert(seed=1, layout=layout), BatchedSimple(seed=2, layout=layout),
               BatchedRandom(seed=3, layout=layout)]
    who = (np.arange(n)[:, None] + np.arange(rules.num_players)[None, :]) % 3  # who[i, seat]
    obs, masks = batched_states(batch, players, lambda step: who[np.arange(n), batch.current_seat], steps)
    return rules, layout, obs, masks


@pytest.mark.parametrize("profile", FORMATS)
def test_batched_expert_and_simple_decide_as_the_scalar_agents_in_every_format(profile):
    rules, layout, obs, masks = _format_states(profile)
    assert len(obs) >= 3000
    expert = BatchedExpert(seed=0, layout=layout).act(obs, masks)
    np.testing.assert_array_equal(expert, RowByRow(ExpertAgent(seed=0, layout=layout)).act(obs, masks))
    simple = BatchedSimple(seed=1, layout=layout).act(obs, masks)
    scalar = SimpleAgent(seed=1, layout=layout)
    compared = 0
    for o, m, b in zip(obs, masks, simple, strict=True):
        assert m[b]
        if layout.phase(o) == "discard":
            dd = np.where(m[:52], layout.get(o, "discard_deadwood"), np.inf)
            if (dd == dd.min()).sum() > 1:
                continue  # a random tie: both pick uniformly among the same cards
        assert scalar({"observation": o, "action_mask": m.astype(np.int8)}) == b
        compared += 1
    assert compared >= 2000  # (of the 3,072)


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "gin_partnership"])
def test_batched_duplicate_rows_equal_play_match_in_a_format(profile):
    rules = short(profile)
    layout = ObservationLayout.for_rules(rules)
    other = {"lookahead": 0.3, "knock_late": 3}  # a second deterministic agent
    rows = play_matches_batched(BatchedExpert(seed=0, layout=layout), BatchedExpert(seed=0, layout=layout, **other),
                                [5], rules, "expert", "expert2")
    want = [play_match(ExpertAgent(seed=0, layout=layout), ExpertAgent(seed=0, layout=layout, **other), 5, k,
                       rules, "expert", "expert2") for k in range(len(seatings(rules.format)))]
    assert len(rows) == len(want)
    for got, expected in zip(rows, want, strict=True):
        assert {k: v for k, v in got.items() if k != "seconds"} == \
            {k: v for k, v in expected.items() if k != "seconds"}
