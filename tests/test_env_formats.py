"""The env for every format: duel trajectories bit-identical to the env before it went
through ``Match``; three-hand and partnership agents, masks, observations, rewards, infos;
PettingZoo's api_test and seed_test per format."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from hgin_env import hollywood_gin_v0
from hgin_env.observation import ObservationLayout, decode, encode
from hgin_env.rules import PROFILES, get_rules
from tests.duel_trace import trace

FORMAT_PROFILES = ["hollywood_three_hand", "hollywood_partnership", "gin_three_hand",
                   "gin_partnership"]
RECORDED = json.loads((Path(__file__).parent / "data" / "duel_trace.json").read_text())


#: The options that give back the profiles RULES_VERSION 2 changed as they were when the
#: traces were recorded (version 1): gin_classic offered the first upcard, oklahoma kept the
#: Hollywood sheet. The profile's name is kept: it is part of the infos.
RULES_V1_OPTIONS = {"gin_classic": {"first_upcard_offer": True}, "oklahoma": {"columns": 3}}


@pytest.mark.parametrize("row", RECORDED, ids=lambda r: f"{r['seed']}-{r['kwargs']}")
def test_duel_trajectories_bit_identical_to_recorded(row):
    kwargs = dict(row["kwargs"])
    name = kwargs.get("rules")
    if name in RULES_V1_OPTIONS:
        # Version 2 plays these profiles differently (RULES.md §12); the version-1 game is
        # still the same options away, bit for bit.
        assert trace(row["seed"], kwargs) != (row["digest"], row["steps"])
        kwargs["rules"] = dataclasses.replace(PROFILES[name], **RULES_V1_OPTIONS[name])
    assert trace(row["seed"], kwargs) == (row["digest"], row["steps"])


def _play(env, seed: int, check=None) -> tuple[dict, dict, int]:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps, info = 0, {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, agent, obs)
        legal = np.flatnonzero(obs["action_mask"])
        knocks = legal[(legal >= 52) & (legal < 104)]
        pick = knocks if len(knocks) and rng.random() < 0.9 else legal
        env.step(int(pick[rng.integers(len(pick))]))
        steps += 1
    return totals, info, steps


def _small(profile: str) -> dict:
    """The profile with a lower target: short matches for the tests."""
    return get_rules(profile).replace(target=40, name=profile).to_dict()


@pytest.mark.parametrize("profile", FORMAT_PROFILES)
def test_agents_masks_and_observations(profile):
    rules = get_rules(profile)
    env = hollywood_gin_v0.env(rules=_small(profile))
    n = rules.num_players
    layout = ObservationLayout.for_rules(rules)
    assert env.possible_agents == [f"player_{i}" for i in range(n)]
    seen_sitting_out = set()

    def check(env, agent, obs):
        match = env.unwrapped.match
        seat = int(agent.split("_")[1])
        assert match.current_seat == seat
        assert obs["observation"].shape == (layout.size,)
        space = env.observation_space(agent)["observation"]
        for other in env.agents:
            o = env.observe(other)
            assert space.contains(o["observation"]), other
            if other != agent:
                assert not o["action_mask"].any()
        if rules.format == "three_hand":
            sitter = match.sitting_out
            assert sitter != seat
            seen_sitting_out.add(sitter)
            d = decode(env.observe(f"player_{sitter}")["observation"], rules.columns,
                       rules.target, rules.format)
            assert d["hand"] == "" and d["sitting_out"] == sitter and d["opponent_seat"] is None
        # the table part is exactly the duel encoding of the seat's table
        game, player = match.seat_view(seat)
        start = layout.slice("own_columns").start
        assert np.array_equal(obs["observation"][:start], encode(game, player)[:start])

    for seed in (1, 2):  # two matches: the sitter changes within or across them
        _play(env, seed, check)
    if rules.format == "three_hand":
        assert len(seen_sitting_out) >= 2


def test_partner_cards_never_observed():
    """Changing the partner's hidden cards (and every other table's) leaves a seat's
    observation unchanged: only its own table's cards and public facts enter."""
    env = hollywood_gin_v0.raw_env(rules="hollywood_partnership")
    for seed in range(5, 12):
        env.reset(seed=seed)
        match = env.match
        before = env.observe("player_0")["observation"].copy()
        other_table = match.tables[1 - match.table_of(0)]  # the partner's table
        other_table.game.hands[0], other_table.game.hands[1] = 0, 0  # nonsense, unseen
        assert np.array_equal(env.observe("player_0")["observation"], before)


@pytest.mark.parametrize("profile", FORMAT_PROFILES)
@pytest.mark.parametrize("reward", ["match", "columns", "points"])
def test_rewards_zero_sum_partners_identical(profile, reward):
    rules = get_rules(profile)
    totals, info, _ = _play(hollywood_gin_v0.env(rules=_small(profile), reward=reward), 2)
    assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
    if rules.format == "partnership":
        assert totals["player_0"] == totals["player_2"]
        assert totals["player_1"] == totals["player_3"]
    winner = info["match_winner"]  # the winning row's label: player_i, team_t
    if reward == "match" and winner is not None:
        board = info["scoreboard"]
        seats = board["teams"][board["labels"].index(winner)] if rules.format == "partnership" else [winner]
        for a in totals:
            assert totals[a] == (1.0 if a in seats else (-0.5 if rules.format == "three_hand" else -1.0))


@pytest.mark.parametrize("profile", FORMAT_PROFILES)
def test_infos_hand_round_scoreboard(profile):
    rules = get_rules(profile)
    env = hollywood_gin_v0.env(rules=_small(profile))
    env.reset(seed=4)
    assert "scoreboard" in env.infos["player_0"]
    hands = rounds = 0
    last_hands = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if info["hands_played"] != last_hands:
            last_hands = info["hands_played"]
            hand = info["hand"]
            assert {"table", "seats", "winner", "points", "kind"} <= set(hand)
            assert hand["winner"] is None or hand["winner"] in hand["seats"]
            hands += 1
        board = info["scoreboard"]
        assert len(board["columns"]) == (2 if rules.format == "partnership" else 3)
        assert len(board["column_winners"]) == rules.columns
        if rules.format == "partnership":
            assert board["teams"] == [["player_0", "player_2"], ["player_1", "player_3"]]
            if "round" in info:
                rounds += 1
                r = info["round"]
                assert {"winner", "points", "team_points"} <= set(r)
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[-1] if legal[-1] < 104 else legal[0]))
    assert hands > 0
    if rules.format == "partnership":
        assert rounds > 0


def test_episode_hand_is_duel_only():
    with pytest.raises(ValueError, match="duel only"):
        hollywood_gin_v0.env(rules="gin_three_hand", episode="hand")


#: What PettingZoo's api_test says of every env whose observation is its masked dict (a Dict
#: space of the vector and the action mask, the form PettingZoo documents for action masks):
#: the only warnings it may give; any other is an error.
KNOWN_API_TEST_WARNINGS = ("Observation is not a NumPy array",
                           "Observation space for each agent probably should be gymnasium.spaces.box")


@contextlib.contextmanager
def only_known_api_test_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in KNOWN_API_TEST_WARNINGS:
            warnings.filterwarnings("ignore", message=re.escape(text), category=UserWarning)
        yield


@pytest.mark.parametrize("profile", ["gin_three_hand", "gin_partnership"])
def test_api_and_seed(profile):
    with only_known_api_test_warnings():
        api_test(hollywood_gin_v0.env(rules=profile), num_cycles=200)
        api_test(hollywood_gin_v0.raw_env(rules=profile), num_cycles=200)
        seed_test(functools.partial(hollywood_gin_v0.env, rules=profile), num_cycles=200)


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_api_hollywood_formats(profile):
    with only_known_api_test_warnings():
        api_test(hollywood_gin_v0.env(rules=profile), num_cycles=200)
        seed_test(functools.partial(hollywood_gin_v0.env, rules=profile), num_cycles=100)


@pytest.mark.parametrize("profile", FORMAT_PROFILES)
def test_shaping_with_formats(profile):
    totals, _, steps = _play(hollywood_gin_v0.env(rules=_small(profile), shaping=1.0), 3)
    assert steps > 0 and all(np.isfinite(list(totals.values())))


def test_single_agent_adapter_serves_formats_but_not_their_hands():
    from hgin_env.envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv(rules="gin_partnership")  # tests/test_adapter_formats.py tests it
    assert env.observation_space.shape == (ObservationLayout.for_rules(get_rules("gin_partnership")).size,)
    with pytest.raises(ValueError, match="episode='hand' with format='partnership'"):
        SingleAgentEnv(rules="gin_partnership", episode="hand")


def test_layouts_versioned_and_duel_unchanged():
    duel = ObservationLayout.for_rules(get_rules("hollywood"))
    assert duel == ObservationLayout(3) and duel.size == 394 and duel.version == 1
    for profile in FORMAT_PROFILES:
        rules = get_rules(profile)
        layout = ObservationLayout.for_rules(rules)
        base = ObservationLayout(rules.columns)
        assert layout.format == rules.format and layout.version == 1
        for name, sl in base.slices.items():  # the duel slices at the duel offsets
            assert layout.slice(name) == sl
        assert layout.size > base.size


@pytest.mark.parametrize("profile", ["gin_three_hand", "gin_partnership"])
def test_copy_mid_match_and_illegal_move(profile):
    import copy
    import pickle

    env = hollywood_gin_v0.env(rules=profile)
    env.reset(seed=8)
    rng = np.random.default_rng(0)
    for _ in range(150):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(150):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        obs = env.observe(env.agent_selection)
        action = int(np.flatnonzero(obs["action_mask"])[0])
        for twin in twins:
            assert twin.agent_selection == env.agent_selection
            assert np.array_equal(twin.observe(twin.agent_selection)["observation"], obs["observation"])
            twin.step(action)
        env.step(action)
    # an illegal move ends the game: -1 for the offender, every mask zero
    env.reset(seed=9)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    env.step(illegal)  # logs PettingZoo's illegal-move warning
    assert env._cumulative_rewards[agent] == -1.0
    assert all(env.terminations.values())
    assert not any(env.observe(a)["action_mask"].any() for a in env.agents)


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_observation_ignores_hidden_cards(profile):
    """Reshuffling what the acting seat cannot see (its opponent's unseen cards and the
    stock at its table) leaves every seat's observation of that seat unchanged."""
    from hgin_env.match import Match
    from hgin_env.observation import encode_seat
    from tests.helpers import swap_hidden

    rng = np.random.default_rng(1)
    match = Match(profile, seed=4)
    checked = 0
    while not match.is_over and checked < 300:
        seat = match.current_seat
        other = match.clone()
        table = other.tables[other.current_table]
        table.game = swap_hidden(table.game, rng)
        assert np.array_equal(encode_seat(match, seat), encode_seat(other, seat))
        checked += 1
        legal = match.legal_actions()
        match.apply(int(legal[rng.integers(len(legal))]))
    assert checked == 300


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_cached_context_equals_fresh(profile):
    from hgin_env.match import Match
    from hgin_env.observation import CONTEXT_CACHE, encode_seat

    rng = np.random.default_rng(3)
    match = Match(get_rules(profile).replace(target=40, name=profile), seed=6)
    while not match.is_over:
        for seat in range(match.num_players):
            cached = encode_seat(match, seat)
            CONTEXT_CACHE.clear()
            assert np.array_equal(cached, encode_seat(match, seat))
        legal = match.legal_actions()
        knocks = [a for a in legal if 52 <= a < 104]
        match.apply(int(rng.choice(knocks or legal)))
