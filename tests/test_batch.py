"""The batched engine against the scalar ``Game`` (toy sizes; ``python -m eval.differential``
runs the same check over 20,000+ hands)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.differential import all_profiles, run
from hgin_env import actions as A
from hgin_env.batch import BatchGame
from hgin_env.game import Game


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_batch_matches_game_step_by_step(name):
    stats = run({name: all_profiles()[name]}, n=6, hands=12, seed=3)[name]
    assert stats["hands"] >= 12


def test_matches_restart_with_recorded_seeds():
    rules = all_profiles()["short_match"]
    stats = run({"short_match": rules}, n=4, hands=40, seed=5)["short_match"]
    assert stats["matches"] >= 2


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
        g = Game(seed=s)
        assert g.current_player == batch.current_player[i]
        assert g.hands == batch.hands[i].tolist()


def test_only_two_player_formats():
    with pytest.raises(ValueError, match="two-player"):
        BatchGame(2, rules="hollywood_three_hand")


def test_illegal_action_raises():
    batch = BatchGame(2, seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        batch.step(np.array([A.DRAW_STOCK, A.DRAW_STOCK]))  # first upcard phase: take or pass
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        batch.step(np.array([A.PASS]))
