"""The single-agent Gymnasium adapter in the three-hand and partnership formats."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents.ppo import CheckpointError, PPOAgent, checkpoint_meta, save_checkpoint
from hgin_env.envs.single_agent import SingleAgentEnv, UniformRandomOpponent
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules
from hgin_env.summary import match_summary

FORMATS = ["hollywood_three_hand", "hollywood_partnership", "gin_three_hand", "gin_partnership"]


def short(profile: str, target: int = 40) -> dict:
    """A profile with a low target: matches of a few hands."""
    return get_rules(profile).replace(target=target, name=profile).to_dict()


def play(env: SingleAgentEnv, seed: int, policy_seed: int = 0) -> tuple[list, dict]:
    """One episode with uniformly random learner moves: the trace and the last info."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    trace: list = [info["learner"], obs.tobytes()]
    done = False
    while not done:
        assert env.aec.agent_selection == env.learner  # the learner always acts
        mask = env.action_masks()
        assert mask.any() and np.array_equal(mask, env.aec.observe(env.learner)["action_mask"] == 1)
        legal = np.flatnonzero(mask)
        obs, r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
        trace += [obs.tobytes(), r, term, trunc]
        done = term or trunc
    return trace, info


@pytest.mark.parametrize("profile", FORMATS)
def test_gymnasium_env_checker_passes_for_every_format(profile):
    env = SingleAgentEnv(rules=profile, reward="points")
    check_env(env, skip_render_check=True)
    layout = ObservationLayout.for_rules(get_rules(profile))
    assert env.observation_space.shape == (layout.size,)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (layout.size,) and env.observation_space.contains(obs)


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "gin_partnership"])
def test_seeded_reset_reproduces_the_episode(profile):
    def run(seed):
        env = SingleAgentEnv(opponent=UniformRandomOpponent(), rules=short(profile), reward="columns")
        return play(env, seed)

    a, info_a = run(5)
    b, info_b = run(5)
    assert a == b and info_a["episode_summary"] == info_b["episode_summary"]
    c, _ = run(6)
    assert c != a


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_every_seat_is_drawn_and_fixed_seats_hold(profile):
    n = get_rules(profile).num_players
    env = SingleAgentEnv(rules=short(profile))
    seats = {env.reset(seed=s)[1]["learner"] for s in range(30)}
    assert seats == {f"player_{i}" for i in range(n)}
    for seat in range(n):
        fixed = SingleAgentEnv(rules=short(profile), seat=seat)
        _, info = fixed.reset(seed=seat)
        assert info["learner"] == f"player_{seat}" and fixed.seat == seat
    with pytest.raises(ValueError, match=f"seat in 0..{n - 1}"):
        SingleAgentEnv(rules=profile, seat=n)


def test_episode_hand_is_refused_for_formats():
    for profile in ("hollywood_three_hand", "hollywood_partnership"):
        fmt = get_rules(profile).format
        with pytest.raises(ValueError, match=f"episode='hand' with format='{fmt}'"):
            SingleAgentEnv(rules=profile, episode="hand")


def test_partner_option():
    with pytest.raises(ValueError, match="partner"):
        SingleAgentEnv(rules="hollywood_three_hand", partner=UniformRandomOpponent())
    calls: list[int] = []

    def partner(obs):
        calls.append(int(np.flatnonzero(obs["observation"][ObservationLayout(3, "partnership")
                                                         .slice("seat")])[0]))
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[0])

    env = SingleAgentEnv(rules=short("hollywood_partnership"), seat=1, partner=partner)
    play(env, 3)
    assert calls and set(calls) == {3}  # the partner agent plays only the learner's partner
    assert env.seat_agents[3] is partner and env.seat_agents[1] is None
    assert env.seat_agents[0] is env.seat_agents[2] is env.opponent


def test_three_hand_reward_is_the_seats_reward_and_summary_matches_the_sheet():
    env = SingleAgentEnv(rules=short("hollywood_three_hand"), reward="points", seat=2)
    sat_out = 0
    for seed in range(3):
        trace, info = play(env, seed)
        rewards = [x for x in trace[2:][1::4]]
        match = env.aec.match
        summary = info["episode_summary"]
        # points mode: the seat's hand points won minus lost, / 100
        assert sum(rewards) == pytest.approx((summary["points"] - summary["opponent_points"]) / 100)
        assert summary == match_summary(match, 2)
        assert summary["column_totals"] == match.sheet.columns[2].tolist()
        assert summary["won"] == (match.match_winner == 2)
        assert summary["hands"] == sum(1 for h in match.hand_history if 2 in h.seats)
        assert summary["match_hands"] == len(match.hand_history)
        sat_out += summary["match_hands"] - summary["hands"]
    assert sat_out > 0  # the learner sat some hands out, and was never asked to act then


@pytest.mark.parametrize("reward", ["match", "points"])
def test_partners_share_the_team_reward(reward):
    env = SingleAgentEnv(opponent=UniformRandomOpponent(7), rules=short("hollywood_partnership"),
                         reward=reward, seat=1)
    paid: list[dict] = []
    play_step = env.aec._play  # what step() and play_checked() both run

    def recording_step(agent, action, checked=False):  # every AEC step's rewards, the opponents' too
        play_step(agent, action, checked)
        paid.append(dict(env.aec.rewards))

    env.aec._play = recording_step
    trace, info = play(env, 4)
    assert all(r["player_1"] == r["player_3"] == -r["player_0"] == -r["player_2"] for r in paid)
    total = sum(trace[2:][1::4])
    assert total == pytest.approx(sum(r["player_1"] for r in paid))
    summary = info["episode_summary"]
    match = env.aec.match
    if reward == "match":
        assert total == (1.0 if summary["won"] else -1.0 if summary["lost"] else 0.0)
    else:
        team = (summary["team_points"] - summary["opponent_team_points"]) / 100
        assert total == pytest.approx(team)
    assert summary["row"] == 1 and summary["won"] == (match.match_winner == 1)
    assert summary["column_totals"] == match.sheet.columns[1].tolist()
    assert summary["opponent_column_totals"] == match.sheet.columns[0].tolist()
    assert summary["rounds"] == len(match.round_history) == summary["match_hands"] // 2


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_maskable_ppo_learns_and_checkpoints_load_with_the_format_layout(profile, tmp_path):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.envs import TrainingEnv

    torch.set_num_threads(1)
    rules = get_rules(short(profile))
    venv = DummyVecEnv([lambda: TrainingEnv(["simple", "random"], rules=rules, seed=0)])
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=1, device="cpu",
                        seed=0, verbose=0, policy_kwargs={"net_arch": [32]})
    model.learn(300)
    assert model.num_timesteps >= 300
    path = save_checkpoint(model, tmp_path / "m.zip", checkpoint_meta(rules))
    layout = ObservationLayout.for_rules(rules)
    agent = PPOAgent.load(path, layout=layout)
    env = SingleAgentEnv(rules=rules)
    env.reset(seed=0)
    for _ in range(20):  # the loaded policy reads the format's observations
        obs = {"observation": env.aec.observe(env.learner)["observation"],
               "action_mask": env.action_masks().astype(np.int8)}
        _, _, term, trunc, _ = env.step(agent(obs))
        if term or trunc:
            break
    with pytest.raises(CheckpointError, match="layout"):
        PPOAgent.load(path, layout=ObservationLayout.for_rules(get_rules("hollywood")))


def test_reset_redeals_a_match_that_ends_before_the_learners_first_decision():
    from hgin_env import actions as A

    def knocker(obs):  # ends hands as soon as it can
        legal = np.flatnonzero(obs["action_mask"])
        knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        return int(knocks[0] if knocks else legal[0])

    rules = get_rules("gin_three_hand").replace(target=1, name="one_hand_three").to_dict()
    env = SingleAgentEnv(opponent=knocker, rules=rules, seat=0)
    deals = 0
    reset = env.aec.reset

    def counting_reset(**kwargs):
        nonlocal deals
        deals += 1
        reset(**kwargs)

    env.aec.reset = counting_reset
    for seed in range(12):
        env.reset(seed=seed)
        assert env.aec.agent_selection == "player_0" and env.action_masks().any()
        assert not env.aec.match.is_over
    assert deals > 12  # some first matches ended while the learner sat out: dealt again


@pytest.mark.parametrize("reward", ["columns", "match"])
def test_episode_rewards_add_up_to_the_seats_return(reward):
    # target 25: a column can be decided while the learner sits the first hand out; what the
    # seat earned then comes with its first step
    rules = get_rules("hollywood_three_hand").replace(target=25, name="short_three").to_dict()
    env = SingleAgentEnv(opponent=UniformRandomOpponent(1), rules=rules, reward=reward, seat=0)
    paid: list[float] = []
    play_step, reset = env.aec._play, env.aec.reset  # _play: what step() and play_checked() run

    def recording_step(agent, action, checked=False):
        play_step(agent, action, checked)
        paid.append(env.aec.rewards["player_0"])

    def recording_reset(**kwargs):
        paid.clear()
        reset(**kwargs)

    env.aec._play, env.aec.reset = recording_step, recording_reset
    for seed in range(6):
        trace, _ = play(env, seed)
        assert sum(trace[2:][1::4]) == pytest.approx(sum(paid))
