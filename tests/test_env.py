"""The PettingZoo AEC environment hollywood_gin_v0."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from hgin_env import actions as A
from hgin_env import hollywood_gin_v0
from hgin_env.cards import parse_card
from hgin_env.game import build_deck
from hgin_env.observation import ObservationLayout, decode


def random_policy(rng, prefer_knock=True):
    def act(obs):
        legal = np.flatnonzero(obs["action_mask"])
        if prefer_knock:
            knocks = legal[(legal >= A.KNOCK) & (legal < A.DRAW_STOCK)]
            if len(knocks):
                legal = knocks
        return int(legal[rng.integers(len(legal))])
    return act


def run_match(env, seed, policy):
    env.reset(seed=seed)
    actions = []
    for _agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else policy(obs)
        actions.append(action)
        env.step(action)
    return actions, info


def test_pettingzoo_api_test():
    api_test(hollywood_gin_v0.env(), num_cycles=3000)
    api_test(hollywood_gin_v0.env(episode="hand", reward="points"), num_cycles=3000)


def test_pettingzoo_seed_test():
    seed_test(hollywood_gin_v0.env, num_cycles=500)


def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: hollywood_gin_v0.env(render_mode=render_mode))


def test_registered_with_pettingzoo():
    import pettingzoo

    env = pettingzoo.make("aec", hollywood_gin_v0.ENV_ID)
    env.reset(seed=0)
    assert env.agent_selection in ("player_0", "player_1")


def test_spaces_and_metadata():
    env = hollywood_gin_v0.env()
    env.reset(seed=1)
    assert env.metadata["name"] == "hollywood_gin_v0"
    assert env.action_space("player_0").n == A.NUM_ACTIONS == 108
    space = env.observation_space("player_1")
    assert space["observation"].shape == (ObservationLayout(3).size,) == (394,)
    obs = env.observe(env.agent_selection)
    assert space.contains(obs)
    other = "player_1" if env.agent_selection == "player_0" else "player_0"
    assert env.observe(other)["action_mask"].sum() == 0


def test_docstring_slice_table_matches_layout():
    doc = hollywood_gin_v0.__doc__
    slices = ObservationLayout(3).slices
    for name, sl in slices.items():
        m = re.search(rf"^\| {name}\s+\| (\d+)(?:\.\.(\d+))?\s+\|", doc, re.M)
        assert m, f"slice {name} missing from the docstring table"
        start, stop = int(m.group(1)), int(m.group(2) or m.group(1)) + 1
        assert (start, stop) == (sl.start, sl.stop), name


def test_hundred_seeded_matches_end_with_valid_scoreboard_and_replay():
    # raw_env: the same AEC API without PettingZoo's wrappers (which api_test covers), ~3x faster.
    env = hollywood_gin_v0.raw_env()
    for seed in range(100):
        actions, info = run_match(env, seed, random_policy(np.random.default_rng(seed)))
        board = info["scoreboard"]
        assert board["match_over"] and info["match_winner"] in ("player_0", "player_1")
        won = [sum(w == p for w in board["column_winners"]) for p in ("player_0", "player_1")]
        assert max(won) >= 2 and info["match_winner"] == ("player_0" if won[0] > won[1] else "player_1")
        for p, row in enumerate(board["columns"]):
            for j, total in enumerate(row):
                if board["column_winners"][j] == f"player_{p}":
                    assert total >= 100
        if seed % 25 == 0:  # replay from the seed: the same match
            again, info2 = run_match(env, seed, random_policy(np.random.default_rng(seed)))
            assert again == actions and info2["scoreboard"] == board


def test_uniform_random_match_terminates():
    env = hollywood_gin_v0.env()
    _, info = run_match(env, 3, random_policy(np.random.default_rng(3), prefer_knock=False))
    assert info["scoreboard"]["match_over"]


def _hidden_info_deck(variant: int) -> list[int]:
    """Same hand for player_1 (non-dealer), upcard and discards; different opponent/stock."""
    mine = "AC 4D 7H TS KC 2S 5H 8D JC QH"
    common = "3C 6D 9H QS"  # the opponent holds these in both deals and discards them
    hidden = ["2D 5C 8H JS KD 3H", "4S 7C TD 2H 6C 9S"][variant]
    opponent = common + " " + hidden
    deck = build_deck(mine, opponent, "6S")
    stock = deck[21:]
    np.random.default_rng(variant).shuffle(stock)  # other stock order
    return deck[:21] + stock


def test_observations_never_contain_hidden_information():
    envs = []
    for variant in (0, 1):
        env = hollywood_gin_v0.raw_env()
        env.reset(seed=0, options={"deck": _hidden_info_deck(variant), "first_dealer": 0})
        envs.append(env)
    # player_1 (non-dealer) passes, dealer player_0 passes, player_1 draws (different cards!),
    # so instead player_1 takes from the discard pile whenever it can, and player_0 always
    # draws from the stock and throws one of its common cards.
    common = [parse_card(t) for t in "3C 6D 9H QS".split()]
    script = [A.TAKE_DISCARD, A.DISCARD + parse_card("KC")]
    mine = [parse_card(t) for t in "AC 4D 7H TS".split()]
    for card, own in zip(common, mine, strict=True):
        script += [A.DRAW_STOCK, A.DISCARD + card, A.TAKE_DISCARD, A.DISCARD + own]
    steps = 0
    for action in script:
        obs = [e.observe("player_1")["observation"] for e in envs]
        np.testing.assert_array_equal(obs[0], obs[1])
        agents = {e.agent_selection for e in envs}
        assert len(agents) == 1
        if agents == {"player_1"}:
            masks = [e.observe("player_1")["action_mask"] for e in envs]
            np.testing.assert_array_equal(masks[0], masks[1])
        for e in envs:
            assert e.action_mask()[action], f"scripted action {A.describe_action(action)} illegal"
            e.step(action)
        steps += 1
    assert steps == len(script)
    # The opponent's hands really differ.
    assert envs[0].game.hands[0] != envs[1].game.hands[0]
    assert envs[0].game.stock != envs[1].game.stock


@pytest.mark.parametrize("reward", ["match", "columns", "points"])
def test_rewards_zero_sum_and_totals(reward):
    env = hollywood_gin_v0.env(reward=reward)
    rng = np.random.default_rng(11)
    env.reset(seed=11)
    totals = {a: 0.0 for a in env.possible_agents}
    points = {a: 0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        totals[agent] += r
        env.step(None if term or trunc else random_policy(rng)(obs))
    board = info["scoreboard"]
    winner = info["match_winner"]
    loser = "player_1" if winner == "player_0" else "player_0"
    assert totals[winner] == pytest.approx(-totals[loser])
    if reward == "match":
        assert totals[winner] == pytest.approx(1.0)
    if reward == "columns":
        won = sum(w == winner for w in board["column_winners"])
        assert totals[winner] == pytest.approx((won - (3 - won)) / 3)
    if reward == "points":
        match = env.unwrapped.match
        for h in (hand.record for hand in match.hand_history):
            if h.winner is not None:
                points[env.possible_agents[h.winner]] += h.points
        assert totals["player_0"] == pytest.approx((points["player_0"] - points["player_1"]) / 100)


def test_hand_episode_and_infos():
    env = hollywood_gin_v0.env(episode="hand")
    deck = build_deck("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "JS JH JC 5D 6D 7D 8S 4S 3H 3D", "QC", "7H")
    env.reset(seed=0, options={"deck": deck, "first_dealer": 0})
    for a in (A.PASS, A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KD")):
        env.step(a)
    assert all(env.terminations.values())
    info = env.infos["player_0"]
    assert info["hand"]["kind"] == "gin" and info["hand"]["points"] == 43
    assert info["hand"]["winner"] == "player_1" and info["scoreboard"]["columns"][1] == [43, 0, 0]
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


def test_illegal_actions():
    raw = hollywood_gin_v0.raw_env()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 3 .*legal: 105 \(take\), 106 \(pass\)"):
        raw.step(3)
    wrapped = hollywood_gin_v0.env()
    wrapped.reset(seed=0)
    agent = wrapped.agent_selection
    wrapped.step(3)  # PettingZoo's wrapper logs the illegal move and ends the game
    assert wrapped.terminations[agent] and wrapped.rewards[agent] == -1


@pytest.mark.parametrize("bad", [dict(episode="set"), dict(reward="score"), dict(render_mode="rgb"),
                                 dict(rules="nope"), dict(rules={"knock_limit": -3})])
def test_bad_options_raise(bad):
    with pytest.raises(ValueError):
        hollywood_gin_v0.raw_env(**bad)


def test_render_ansi_shows_melds_and_scoreboard():
    env = hollywood_gin_v0.env(render_mode="ansi")
    deck = build_deck("4H 5H 6H 9C 9D 9S AC 2C 3C KD", "JS JH JC 5D 6D 7D 8S 4S 3H 3D", "QC", "7H")
    env.reset(seed=0, options={"deck": deck, "first_dealer": 0})
    text = env.render()
    assert "[4♥ 5♥ 6♥]" in text and "deadwood 10" in text and "stock 31" in text
    assert "discard top Q♣" in text and "player_0" in text and "III" in text
    for a in (A.PASS, A.PASS, A.DRAW_STOCK, A.KNOCK + parse_card("KD")):
        env.step(a)
    text = env.render()
    assert "player_1 goes gin -> player_1 scores 43" in text


def test_pickle_and_decode():
    env = hollywood_gin_v0.env()
    env.reset(seed=5)
    clone = pickle.loads(pickle.dumps(env))
    clone.reset(seed=5)
    np.testing.assert_array_equal(env.observe("player_0")["observation"],
                                  clone.observe("player_0")["observation"])
    d = decode(env.observe(env.agent_selection)["observation"])
    assert len(d["hand"].split()) == 10 and d["stock_size"] == 31 and d["phase"] == "first_upcard"
    assert d["own_columns"] == [0, 0, 0]


def test_profiles_through_env():
    for profile in ("gin_us_uk", "oklahoma", "hollywood_classic"):
        env = hollywood_gin_v0.env(rules=profile)
        _, info = run_match(env, 2, random_policy(np.random.default_rng(2)))
        assert info["scoreboard"]["match_over"]
    one = hollywood_gin_v0.raw_env(rules="gin_us_uk")
    assert one.observation_space("player_0")["observation"].shape == (ObservationLayout(1).size,)


def test_the_card_just_taken_has_a_discard_deadwood_the_mask_forbids_as_documented():
    """``discard_deadwood`` gives the taken card its value too (the deadwood as if it went
    back) while the mask forbids discarding or knocking with it: the observation's value is
    kept (no version bump) and the env's docstring and docs/environment.md say so."""
    from pathlib import Path

    from hgin_env.cards import format_cards
    from hgin_env.envs import aec
    from hgin_env.observation import decode

    env = hollywood_gin_v0.env()
    env.reset(seed=42)
    assert env.action_mask(env.agent_selection)[A.TAKE_DISCARD]
    taken = env.unwrapped.game.discard_top
    env.step(A.TAKE_DISCARD)  # take the first upcard
    obs = env.observe(env.agent_selection)
    decoded = decode(obs["observation"])
    name = format_cards([taken])
    assert decoded["phase"] == "discard" and name in decoded["discard_deadwood"]
    assert not obs["action_mask"][A.DISCARD + taken] and not obs["action_mask"][A.KNOCK + taken]
    root = Path(__file__).resolve().parents[1]
    assert "the card just taken from the discard\npile included" in aec.__doc__
    assert "although the action mask forbids discarding that card" in \
        " ".join((root / "docs" / "environment.md").read_text(encoding="utf-8").split())
