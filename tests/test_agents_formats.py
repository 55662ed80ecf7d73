"""Random, Simple and Expert play every seat of every format through the layout object;
the PPO loader refuses a checkpoint whose layout does not fit the format."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.ppo import SHIPPED_POLICY, CheckpointError, PPOAgent, read_meta, shipped_policy
from hgin_env import hollywood_gin_v0
from hgin_env.observation import ObservationLayout
from hgin_env.rules import get_rules


@pytest.mark.parametrize("profile", ["gin_three_hand", "gin_partnership", "hollywood_three_hand",
                                     "hollywood_partnership"])
def test_heuristics_play_every_seat(profile):
    rules = get_rules(profile).replace(target=40, name=profile)
    layout = ObservationLayout.for_rules(rules)
    n = rules.num_players
    names = ["random", "simple", "expert", "expert"][:n]
    players = {f"player_{i}": make_agent(names[i], seed=i, layout=layout) for i in range(n)}
    env = hollywood_gin_v0.env(rules=rules.to_dict())
    acted = set()
    for seed in range(11, 14):  # a short match may end before the third seat plays
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = players[agent](obs)
            assert obs["action_mask"][action] == 1
            acted.add(agent)
            env.step(action)
        assert info["scoreboard"]["match_over"]
    assert acted == set(env.possible_agents)


def test_agents_take_a_layout_not_columns():
    layout = ObservationLayout.for_rules(get_rules("gin_partnership"))
    agent = make_agent("expert", seed=0, layout=layout)
    assert agent.layout == layout and agent.columns == 1
    with pytest.raises(ValueError, match="disagrees"):
        make_agent("simple", columns=3, layout=layout)
    with pytest.raises(ValueError, match="value='critic' only"):  # the rollout search plays duels
        make_agent("search:value=rollout", rules="gin_three_hand")


def test_expert_reads_format_observation_like_duel():
    """The format layouts keep the duel slices at the duel offsets: the Expert's view of a
    partnership observation is the duel view of its table plus the team sheet."""
    env = hollywood_gin_v0.raw_env(rules="hollywood_partnership")
    env.reset(seed=2)
    from agents.view import parse

    obs = env.observe(env.agent_selection)
    view = parse(obs, ObservationLayout.for_rules(env.rules))
    game, player = env.match.seat_view(int(env.agent_selection[-1]))
    assert view.hand == game.hands[player]
    with pytest.raises(ValueError, match="size"):
        parse(obs, 3)  # the duel layout does not fit a partnership observation


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_ppo_loader_refuses_other_layout(profile):
    layout = ObservationLayout.for_rules(get_rules(profile))
    with pytest.raises(CheckpointError) as err:
        PPOAgent.load(SHIPPED_POLICY, layout=layout)
    message = str(err.value)
    assert "\n" not in message and "duel layout" in message and f"{layout.format} layout" in message
    with pytest.raises(CheckpointError):
        make_agent(f"ppo:{SHIPPED_POLICY}", layout=layout)
    np.testing.assert_equal(ObservationLayout.for_rules(get_rules("hollywood")).size, 394)


@pytest.mark.parametrize("profile", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
def test_ppo_picks_the_shipped_policy_of_the_layout(profile):
    """``ppo:`` without a path loads the shipped policy trained for the game's layout, and it
    plays legal moves in every seat of that format."""
    rules = get_rules(profile).replace(target=25, name=profile)
    layout = ObservationLayout.for_rules(rules)
    agent = make_agent("ppo:", layout=layout)
    assert agent.meta["observation_format"] == layout.format
    assert agent.meta["observation_size"] == layout.size
    assert agent.meta == read_meta(shipped_policy(layout))
    env = hollywood_gin_v0.env(rules=rules.to_dict())
    env.reset(seed=3)
    seats = set()
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agent(obs)
        assert obs["action_mask"][action] == 1
        seats.add(name)
        env.step(action)
    assert len(seats) == rules.num_players


@pytest.mark.parametrize("profile", ["gin_us_uk", "gin_three_hand", "gin_partnership"])
def test_shipped_policies_are_hollywood_only(profile):
    """The shipped policies are trained for three Hollywood columns; a one-column game's
    observation has another size, so ``ppo:`` refuses it in one line naming both."""
    layout = ObservationLayout.for_rules(get_rules(profile))
    with pytest.raises(CheckpointError) as err:
        make_agent("ppo:", layout=layout)
    message = str(err.value)
    assert "\n" not in message and "3 column(s)" in message and "1 column(s)" in message
