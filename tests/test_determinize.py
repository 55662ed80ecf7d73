"""Determinization (hgin_env.determinize): samples leak nothing and are consistent."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import swap_hidden

from agents.base import make_agent
from hgin_env.determinize import InfoSet, behaviour_weights, determinize
from hgin_env.game import Hand, Phase
from hgin_env.match import Match
from hgin_env.melds import meld_partners, melds_with
from hgin_env.observation import encode


def _states(seed: int, every: int = 7, rules: str = "hollywood") -> list[Hand]:
    """Clones of the hand being played (with the match's sheet) in a Simple-vs-Expert match
    every ``every`` decisions (both players, all phases, later hands)."""
    match = Match(rules=rules, seed=seed)
    columns = match.rules.columns  # the agents read the rules' observation layout
    agents = [make_agent("simple", seed=seed, columns=columns),
              make_agent("expert", seed=seed + 1, columns=columns)]
    out, k = [], 0
    while not match.is_over and len(out) < 40:
        game = match.current_game  # a new Hand after each hand ends
        p = game.current_player
        if k % every == 0:
            out.append(game.clone())
        k += 1
        match.apply(agents[p]({"observation": encode(game, p), "action_mask": game.legal_action_mask()}))
    return out


def _fingerprint(g: Hand) -> tuple:
    return (tuple(g.hands), tuple(g.stock), tuple(g.discard_pile), g.phase, g.current_player,
            g.dealer, g.taken_card, g.forced_stock_draw, tuple(g.known_cards), tuple(g.discarded),
            tuple(g.passed_upcard), g.turns, g.scoreboard.columns.tobytes(),
            tuple(g.scoreboard.column_winners), tuple(g.scoreboard.wins), g.knock_limit)


@pytest.mark.parametrize("seed", [1, 2])
def test_samples_leak_nothing(seed):
    rng = np.random.default_rng(seed)
    states = _states(seed)
    assert {s.phase for s in states} >= {Phase.DRAW, Phase.DISCARD}
    for game in states:
        twin = swap_hidden(game, rng)
        p = game.current_player
        assert twin.hands[1 - p] != game.hands[1 - p] or twin.stock != game.stock or len(game.stock) < 2
        assert InfoSet.from_game(game, p) == InfoSet.from_game(twin, p)
        for decline_weight, model in ((1.0, "uniform"), (0.5, "uniform"), (1.0, "improved")):
            a = determinize(game, p, np.random.default_rng(99), 3, decline_weight, model)
            b = determinize(twin, p, np.random.default_rng(99), 3, decline_weight, model)
            assert [_fingerprint(x) for x in a] == [_fingerprint(x) for x in b]
        # The behaviour weights read the information set and the sampled worlds only.
        info, info_twin = InfoSet.from_game(game, p), InfoSet.from_game(twin, p)
        wa, ra = info.sample_weighted(np.random.default_rng(7), 4, 0.5, model="improved")
        wb, rb = info_twin.sample_weighted(np.random.default_rng(7), 4, 0.5, model="improved")
        assert [_fingerprint(x) for x in wa] == [_fingerprint(x) for x in wb]
        np.testing.assert_array_equal(ra, rb)


@pytest.mark.parametrize("rules,model", [("hollywood", "uniform"), ("oklahoma", "uniform"),
                                         ("hollywood", "improved"), ("gin_classic", "uniform")])
def test_samples_are_consistent_and_continue_legally(rules, model):
    rng = np.random.default_rng(5)
    for game in _states(3, every=5, rules=rules):
        p = game.current_player
        obs = encode(game, p)
        for sample in determinize(game, p, rng, n=4, decline_weight=0.5, model=model):
            assert sample.card_count_ok()
            assert sample.hands[p] == game.hands[p]
            opp = 1 - p
            assert sample.known_cards[opp] == game.known_cards[opp]
            assert sample.hands[opp] & game.known_cards[opp] == game.known_cards[opp]
            assert sample.hands[opp].bit_count() == game.hands[opp].bit_count()
            assert len(sample.stock) == len(game.stock)
            assert set(sample.discard_pile) == set(game.discard_pile)
            assert sample.discard_top == game.discard_top
            assert sample.current_player == p and sample.phase == game.phase
            assert sample.legal_actions() == game.legal_actions()
            # The player cannot tell the sample from the real state.
            np.testing.assert_array_equal(encode(sample, p), obs)
            # Every continuation is legal until the hand ends, cards conserved.
            while True:
                record = sample.apply(sample.legal_actions()[int(rng.integers(len(sample.legal_actions())))])
                assert sample.card_count_ok()
                if record is not None:
                    break


@pytest.mark.parametrize("rules", ["hollywood", "gin_classic"])
def test_from_observation_infers_what_the_observation_implies(rules):
    for game in _states(4, every=3, rules=rules):
        p = game.current_player
        obs = {"observation": encode(game, p), "action_mask": game.legal_action_mask()}
        inferred = InfoSet.from_observation(obs, game.rules, seat=p)
        exact = InfoSet.from_game(game, p)
        assert inferred.taken_card == exact.taken_card == game.taken_card
        assert inferred.forced_stock_draw == game.forced_stock_draw
        assert inferred.hidden + inferred.stock_size == inferred.unseen.bit_count()
        assert inferred.own_known & ~exact.own_known == 0  # never claims more than the truth
        if not game.rules.first_upcard_offer:  # nobody passes without the offer (004)
            assert not inferred.own_passed and not inferred.opponent_passed
        sample = inferred.sample(np.random.default_rng(0))
        assert sample.card_count_ok()
        np.testing.assert_array_equal(encode(sample, p), obs["observation"])


def test_declined_weighting_lowers_meld_partners():
    game = next(g for g in _states(6, every=1) if InfoSet.from_game(g, g.current_player).declined_by_opponent)
    p = game.current_player
    info = InfoSet.from_game(game, p)
    suppressed = 0
    for y in range(52):
        if (info.declined_by_opponent | info.opponent_discards) >> y & 1:
            suppressed |= meld_partners(y)
    suppressed &= info.unseen
    assert suppressed and suppressed != info.unseen  # this state has something to weight

    def share(weight: float) -> float:
        rng = np.random.default_rng(1)
        hits = 0
        for _ in range(300):
            hidden = info.sample(rng, weight).hands[1 - p] & ~info.opponent_known
            hits += (hidden & suppressed).bit_count()
        return hits / (300 * info.hidden)

    assert share(0.2) < share(1.0)


def test_not_to_act_and_inconsistent_raise():
    game = Match(seed=1).current_game
    with pytest.raises(ValueError, match="not to act"):
        InfoSet.from_game(game, 1 - game.current_player)
    info = InfoSet.from_game(game, game.current_player)
    bad = InfoSet(**{**info.__dict__, "stock_size": info.stock_size + 1})
    with pytest.raises(ValueError, match="inconsistent"):
        bad.sample(np.random.default_rng(0))
    with pytest.raises(ValueError, match="model"):
        info.sample(np.random.default_rng(0), model="oracle")


def test_improved_model_holds_less_deadwood_mid_hand():
    from hgin_env.melds import cached_deadwood

    game = next(g for g in _states(7, every=2) if g.discarded[1 - g.current_player].bit_count() >= 5)
    p = game.current_player
    info = InfoSet.from_game(game, p)
    rng = np.random.default_rng(3)

    def mean_deadwood(model: str) -> float:
        return float(np.mean([cached_deadwood(info.sample(rng, model=model).hands[1 - p])
                              for _ in range(40)]))

    assert mean_deadwood("improved") < mean_deadwood("uniform") - 10


def _late_state(seed: int, stock: int) -> Hand:
    """A hand of random moves, never a knock, until ``stock`` cards are left: many declined
    and discarded cards, few unseen ones to enumerate."""
    rng = np.random.default_rng(seed)
    game = Match(seed=seed, single_hand=True).current_game
    while len(game.stock) > stock or game.phase != Phase.DRAW:
        legal = [a for a in game.legal_actions() if not 52 <= a < 104]
        game.apply(legal[int(rng.integers(len(legal)))])
    return game


def test_surprise_counts_moves_the_rule_would_not_make():
    game = _late_state(3, 4)
    info = InfoSet.from_game(game, game.current_player)
    declined = [c for c in range(52) if info.declined_by_opponent >> c & 1]
    discarded = [c for c in range(52) if info.opponent_discards >> c & 1]
    picked = [c for c in range(52) if info.opponent_known >> c & 1]
    rng = np.random.default_rng(0)
    for _ in range(20):
        hand = info.sample(rng).hands[1 - info.seat]
        slow = (sum(melds_with(c, hand) for c in declined) + sum(melds_with(c, hand) for c in discarded)
                + sum(not melds_with(c, hand & ~(1 << c)) for c in picked))
        assert info.surprise(hand) == slow


def test_weighted_sampler_matches_enumeration():
    """Weighted uniform samples estimate P(card held by the opponent) under
    exp(-surprise / T) over every consistent hand, enumerated here the slow way."""
    game = _late_state(11, 3)
    p = game.current_player
    info = InfoSet.from_game(game, p)
    unseen = [c for c in range(52) if info.unseen >> c & 1]
    assert len(unseen) == info.hidden + 3
    temperature = 0.5
    hands = [info.opponent_known | sum(1 << c for c in combo)
             for combo in itertools.combinations(unseen, info.hidden)]
    target = behaviour_weights([info.surprise(h) for h in hands], temperature)
    exact = np.array([sum(w for h, w in zip(hands, target, strict=True) if h >> c & 1) for c in unseen])
    uniform = info.hidden / len(unseen)
    assert np.abs(exact - uniform).max() > 0.1  # the weighting moves some cards a lot
    worlds, weights = info.sample_weighted(np.random.default_rng(5), 3000, temperature)
    held = np.array([[w.hands[1 - p] >> c & 1 for c in unseen] for w in worlds])
    estimate = weights @ held
    np.testing.assert_allclose(estimate, exact, atol=0.04)


def test_weights_are_reproducible_and_validated():
    game = _late_state(4, 6)
    info = InfoSet.from_game(game, game.current_player)
    a = info.sample_weighted(np.random.default_rng(2), 6, 1.0, model="improved")
    b = info.sample_weighted(np.random.default_rng(2), 6, 1.0, model="improved")
    np.testing.assert_array_equal(a[1], b[1])
    assert a[1].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(behaviour_weights([0, 1, 3], 1e-3), [1.0, 0.0, 0.0])  # no underflow
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="temperature"):
            behaviour_weights([0, 1], bad)
