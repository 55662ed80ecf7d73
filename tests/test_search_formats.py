"""The critic-valued search in three-hand and partnership (agents/search.py with
``value="critic"``, agents/search_batched.py on format batches): decisions ignore cards
hidden from the seat, a world budget makes them reproducible, the values are the seat's
own, and the agent plays whole format matches in the tournament runner."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import swap_hidden_match

from agents.search import FORMAT_WORLDS, SearchAgent
from agents.search_batched import CriticValues
from agents.spec import make_agent, make_batched_agent
from arena.matches import play_match
from hgin_env import actions as A
from hgin_env.format_worlds import FormatInfoSet
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout, observe
from hgin_env.rules import get_rules

PROFILES = {"three_hand": "hollywood_three_hand", "partnership": "hollywood_partnership"}
SEARCH = {"value": "critic", "rollouts": 3, "policy_plies": 6, "prior_k": 2, "confidence": 0.0}


def _short(fmt: str, hands: int = 2):
    """The format's profile cut after ``hands`` hands (partnership: rounds): toy matches."""
    return dataclasses.replace(get_rules(PROFILES[fmt]), max_hands=hands)


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_format_search_ignores_hidden_cards(fmt):
    """At real choices of a match, a twin that differs only in cards the acting seat cannot
    see (its opponent's unseen cards and the stock; in a partnership the other table) gets
    the same decision from a fresh agent with the same seed."""
    rules = get_rules(PROFILES[fmt])
    rng = np.random.default_rng(1)
    match = Match(rules, seed=40)
    expert = make_agent("expert", seed=3, layout=ObservationLayout.for_rules(rules))
    checked = 0
    while checked < 4:
        seat = match.current_seat
        obs = observe(match, seat)
        if len(match.legal_actions()) > 1 and match.current_game.turns > 1:
            twin = swap_hidden_match(match, rng)
            assert any(a.game.hands != b.game.hands for a, b in zip(match.tables, twin.tables, strict=True))
            a = SearchAgent(seed=9, rules=rules, **SEARCH)(obs)
            b = SearchAgent(seed=9, rules=rules, **SEARCH)(observe(twin, seat))
            assert a == b and a in match.legal_actions()
            checked += 1
        match.apply(int(expert(obs)))


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_format_search_is_reproducible_and_plays_whole_matches(fmt):
    """A world budget: the same seed gives the same moves. The spec plays whole (toy) format
    matches in the tournament's match runner, one agent on several seats."""
    rules = _short(fmt)
    layout = ObservationLayout.for_rules(rules)

    def play(seed: int) -> tuple[dict, SearchAgent]:
        agent = make_agent("search:value=critic,rollouts=2,policy_plies=20,until=hand", seed=seed,
                           rules=rules, layout=layout)
        row = play_match(agent, make_agent("expert", seed=2, layout=layout), seed=5, a_seat=0, rules=rules)
        row.pop("seconds")
        return row, agent

    first, agent = play(4)
    again, _ = play(4)
    assert first == again
    assert agent.decisions and agent.worlds and min(agent.worlds) == 2
    assert agent.critic_values is not None and agent.critic_values._batches
    assert first["hands"] >= 2


def test_the_tournament_layout_alone_picks_the_format_profile():
    """A tournament gives agents the layout only: a format layout names its profile."""
    agent = make_agent("search:value=critic,rollouts=2", layout=ObservationLayout(3, "partnership"))
    assert agent.rules.name == "hollywood_partnership"
    agent = make_agent("search:value=critic,rollouts=2", layout=ObservationLayout(3, "three_hand"))
    assert agent.rules.name == "hollywood_three_hand"


def test_formats_refuse_the_rollout_values():
    with pytest.raises(ValueError, match="value='critic' only"):
        SearchAgent(rules="hollywood_three_hand", value="rollout")
    with pytest.raises(ValueError, match="value='critic' only"):
        SearchAgent(rules="hollywood_partnership", value="critic", rollout="policy")
    with pytest.raises(ValueError, match="disagrees with the rules"):
        SearchAgent(rules="hollywood_partnership", value="critic", layout=ObservationLayout(3, "three_hand"))


def _worlds_at_a_discard(rules, seed: int, turns: int, n: int):
    """The format's shipped policy, and at the first discard decision after ``turns`` turns
    of Expert play in match ``seed``: the acting seat, its information set, ``n`` of its
    worlds, two legal moves."""
    layout = ObservationLayout.for_rules(rules)
    policy = make_batched_agent("ppo:", seed=0, layout=layout)
    match = Match(rules, seed=seed)
    expert = make_agent("expert", seed=1, layout=layout)
    while match.current_game.phase.name != "DISCARD" or match.current_game.turns < turns:
        match.apply(int(expert(observe(match, match.current_seat))))
    seat = match.current_seat
    info = FormatInfoSet.from_match(match, seat)
    return policy, seat, info, [info.sample(np.random.default_rng(k)) for k in range(n)], match.legal_actions()[:2]


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_format_values_are_the_seats_own(fmt):
    """The reached state is valued from the searching seat's own view: with no play after
    the candidate (plies=0), a world's value is the critic on the seat's observation of
    the state the candidate led to, whoever acts there; and the same worlds give the same
    values (the policy plays its most likely moves)."""
    rules = get_rules(PROFILES[fmt])
    policy, seat, _, worlds, legal = _worlds_at_a_discard(rules, seed=12, turns=3, n=3)
    now = CriticValues(policy, rules, plies=0)
    v = now.values(worlds, [1, 2, 3], legal, seat)
    batch = now._batches[6]
    assert (batch.current_seat != seat).all()  # a discard hands the turn on: another seat acts
    np.testing.assert_allclose(v.ravel(), now.critic_of(batch, seat), rtol=1e-6)
    on = CriticValues(policy, rules, plies=12, until="hand")
    w = on.values(worlds, [1, 2, 3], legal, seat)
    assert w.shape == (3, 2) and np.isfinite(w).all()
    np.testing.assert_array_equal(w, on.values(worlds, [1, 2, 3], legal, seat))


@pytest.mark.parametrize("fmt", ["three_hand", "partnership"])
def test_one_agent_remembers_each_of_its_seats(fmt):
    """One agent on several seats (a partnership team; in three-hand two seats, which sit
    hands out in turn): at every decision its memory of the seat's own pickups still held
    and of its upcard pass is that seat's, across hands and rounds."""
    rules = _short(fmt, hands=3)
    layout = ObservationLayout.for_rules(rules)
    agent = SearchAgent(seed=0, rules=rules, value="critic", rollouts=1, policy_plies=1)
    expert = make_agent("expert", seed=1, layout=layout)
    mine = (0, 2) if fmt == "partnership" else (0, 1)
    match = Match(rules, seed=8)
    decisions = 0
    while not match.is_over:
        seat = match.current_seat
        obs = observe(match, seat)
        if seat not in mine:
            match.apply(int(expert(obs)))
            continue
        game, player = match.seat_view(seat)
        top = game.discard_pile[-1] if game.discard_pile else -1
        action = agent(obs)
        taken = 1 << top if action == A.TAKE_DISCARD else 0  # the card joins the known ones
        assert agent._seat == seat
        assert agent._own_known == game.known_cards[player] | taken, (seat, decisions)
        match.apply(action)
        assert agent._own_passed == game.passed_upcard[player]
        decisions += 1
    assert decisions > 20


def test_a_three_hand_seat_sitting_out_is_valued_at_its_next_decision():
    """A seat that lost the hand sits the next one out; its view then (no cards) is not one
    the critic was trained on, so the row plays on until the seat acts again."""
    rules = get_rules("hollywood_three_hand")
    policy, seat, info, worlds, legal = _worlds_at_a_discard(rules, seed=14, turns=8, n=8)
    values = CriticValues(policy, rules, plies=200, until="hand")
    v = values.values(worlds, list(range(8)), legal, seat)
    assert np.isfinite(v).all()
    batch = values._batches[16]
    rows = np.arange(16)
    sat_out = batch.hands_played[rows] >= info.hands_played + 2  # a second hand was played: it sat one out
    assert sat_out.any()
    assert (batch.current_seat[sat_out] == seat).all()  # valued at its own decision


def test_a_sitter_read_from_its_view_is_calibrated_and_plays_no_further():
    """``sitter="critic"``: a row whose seat sits the next hand out is worth its rewards plus
    its sitting view's critic value through the calibration's knots, read at the hand's end
    (no play-on); every other row is valued as with the play-on."""
    rules = get_rules("hollywood_three_hand")
    policy, seat, info, worlds, legal = _worlds_at_a_discard(rules, seed=14, turns=8, n=8)
    seeds = list(range(8))

    def valued(**sitter):
        values = CriticValues(policy, rules, plies=200, until="hand", **sitter)
        return values.values(worlds, seeds, legal, seat).ravel(), values

    played, play = valued()
    sat_out = play._batches[16].hands_played[np.arange(16)] >= info.hands_played + 2
    assert sat_out.any() and not sat_out.all()
    read, critic = valued(sitter="critic", sitter_knots=([-10, 10], [-10, 10]))
    rewards, _ = valued(sitter="critic", sitter_knots=([-10, 10], [0, 0]))
    calibrated, _ = valued(sitter="critic", sitter_knots=([-10, 0, 10], [-19.5, 0.5, 20.5]))
    np.testing.assert_array_equal(read[~sat_out], played[~sat_out])
    np.testing.assert_array_equal(calibrated[~sat_out], played[~sat_out])
    np.testing.assert_allclose(calibrated[sat_out], rewards[sat_out] + 0.5 + 2.0 * (read - rewards)[sat_out])
    assert (read[sat_out] != played[sat_out]).any()
    assert critic.last_plies < play.last_plies


@pytest.mark.parametrize("profile", ["hollywood", "hollywood_three_hand", "hollywood_partnership"])
def test_a_row_whose_match_ended_is_worth_its_rewards_alone(profile, monkeypatch):
    """The batch deals a finished match's row a new match; that match is not the searched
    one's future, so the critic is not asked about it (nor does a sitter play it): in
    one-hand (one-round) matches every row ends its match at the horizon, and a critic
    answering 100 everywhere changes no value."""
    rules = dataclasses.replace(get_rules(profile), max_hands=1)
    layout = ObservationLayout.for_rules(rules)
    policy = make_batched_agent("ppo:", seed=0, layout=layout)
    match = Match(rules, seed=3)
    expert = make_agent("expert", seed=1, layout=layout)
    while match.current_game.phase.name != "DISCARD" or match.current_game.turns < 2:
        match.apply(int(expert(observe(match, match.current_seat))))
    assert not match.is_over
    seat = match.current_seat
    legal = match.legal_actions()[:2]
    if rules.format == "duel":
        from hgin_env.determinize import determinize

        game, seat = match.seat_view(seat)
        worlds = determinize(game, seat, np.random.default_rng(0), n=4)
    else:
        info = FormatInfoSet.from_match(match, seat)
        worlds = [info.sample(np.random.default_rng(k)) for k in range(4)]
    values = CriticValues(policy, rules, plies=400, until="hand")
    v = values.values(worlds, [1, 2, 3, 4], legal, seat)
    monkeypatch.setattr(values, "_predict", lambda x: np.full(len(x), 100.0))
    np.testing.assert_array_equal(values.values(worlds, [1, 2, 3, 4], legal, seat), v)
    assert np.abs(v).max() < 10


def test_the_sitter_keywords_are_checked(tmp_path):
    """``sitter`` is a three-hand setting of the critic search; ``critic`` needs a
    calibration (the shipped policy's measured one, or a ``sitter_calibration`` file)."""
    import json

    from agents.search_batched import SITTER_CALIBRATIONS

    three = get_rules("hollywood_three_hand")
    shipped = SearchAgent(seed=0, rules=three, sitter="critic").critic_values
    assert shipped.sitter == "critic"
    np.testing.assert_array_equal(shipped.sitter_knots, next(iter(SITTER_CALIBRATIONS.values())))
    own = tmp_path / "calibration.json"
    own.write_text(json.dumps({"knots_x": [-1, 1], "knots_y": [0, 2]}))
    given = SearchAgent(seed=0, rules=three, sitter="critic", sitter_calibration=str(own)).critic_values
    np.testing.assert_array_equal(given.sitter_knots, ([-1, 1], [0, 2]))
    assert SearchAgent(seed=0, rules=three, sitter="play").critic_values.sitter == "play"
    with pytest.raises(ValueError, match="sitter must be one of"):
        SearchAgent(seed=0, rules=three, sitter="nap")
    with pytest.raises(ValueError, match="not a readable JSON"):
        SearchAgent(seed=0, rules=three, sitter="critic", sitter_calibration=str(tmp_path / "none.json"))
    own.write_text(json.dumps({"knots_x": [1, -1], "knots_y": [0, 2]}))
    with pytest.raises(ValueError, match="strictly increasing"):
        SearchAgent(seed=0, rules=three, sitter="critic", sitter_calibration=str(own))
    with pytest.raises(ValueError, match="three-hand settings"):
        SearchAgent(seed=0, rules=get_rules("hollywood_partnership"), sitter="critic")
    with pytest.raises(ValueError, match="three-hand settings"):
        SearchAgent(seed=0, sitter="play")
    with pytest.raises(ValueError, match="value='rollout'"):
        SearchAgent(seed=0, value="rollout", sitter="play")
    with pytest.raises(ValueError, match="knots"):
        CriticValues(None, three, sitter="critic")


def test_a_policy_without_a_sitter_calibration(tmp_path):
    """Another three-hand policy file has no measured calibration: ``sitter=critic`` is
    refused naming the script that fits one, and the default plays the sitter on."""
    import shutil

    from agents.ppo import read_meta, shipped_policy, write_meta

    layout = ObservationLayout.for_rules(get_rules("hollywood_three_hand"))
    own = tmp_path / "own.zip"
    shutil.copy(shipped_policy(layout), own)
    write_meta(own, {**read_meta(own), "note": "another file"})
    with pytest.raises(ValueError, match="eval.sitter_value"):
        SearchAgent(seed=0, layout=layout, policy=f"ppo:{own}", sitter="critic")
    default = SearchAgent(seed=0, layout=layout, policy=f"ppo:{own}")
    assert default.critic_values.sitter == "play" and default.rollouts == FORMAT_WORLDS


def test_the_default_worlds_follow_the_sitter():
    """Three-hand's default reads a sitter from its calibrated critic at ``SITTER_WORLDS``
    worlds (docs/runs/sitter54, section 6); played on, and in a partnership, it searches
    ``FORMAT_WORLDS``; the duel the critic's default; ``rollouts`` given is kept."""
    from agents.search import SITTER_WORLDS, VALUE_DEFAULTS

    three = get_rules("hollywood_three_hand")
    default = SearchAgent(seed=0, rules=three)
    assert (default.critic_values.sitter, default.rollouts) == ("critic", SITTER_WORLDS)
    played = SearchAgent(seed=0, rules=three, sitter="play")
    assert (played.critic_values.sitter, played.rollouts) == ("play", FORMAT_WORLDS)
    assert SearchAgent(seed=0, rules=three, rollouts=20).rollouts == 20
    assert SearchAgent(seed=0, rules=get_rules("hollywood_partnership")).rollouts == FORMAT_WORLDS
    assert SearchAgent(seed=0).rollouts == VALUE_DEFAULTS["critic"]["rollouts"]
    assert SearchAgent(seed=0, value="rollout").rollouts == VALUE_DEFAULTS["rollout"]["rollouts"]
