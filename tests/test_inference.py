"""Policy-based inference of worlds (agents/inference.py) and the opponents' model in the
critic search's playouts: the opponent's past decisions are rebuilt from the searching
seat's observations exactly (with its true hand, a template shows the opponent what it
saw), the walk back to its past hands errs only in cards it drew unseen, nothing hidden is
read (twin states give the same decisions, every format), and the opponents' model plays
only where asked."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import swap_hidden, swap_hidden_match

from agents.batched import BatchedPolicy
from agents.expert import ExpertAgent
from agents.inference import WorldInference, past_hands
from agents.search import SearchAgent
from hgin_env import actions as A
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout, observe
from hgin_env.observation.layout import context_start
from hgin_env.rules import get_rules

PROFILES = {"duel": "hollywood", "three_hand": "hollywood_three_hand", "partnership": "hollywood_partnership"}
SMALL = {"rollouts": 4, "policy_plies": 6, "until": "turn", "prior_k": 2, "confidence": 0.0}


def _follow_hand(fmt: str, seed: int):
    """Seat 0 followed by an inferring search agent (no search: :meth:`SearchAgent.follow`),
    every seat played by the Expert, for one hand of a ``fmt`` match; yields at each of seat
    0's decisions (the agent, the match, the opponent's real decisions at the table so far:
    (observation, hand, move, stock-drawn card or -1))."""
    rules = get_rules(PROFILES[fmt])
    layout = ObservationLayout.for_rules(rules)
    match = Match(rules, seed=seed)
    follower = SearchAgent(seed=1, rules=rules, infer=True, rollouts=2)
    experts = [ExpertAgent(seed=s, layout=layout) for s in range(rules.num_players)]
    seen: list[tuple[dict, int, int, int]] = []
    hands = len(match.hand_history)
    while not match.is_over and len(match.hand_history) == hands:
        seat = match.current_seat
        obs = observe(match, seat)
        action = int(experts[seat](obs))
        if seat == 0:
            follower.follow(obs)
            yield follower, match, seen
            follower.played(obs, action)
        elif match.seat_view(0) is not None and match.table_of(seat) == match.table_of(0):
            game, player = match.seat_view(seat)
            before = game.hands[player]
            match.apply(action)
            drawn = (game.hands[player] & ~before).bit_length() - 1 if action == A.DRAW_STOCK else -1
            seen.append((obs, before, action, drawn))
            continue
        match.apply(action)


@pytest.mark.parametrize("fmt", ["duel", "three_hand", "partnership"])
def test_the_opponents_decisions_are_rebuilt_from_the_seats_observations(fmt):
    """Each rebuilt point, given the opponent's true hand then, is the opponent's real
    observation (vector and legal moves) and its real move: the templates hold every public
    fact of that moment, from the seat's own observations only."""
    checked = 0
    for seed in (3, 4):
        for follower, _, seen in _follow_hand(fmt, seed):
            points = follower._history.points
            assert not follower._history.broken
            assert len(points) <= len(seen)
            for point, (obs, hand, action, _) in zip(points, seen[len(seen) - len(points):], strict=True):
                assert point.action == action
                game = point.game
                game.hands[point.player] = hand
                game.forget_cached()
                rebuilt = observe(game, point.player)
                vec = rebuilt["observation"]
                if point.context is not None:
                    vec = np.concatenate([vec[:context_start(game.rules.columns)], point.context])
                np.testing.assert_array_equal(vec, obs["observation"])
                np.testing.assert_array_equal(rebuilt["action_mask"], obs["action_mask"])
                checked += 1
    assert checked > 20


def test_past_hands_err_only_in_cards_drawn_unseen():
    """Walked back from the opponent's true hand now, its hand at each past point has the
    right size and misses only cards it drew from the stock since (which the seat never
    saw: they are drawn at random among its hand's cards)."""
    checked = 0
    for seed in (5, 6):
        for follower, match, seen in _follow_hand("duel", seed):
            points = follower._history.points
            if not points:
                continue
            game, player = match.seat_view(0)
            now = game.hands[1 - player]
            recent = seen[len(seen) - len(points):]
            for i, hand in enumerate(past_hands(points, now, np.random.default_rng(len(points)))):
                true = recent[i][1]
                assert hand.bit_count() == true.bit_count()
                unseen_draws = 0
                for _, _, _, drawn in recent[i:]:
                    if drawn >= 0:
                        unseen_draws |= 1 << drawn
                # It holds nothing the opponent did not hold then, but for cards drawn unseen since.
                assert hand & ~true & ~unseen_draws == 0
                checked += 1
    assert checked > 20


def test_the_likelihood_prefers_the_true_hand():
    """Under the Expert's own model, the Expert opponent's true hand explains its moves at
    least as well as the average sampled world (on every position of two hands)."""
    better = total = 0
    expert_model = None
    for seed in (7, 8):
        for follower, match, _ in _follow_hand("duel", seed):
            points = follower._history.points
            if len(points) < 4:
                continue
            if expert_model is None:
                from agents.batched_expert import BatchedExpert

                expert_model = WorldInference(BatchedExpert(seed=0), temperature=1.0)
            game, player = match.seat_view(0)
            info = follower.information_set(observe(match, 0))
            rng = np.random.default_rng(total)
            worlds = [info.sample(rng, model="uniform").hands[1 - player] for _ in range(32)]
            ll = expert_model.log_likelihoods(points, [game.hands[1 - player], *worlds], rng)
            better += ll[0] >= ll[1:].mean()
            total += 1
    assert total > 5 and better == total


def test_resampling_follows_the_weights_and_the_seed():
    inference = WorldInference(model=None, temperature=1.0)
    ll = np.log(np.array([0.0001, 0.5, 0.25, 0.2499]))
    picks = inference.resample(ll, 1000, np.random.default_rng(0))
    counts = np.bincount(picks, minlength=4) / 1000
    np.testing.assert_allclose(counts, np.exp(ll) / np.exp(ll).sum(), atol=0.01)
    again = inference.resample(ll, 1000, np.random.default_rng(0))
    np.testing.assert_array_equal(picks, again)
    flat = WorldInference(model=None, temperature=1e6).resample(ll, 4, np.random.default_rng(1))
    assert sorted(flat.tolist()) == [0, 1, 2, 3]  # a huge temperature: every world once


@pytest.mark.parametrize("fmt,weighting", [("duel", "resample"), ("three_hand", "resample"),
                                            ("partnership", "resample"), ("duel", "weights"),
                                            ("partnership", "weights")])
def test_inferring_search_ignores_hidden_cards(fmt, weighting):
    """Two agents with the same seed, one shown the real observations of a hand, the other
    at each decision a twin's (the opponent's unseen cards and the stock reshuffled; in a
    partnership the other table too): the same worlds and moves throughout, though the
    inferring agent remembers the hand."""
    rules = dataclasses.replace(get_rules(PROFILES[fmt]), max_hands=1)
    layout = ObservationLayout.for_rules(rules)
    real, twin = (SearchAgent(seed=9, rules=rules, infer=True, infer_weighting=weighting, **SMALL)
                  for _ in range(2))
    experts = [ExpertAgent(seed=s, layout=layout) for s in range(rules.num_players)]
    rng = np.random.default_rng(2)
    match = Match(rules, seed=12)
    searched = 0
    while not match.is_over and searched < 8:
        seat = match.current_seat
        obs = observe(match, seat)
        if seat == 0:
            other = swap_hidden_match(match, rng)
            action = real(obs)
            assert twin(observe(other, seat)) == action
            searched += real.last_search is not None
        else:
            action = int(experts[seat](obs))
        match.apply(action)
    assert searched and real._history.points


def test_duel_inference_on_hand_twins():
    """A one-hand duel's scalar Hand, as the tests of the search do it: twins at every decision."""
    real, twin = (SearchAgent(seed=4, infer=True, **SMALL) for _ in range(2))
    expert = ExpertAgent(seed=1)
    rng = np.random.default_rng(0)
    game = Match(seed=21, single_hand=True, first_dealer=0).current_game
    while not game.is_over:
        p = game.current_player
        obs = observe(game, p)
        if p == 0:
            action = real(obs)
            assert twin(observe(swap_hidden(game, rng), 0)) == action
        else:
            action = int(expert(obs))
        game.apply(action)
    assert real._history.points


def test_refuses_bad_inference_arguments():
    with pytest.raises(ValueError, match="infer=true"):
        SearchAgent(value="rollout", infer=True)
    with pytest.raises(ValueError, match="opponent_rollouts"):
        SearchAgent(opponent_rollouts=1.5)
    with pytest.raises(ValueError, match="infer_worlds"):
        SearchAgent(infer=True, infer_worlds=0)
    with pytest.raises(ValueError, match="infer_weighting must be one of"):
        SearchAgent(infer=True, infer_weighting="softly")
    with pytest.raises(ValueError, match="temperature"):
        SearchAgent(infer=True, infer_temperature=0.0)
    assert not SearchAgent(value="rollout").infer  # the heuristic search never infers


@pytest.mark.parametrize("keyword, value", [("infer_worlds", 4), ("infer_points", 8), ("infer_temperature", 4.0),
                                            ("infer_weighting", "weights"), ("infer_moves", True)])
def test_inference_keywords_are_refused_without_inference(keyword, value):
    """An ``infer_*`` keyword tunes the inference: without ``infer=true`` it would be silently
    unused, so it is refused, naming itself and the fix; with ``infer=true`` it is taken."""
    with pytest.raises(ValueError, match=f"{keyword} tunes the inference of worlds, which is off: add infer=true"):
        SearchAgent(**{keyword: value})
    with pytest.raises(ValueError, match="infer_points, infer_moves tune"):
        SearchAgent(infer=False, infer_points=8, infer_moves=True)
    agent = SearchAgent(infer=True, **{keyword: value})
    assert agent.inference is not None
    if keyword == "infer_worlds":
        assert agent.infer_worlds == 4
    if keyword == "infer_weighting":
        assert agent.infer_weighting == "weights"
    if keyword == "infer_points":
        assert agent.inference.max_points == 8
    if keyword == "infer_temperature":
        assert agent.inference.temperature == 4.0
    if keyword == "infer_moves":
        assert agent.inference.moves_only


def test_weighted_inference_keeps_every_world_and_weighs_it_by_its_likelihood():
    """``infer_weighting="weights"``: the worlds drawn are all kept (no copies, no extra
    draws), each with its log-likelihood over the inference temperature, and the search's
    weights are those likelihoods normalised (times the behaviour weights with ``temperature``)."""
    # Seat 0's first decision after three of the opponent's.
    follower, match, _ = next(step for step in _follow_hand("duel", 4) if len(step[2]) >= 3)
    agent = SearchAgent(seed=1, infer=True, infer_weighting="weights", rollouts=2)
    agent._history = follower._history
    info = follower.information_set(observe(match, 0))
    state = agent.rng.bit_generator.state
    worlds, log_weights = agent.weighted_worlds(info, 8)
    assert len(worlds) == 8 and len({id(w) for w in worlds}) == 8
    agent.rng.bit_generator.state = state
    drawn = [info.sample(agent.rng, agent.decline_weight, agent.model) for _ in range(8)]
    assert [w.hands for w in drawn] == [w.hands for w in worlds]  # the prior's draws, one per world
    expected = agent.inference.log_likelihoods(agent._history.points, [w.hands[1] for w in drawn], agent.rng)
    np.testing.assert_allclose(log_weights, expected / agent.inference.temperature)
    assert np.ptp(log_weights) > 0  # the opponent's moves tell the worlds apart
    weights = agent._world_weights([0] * 8, log_weights.tolist())
    np.testing.assert_allclose(weights, np.exp(log_weights) / np.exp(log_weights).sum())
    assert agent._world_weights([0, 0], [0.0, 0.0]) is None  # no decision to weigh by: equal
    resampling = SearchAgent(seed=1, infer=True, rollouts=2)
    resampling._history = follower._history
    assert resampling.weighted_worlds(info, 4)[1] is None  # resampled worlds count equally


class _MovesOf:
    """A model with ``act`` only (the likelihood then counts a move as chosen or not)."""

    def __init__(self, policy: BatchedPolicy):
        self.act = policy.act


def test_a_policy_taken_as_its_moves_is_a_deterministic_model():
    """``infer_moves=true``: the policy's likelihood is that of its most likely move alone
    (as a model without probabilities), exact for the deterministic ``ppo:``."""
    follower, _, seen = next(step for step in _follow_hand("duel", 4) if len(step[2]) >= 3)
    agent = SearchAgent(seed=1, infer=True, infer_moves=True, rollouts=2)
    assert agent.inference.moves_only
    hands = [seen[-1][1] | (1 << card) for card in range(3)] + [seen[0][1]]
    points = follower._history.points
    moves = agent.inference.log_likelihoods(points, hands, np.random.default_rng(0))
    as_moves = WorldInference(_MovesOf(agent.policy), temperature=2.0)
    np.testing.assert_allclose(moves, as_moves.log_likelihoods(points, hands, np.random.default_rng(0)))
    soft = SearchAgent(seed=1, infer=True, rollouts=2).inference.log_likelihoods(points, hands,
                                                                               np.random.default_rng(0))
    assert not np.allclose(moves, soft)


class _Spy:
    """A batched opponents' model that plays as ``policy`` and counts the rows it played."""

    def __init__(self, policy: BatchedPolicy):
        self.policy, self.rows = policy, 0

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.rows += len(obs)
        return self.policy.act(obs, masks)


def test_the_opponents_model_plays_the_marked_worlds_only():
    """In the playouts the opponents' model plays the opponent seats of the worlds marked,
    and nothing else changes: a model that plays as the policy gives the policy's values."""
    agent = SearchAgent(seed=3, rollouts=4, until="turn", policy_plies=6)
    values = agent.critic_values
    game = Match(seed=5, single_hand=True, first_dealer=1).current_game
    me = game.current_player
    info = agent.information_set(observe(game, me))
    info_worlds = [info.sample(np.random.default_rng(k)) for k in range(4)]
    candidates = game.legal_actions()[:2]
    plain = values.values(info_worlds, [1, 2, 3, 4], candidates, me)
    spy = _Spy(agent.policy)
    values.opponent = spy
    same = values.values(info_worlds, [1, 2, 3, 4], candidates, me, opponent_rows=np.ones(4, dtype=bool))
    np.testing.assert_allclose(same, plain)
    assert spy.rows > 0
    played = spy.rows
    values.values(info_worlds, [1, 2, 3, 4], candidates, me, opponent_rows=np.zeros(4, dtype=bool))
    assert spy.rows == played  # no world marked: the policy plays every seat


def test_expert_opponent_in_the_playouts_is_reproducible():
    rules = get_rules("hollywood")

    def moves(seed: int) -> list[int]:
        agent = SearchAgent(seed=seed, opponent="expert", opponent_rollouts=0.5, infer=True, **SMALL)
        expert = ExpertAgent(seed=1)
        game = Match(rules, seed=44, single_hand=True, first_dealer=1).current_game
        out = []
        while not game.is_over:
            obs = observe(game, game.current_player)
            a = agent(obs) if game.current_player == 0 else int(expert(obs))
            out.append(int(a))
            game.apply(a)
        assert agent.critic_values.opponent is agent.opponent_model
        return out

    assert moves(6) == moves(6)


def test_critic_values_refuse_nothing_new_when_no_model():
    """Without an opponents' model the mark is ignored: the policy plays every seat."""
    agent = SearchAgent(seed=3, rollouts=2, until="turn", policy_plies=4)
    assert agent.critic_values.opponent is None
    game = Match(seed=6, single_hand=True, first_dealer=1).current_game
    me = game.current_player
    info = agent.information_set(observe(game, me))
    worlds = [info.sample(np.random.default_rng(k)) for k in range(2)]
    candidates = game.legal_actions()[:2]
    a = agent.critic_values.values(worlds, [1, 2], candidates, me)
    b = agent.critic_values.values(worlds, [1, 2], candidates, me, opponent_rows=np.ones(2, dtype=bool))
    np.testing.assert_allclose(a, b)


def test_inference_quality_scores_every_weighting():
    """eval.inference_quality on a few positions: every prior and weighting is scored, the
    scores are probabilities, equal weights keep every world."""
    from eval.inference_quality import measure

    out = measure("hollywood", positions=4, seed=5, worlds=8, temperatures=(2.0,))
    assert out["positions"] == 4 and out["mean_points"] >= 1
    for name in ("improved/equal", "improved/inferred T=2", "uniform/equal", "uniform/inferred T=2"):
        assert 0 <= out["mean_p_true_card"][name] <= 1
        assert out["mean_log_p_true_card"][name] <= 0
    assert out["mean_effective_worlds"]["uniform/equal"] == pytest.approx(8)
    assert out["mean_effective_worlds"]["uniform/inferred T=2"] <= 8 + 1e-9


def test_inference_quality_against_a_policy_taken_as_its_moves():
    """``others`` plays the opponent's seats and ``moves`` takes the model as its moves: the
    same positions and equal-weight scores, other inferred weights."""
    from eval.inference_quality import measure

    soft = measure("hollywood", positions=4, seed=5, worlds=8, temperatures=(2.0,), others="ppo:")
    exact = measure("hollywood", positions=4, seed=5, worlds=8, temperatures=(2.0,), others="ppo:", moves=True)
    assert soft["others"] == "ppo:" and exact["model_as_moves"] and not soft["model_as_moves"]
    assert exact["mean_p_true_card"]["uniform/equal"] == soft["mean_p_true_card"]["uniform/equal"]
    inferred = "uniform/inferred T=2"
    assert exact["mean_effective_worlds"][inferred] != pytest.approx(soft["mean_effective_worlds"][inferred])


def test_the_weighted_standard_error_counts_the_effective_worlds():
    """The confidence test's standard error under weights is the plain one for equal
    weights, and grows as the weight gathers on few worlds (where the sandwich form it
    replaced shrank towards 0: one heavy world's residual is ~0); one world is no evidence."""
    diff = np.random.default_rng(0).normal(size=32)
    mean, se = SearchAgent._weighted_mean_and_error(diff, np.full(32, 1 / 32))
    assert mean == pytest.approx(diff.mean()) and se == pytest.approx(diff.std(ddof=1) / np.sqrt(32))
    heavy = np.r_[0.9, np.full(31, 0.1 / 31)]
    mean, se_heavy = SearchAgent._weighted_mean_and_error(diff, heavy)
    sandwich = np.sqrt(heavy ** 2 @ (diff - mean) ** 2 * 32 / 31)
    assert se_heavy > 3 * se and se_heavy > 10 * sandwich
    assert SearchAgent._weighted_mean_and_error(diff, np.eye(32)[3])[1] == np.inf
