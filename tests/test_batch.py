"""The batched engine against the scalar engine (the AEC env over ``Match``, whose tables
play ``Hand``s), every format, step by step: actions, masks, observations, rewards, hand
results, sheets and summaries (toy sizes; ``python -m eval.differential`` runs the same
check over hundreds of thousands of decisions)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.differential import all_profiles, run
from hgin_env import actions as A
from hgin_env.batch import BatchGame
from hgin_env.match import Match

#: Both implementations of the batched engine: the compiled kernels (``make test`` installs
#: numba with the ``fast`` extra) and the numpy reference.
ENGINES = ["numba", "numpy"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_batch_matches_game_step_by_step(name, engine):
    stats = run({name: all_profiles()[name]}, n=6, hands=12, seed=3, engine=engine)[name]
    assert stats["hands"] >= 12


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["short_match", "three_hand_short", "partnership_short"])
@pytest.mark.parametrize("reward", ["match", "columns", "points"])
def test_matches_end_and_restart_with_recorded_seeds_in_every_reward_mode(name, reward, engine):
    stats = run({name: all_profiles()[name]}, n=3, hands=27, seed=5, reward=reward,
                match_bonus=0.0 if reward == "match" else 0.5, engine=engine)[name]
    assert stats["matches"] >= 2  # finished matches' sheets, summaries and rewards compared
    if name == "partnership_short":
        assert stats["rounds"] >= 6


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership", "gin_partnership"])
def test_first_match_is_match_with_same_seed(profile):
    batch = BatchGame(3, rules=profile, seeds=[7, 8, 9])
    per = 2 if batch.format == "partnership" else 1
    for i, s in enumerate((7, 8, 9)):
        match = Match(profile, seed=s)
        assert match.current_seat == batch.current_seat[i]
        for k, table in enumerate(match.tables):
            t = per * i + k
            assert tuple(batch.table_seats[t]) == table.seats
            assert table.game.hands == batch.hands[t].tolist()
            assert table.game.dealer == batch.dealer[t]
        if batch.format == "three_hand":
            assert batch.seating.sitting_out[i] == match.sitting_out
        else:
            assert batch.seating.dealing_team[i] == match.dealing_team


def test_seeded_and_reproducible():
    a, b = BatchGame(5, seed=11), BatchGame(5, seed=11)
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert np.array_equal(a.observations(), b.observations())
        m = a.legal_action_masks()
        assert np.array_equal(m, b.legal_action_masks())
        acts = np.array([rng.choice(np.flatnonzero(row)) for row in m])
        ra, rb = a.step(acts), b.step(acts)
        assert np.array_equal(ra.rewards, rb.rewards)
    assert not np.array_equal(BatchGame(5, seed=12).match_seeds, a.match_seeds)


def test_first_match_is_game_with_same_seed():
    batch = BatchGame(3, seeds=[7, 8, 9])
    for i, s in enumerate((7, 8, 9)):
        match = Match(seed=s)
        g = match.current_game
        assert g.current_player == match.current_seat == batch.current_player[i]
        assert g.hands == batch.hands[i].tolist()


def test_illegal_action_raises():
    batch = BatchGame(2, seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        batch.step(np.array([A.DRAW_STOCK, A.DRAW_STOCK]))  # first upcard phase: take or pass
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        batch.step(np.array([A.PASS]))
