"""The compiled Expert and Simple (agents/expert_kernels.py) decide exactly as their numpy
references on states from batched matches of every profile (every format's layout), with
the Expert's default and other parameters; their deadwood helper equals the engine's
reference; and the engine is chosen as the batched engine's is."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from helpers import batched_states

from agents.batched import BatchedExpert, BatchedRandom, BatchedSimple, make_batched_agent
from hgin_env.batch import BatchGame
from hgin_env.card_kernels import best_discard
from hgin_env.melds import best_discard_deadwood_batch
from hgin_env.observation import ObservationLayout
from hgin_env.rules import PROFILES, get_rules

#: As tests/test_batched_expert.py: parameters far from the defaults (a rounding decline
#: factor, which the compiled form leaves to numpy, other knock timing, no match awareness).
OTHER_PARAMS = [
    dict(lookahead=0.3, danger_early=1.7, danger_late=12.3, decline_factor=0.3, swap_margin=2.5,
         knock_any_stock=28, knock_late=3, knock_end_stock=6, small_win=25.0, threat_win=35.0),
    dict(lookahead=1.4, decline_factor=0.75, swap_margin=-1.0, knock_any_stock=20, match_aware=False),
    dict(lookahead=-0.5, danger_early=0.0, danger_late=0.0, decline_factor=1.0, knock_late=10),
]


@cache
def states(profile: str, n: int = 32, steps: int = 160, seed: int = 0):
    """(layout, observations, masks) of every seat from batched matches of ``profile``,
    played by the Expert, Simple and Random in turn at each seat."""
    rules = get_rules(profile)
    layout = ObservationLayout.for_rules(rules)
    batch = BatchGame(n, rules=rules, seed=seed)
    players = [BatchedExpert(seed=1, layout=layout), BatchedSimple(seed=2, layout=layout),
               BatchedRandom(seed=3, layout=layout)]
    obs, masks = batched_states(batch, players, lambda step: (np.arange(n) + step) % len(players), steps)
    return layout, obs, masks


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_compiled_expert_and_simple_decide_as_their_numpy_references(profile):
    layout, obs, masks = states(profile)
    phases = layout.get(obs, "phase").argmax(axis=1)
    assert (phases < 2).sum() > 500 and (phases == 2).sum() > 500
    compiled = BatchedExpert(seed=0, layout=layout, engine="numba")
    assert compiled._kernel_args is not None
    np.testing.assert_array_equal(compiled.act(obs, masks),
                                  BatchedExpert(seed=0, layout=layout, engine="numpy").act(obs, masks))
    # Simple: the same seed gives the same ties, call after call (the same uniform draws).
    fast, reference = (BatchedSimple(seed=7, layout=layout, engine=e) for e in ("numba", "numpy"))
    for start in range(0, len(obs), 997):
        rows = slice(start, start + 997)
        np.testing.assert_array_equal(fast.act(obs[rows], masks[rows]), reference.act(obs[rows], masks[rows]))


@pytest.mark.parametrize("params", OTHER_PARAMS)
def test_the_compiled_expert_with_other_parameters(params):
    for profile in ("hollywood", "oklahoma", "hollywood_three_hand"):
        layout, obs, masks = states(profile)
        compiled = BatchedExpert(seed=0, layout=layout, engine="numba", **params)
        reference = BatchedExpert(seed=0, layout=layout, engine="numpy", **params)
        np.testing.assert_array_equal(compiled.act(obs, masks), reference.act(obs, masks))


def test_a_rounding_decline_factor_runs_the_numpy_form():
    assert BatchedExpert(decline_factor=0.3, engine="numba")._kernel_args is None
    assert BatchedExpert(decline_factor=0.75, engine="numba")._kernel_args is not None


def test_best_discard_equals_the_engine_reference_on_random_and_set_heavy_hands():
    rng = np.random.default_rng(11)
    hands = []
    for size in (1, 2, 4, 9, 10, 11):
        for _ in range(600):
            hands.append(rng.choice(52, size, replace=False))
            ranks = rng.choice(13, 3, replace=False)  # most cards from three ranks: sets
            pool = np.unique(np.concatenate([np.add.outer(np.arange(4) * 13, ranks).ravel(),
                                             rng.choice(52, 4, replace=False)]))
            hands.append(rng.choice(pool, min(size, pool.size), replace=False))
    masks = np.array([sum(1 << int(c) for c in cards) for cards in hands], dtype=np.uint64)
    expected = best_discard_deadwood_batch(masks)
    got = np.array([best_discard(int(m)) for m in masks.view(np.int64)])
    np.testing.assert_array_equal(got, expected)


def test_the_engine_is_chosen_as_the_batched_engine_chooses_it(monkeypatch):
    assert make_batched_agent("expert").engine == "numba"
    assert make_batched_agent("simple").engine == "numba"
    monkeypatch.setenv("HGIN_ENGINE", "numpy")
    assert BatchedExpert().engine == "numpy" and BatchedSimple().engine == "numpy"
    with pytest.raises(ValueError, match="not an engine"):
        BatchedExpert(engine="fortran")


def test_bad_rows_are_refused_with_the_references_messages():
    layout, obs, masks = states("hollywood")
    discard = np.flatnonzero((layout.get(obs, "phase").argmax(axis=1) == 2) & (masks.sum(axis=1) > 1))[:1]
    bad = obs[discard].copy()
    bad[0, layout.slice("hand").start + np.flatnonzero(layout.get(bad[0], "hand") > 0.5)[0]] = 0.0
    for engine in ("numba", "numpy"):
        with pytest.raises(ValueError, match="hand of 11 cards; a row has 10"):
            BatchedExpert(engine=engine).act(bad, masks[discard])
    no_discard = masks[discard].copy()
    no_discard[0, :52] = 0
    no_discard[0, 52:104] = 0
    no_discard[0, 104:106] = 1  # two legal moves, but no discard and no knock
    for engine in ("numba", "numpy"):
        with pytest.raises(ValueError, match="needs a legal discard"):
            BatchedExpert(engine=engine).act(obs[discard], no_discard)
