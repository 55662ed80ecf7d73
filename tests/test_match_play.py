"""run_match, the one match loop, and observe(), the one observation dict."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from hgin_env import hollywood_gin_v0
from hgin_env.loop import run_match
from hgin_env.match import Match, SeatHand
from hgin_env.observation import ObservationLayout, observe

PROFILES = ("hollywood", "gin_three_hand", "hollywood_partnership")


def _agents(rules: str, n: int) -> list:
    layout = ObservationLayout.for_rules(Match(rules).rules)
    return [make_agent("simple", seed=s, layout=layout) for s in range(n)]


@pytest.mark.parametrize("rules", PROFILES)
def test_on_move_sees_every_move_with_the_policys_observation(rules: str) -> None:
    match = Match(rules, seed=3)
    agents = _agents(rules, match.num_players)
    seen: list = []
    given: list = []

    def policy(seat: int):
        def act(obs: dict) -> int:
            given.append(obs)
            return agents[seat](obs)
        return act

    def on_move(seat: int, obs: dict, action: int, finished: list) -> None:
        assert obs is given[-1] and obs["action_mask"][action] == 1
        seen.append((seat, action, [f for f in finished if isinstance(f, SeatHand)]))

    run_match(match, [policy(s) for s in range(match.num_players)], on_move=on_move)
    assert match.is_over
    assert [a for _, a, _ in seen] == match.action_history
    assert [h for *_, hands in seen for h in hands] == match.hand_history


@pytest.mark.parametrize("rules", PROFILES)
def test_an_exception_stops_the_match_and_play_plays_on(rules: str) -> None:
    whole = run_match(Match(rules, seed=5), _agents(rules, Match(rules).num_players))

    class Stop(Exception):
        pass

    def stop_at_40(seat: int, obs: dict, action: int, finished: list) -> None:
        if len(match.action_history) == 40:
            raise Stop

    match = Match(rules, seed=5)
    agents = _agents(rules, match.num_players)
    with pytest.raises(Stop):
        run_match(match, agents, on_move=stop_at_40)
    assert len(match.action_history) == 40 and not match.is_over
    run_match(match, agents)
    assert match.action_history == whole.action_history


def test_observe_is_the_env_and_match_dict() -> None:
    env = hollywood_gin_v0.env()
    env.reset(seed=2)
    match = env.unwrapped.match
    rng = np.random.default_rng(0)
    for _ in range(30):
        game = match.current_game  # the hand being played (a new one after each hand)
        for seat in (0, 1):
            a, b, c = observe(game, seat), observe(match, seat), env.observe(f"player_{seat}")
            for other in (b, c):
                assert np.array_equal(a["observation"], other["observation"])
                assert np.array_equal(a["action_mask"], other["action_mask"])
            assert a["action_mask"].dtype == np.int8
            assert a["action_mask"].any() == (seat == game.current_player)
        env.step(int(rng.choice(np.flatnonzero(observe(game, game.current_player)["action_mask"]))))
    single = Match(seed=1, single_hand=True)
    while not single.is_over:
        single.apply(single.legal_actions()[0])
    over = single.current_game
    assert over.is_over
    assert not observe(over, over.current_player)["action_mask"].any()
    assert not any(observe(single, seat)["action_mask"].any() for seat in (0, 1))


@pytest.mark.parametrize("rules", ["hollywood", "gin_three_hand", "gin_partnership"])
def test_dealt_anew_says_when_an_action_dealt_new_hands(rules):
    """``Match.dealt_anew``, what the fronts announce a deal on: exactly when the match's
    hand counter moved on (a partnership: its round), never at the match's end."""
    rng = np.random.default_rng(5)
    match = Match(rules, seed=11)
    deals = 0
    while not match.is_over:
        before = (match.hand_number, match.round_number)
        finished = match.apply(int(rng.choice(match.legal_actions())))
        counter = 1 if match.format == "partnership" else 0
        moved_on = (match.hand_number, match.round_number)[counter] > before[counter]
        assert match.dealt_anew(finished) == moved_on
        deals += moved_on
    assert deals >= 2 and not match.dealt_anew([])
