"""Agents play only legal actions, are deterministic under a seed, and see only the observation."""

from __future__ import annotations

import numpy as np
import pytest

from agents import ExpertAgent, RandomAgent, SimpleAgent, known_agents, make_agent
from agents.view import melds_with, parse
from arena.matches import play_match
from hgin_env import actions as A
from hgin_env.cards import cards_to_mask, mask_to_cards, parse_card
from hgin_env.game import Hand, Phase
from hgin_env.match import Match
from hgin_env.melds import deadwood_after_discard_mask
from hgin_env.observation import encode

AGENTS = ("random", "simple", "expert")


def observe(game: Hand) -> dict:
    """The acting player's observation dict, as the environment builds it."""
    p = game.current_player
    return {"observation": encode(game, p), "action_mask": game.legal_action_mask()}


def play_hands(agents: list, seed: int, hands: int, rules: str = "hollywood") -> list[int]:
    """Play ``hands`` one-hand matches, checking every action against the mask."""
    history = []
    for h in range(hands):
        game = Match(rules=rules, seed=seed + h, single_hand=True).current_game
        for i, agent in enumerate(agents):
            agent.reset(seed=seed * 7 + h * 2 + i)
        while not game.is_over:
            obs = observe(game)
            action = agents[game.current_player](obs)
            assert isinstance(action, int)
            assert obs["action_mask"][action] == 1, (action, game.describe())
            game.apply(action)
        history.extend(game.action_history)
    return history


def test_registry() -> None:
    for name in AGENTS:
        assert name in known_agents()
        agent = make_agent(name, seed=1)
        assert callable(agent) and hasattr(agent, "reset")
    with pytest.raises(ValueError, match="known"):
        make_agent("nonsense")
    with pytest.raises(ValueError):  # a missing checkpoint, or no ppo loader registered
        make_agent("ppo:/no/such/model.zip")
    with pytest.raises(ValueError, match="lookahead"):
        make_agent("expert", not_a_param=1)


@pytest.mark.parametrize("name", AGENTS)
def test_legal_over_many_hands(name: str) -> None:
    # Against each other agent kind, both seats, with the default and an odd profile.
    for other in AGENTS:
        play_hands([make_agent(name, seed=3), make_agent(other, seed=4)], seed=100, hands=6)
        play_hands([make_agent(other, seed=5), make_agent(name, seed=6)], seed=200, hands=6)
    # oklahoma is one running score (one column): the agents read its layout.
    play_hands([make_agent(name, seed=3, columns=1), make_agent(name, seed=4, columns=1)], seed=300,
               hands=4, rules="oklahoma")
    play_hands([make_agent(name, seed=3), make_agent("simple", seed=4)], seed=400, hands=3,
               rules="straight_gin")


@pytest.mark.parametrize("pair", [("expert", "simple"), ("simple", "expert"), ("expert", "expert"),
                                  ("simple", "random")])
def test_full_matches_legal(pair: tuple[str, str]) -> None:
    # play_match raises ValueError on any illegal action; a full match covers the
    # Hollywood state (columns open and closing) the expert reads.
    a, b = (make_agent(n, seed=1) for n in pair)
    for seed in (11, 12):
        row = play_match(a, b, seed=seed, a_seat=seed % 2, rules="hollywood")
        assert row["winner"] in ("a", "b")
        assert not row["truncated"]


@pytest.mark.parametrize("name", AGENTS)
def test_deterministic_under_seed(name: str) -> None:
    first = play_hands([make_agent(name, seed=9), make_agent("simple", seed=10)], seed=500, hands=4)
    second = play_hands([make_agent(name, seed=9), make_agent("simple", seed=10)], seed=500, hands=4)
    assert first == second


def _hide_differently(game: Hand, rng: np.random.Generator) -> Hand:
    """A copy whose opponent's hidden cards and stock order differ; public facts stay the same."""
    other = game.clone()
    opp = 1 - other.current_player
    hidden = [c for c in range(52) if other.hands[opp] >> c & 1 and not other.known_cards[opp] >> c & 1]
    pool = hidden + list(other.stock)
    rng.shuffle(pool)
    new_hidden, new_stock = pool[:len(hidden)], pool[len(hidden):]
    other.hands[opp] = other.known_cards[opp] | cards_to_mask(new_hidden)
    other.stock = new_stock
    return other


@pytest.mark.parametrize("name", AGENTS)
def test_uses_only_the_observation(name: str) -> None:
    rng = np.random.default_rng(0)
    driver = make_agent("simple", seed=0)
    decisions = 0
    for seed in range(3):
        game = Match(rules="hollywood", seed=seed, single_hand=True).current_game
        while not game.is_over:
            other = _hide_differently(game, rng)
            obs_a, obs_b = observe(game), observe(other)
            assert np.array_equal(obs_a["observation"], obs_b["observation"])
            agent_a, agent_b = make_agent(name, seed=seed), make_agent(name, seed=seed)
            assert agent_a(obs_a) == agent_b(obs_b)
            decisions += 1
            game.apply(driver(observe(game)))
    assert decisions > 20


def test_agents_run_on_plain_dicts() -> None:
    # No game object anywhere: a dict of arrays is all an agent needs.
    game = Match(seed=3).current_game
    obs = observe(game)
    plain = {"observation": np.array(obs["observation"].tolist(), dtype=np.float32),
             "action_mask": np.array(obs["action_mask"].tolist(), dtype=np.int8)}
    for name in AGENTS:
        assert plain["action_mask"][make_agent(name, seed=0)(plain)] == 1


def test_simple_takes_only_melding_cards_and_knocks_asap() -> None:
    assert melds_with(parse_card("5H"), cards_to_mask("3H 4H"))
    assert melds_with(parse_card("5H"), cards_to_mask("5C 5S"))
    assert melds_with(parse_card("5H"), cards_to_mask("4H 6H"))
    assert not melds_with(parse_card("5H"), cards_to_mask("5C 4H 7H KH"))
    agent = SimpleAgent(seed=0)
    for seed in range(40):
        game = Match(seed=seed, single_hand=True).current_game
        while not game.is_over:
            obs = observe(game)
            view = parse(obs)
            action = agent(obs)
            if game.phase in (Phase.FIRST_UPCARD, Phase.DRAW) and A.TAKE_DISCARD in game.legal_actions():
                assert (action == A.TAKE_DISCARD) == melds_with(game.discard_top, view.hand)
            if game.phase == Phase.DISCARD:
                after = deadwood_after_discard_mask(view.hand)
                legal_cards = [a for a in game.legal_actions() if a < A.KNOCK]
                best = min(after[c] for c in legal_cards)
                card = A.action_card(action)
                assert after[card] == best
                assert (action >= A.KNOCK) == (best <= game.knock_limit)
            game.apply(action)


def test_expert_always_goes_gin_and_random_is_uniform() -> None:
    expert = ExpertAgent(seed=0)
    for seed in range(60):
        game = Match(seed=seed, single_hand=True).current_game
        while not game.is_over:
            obs = observe(game)
            action = expert(obs)
            if game.phase == Phase.DISCARD and min(game.deadwood_after_discard().values()) == 0:
                legal = [a for a in game.legal_actions() if a >= A.KNOCK
                         and game.deadwood_after_discard()[a - A.KNOCK] == 0]
                if legal:
                    assert action in legal
            game.apply(action)
    agent = RandomAgent(seed=1)
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    mask[[3, 40, 104]] = 1
    counts = np.bincount([agent({"observation": None, "action_mask": mask}) for _ in range(600)],
                         minlength=A.NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == {3, 40, 104}
    assert counts[[3, 40, 104]].min() > 150


@pytest.mark.parametrize("name", AGENTS)
def test_legal_without_the_first_upcard_offer(name: str) -> None:
    # gin_classic (004): hands start in the draw phase; nobody may pass.
    for seed in (500, 600):
        history = play_hands([make_agent(name, seed=3, columns=1), make_agent("expert", seed=4, columns=1)],
                             seed=seed, hands=3, rules="gin_classic")
        assert A.PASS not in history


def test_view_decodes_through_the_layout_scales() -> None:
    """agents.view reads every slice and scale through ObservationLayout: a played game's
    counters and sheet come back as the engine holds them (the scales live in
    hgin_env.observation only)."""
    from hgin_env.observation import PHASES, SCALES, ObservationLayout

    assert SCALES["stock_size"] == 31 and SCALES["knock_limit"] == 10 and SCALES["wins"] == 10
    rng = np.random.default_rng(4)
    match = Match(rules="oklahoma", seed=9)
    layout = ObservationLayout.for_rules(match.rules)
    steps = 0
    while not match.is_over and steps < 3000:
        game = match.current_game  # a new Hand after each hand ends
        obs = observe(game)
        view, p = parse(obs, layout), game.current_player
        board = match.sheet
        assert view.stock_size == len(game.stock) and view.knock_limit == game.knock_limit
        assert view.phase == PHASES[int(game.phase)] and view.hand == game.hands[p]
        assert [round(x) for x in view.own_columns] == board.columns[p].tolist()
        assert [round(x) for x in view.opponent_columns] == board.columns[1 - p].tolist()
        assert layout.counts(obs["observation"], "wins") == [board.wins[p], board.wins[1 - p]]
        assert view.discard_top == (game.discard_pile[-1] if game.discard_pile else -1)
        assert layout.cards(obs["observation"], "hand") == sorted(mask_to_cards(game.hands[p]))
        legal = np.flatnonzero(obs["action_mask"])
        knocks = legal[(legal >= A.KNOCK) & (legal < A.KNOCK + 52)]
        match.apply(int(rng.choice(knocks if knocks.size else legal)))
        steps += 1
    assert sum(match.sheet.wins) > 0 and match.rules.target == 100
