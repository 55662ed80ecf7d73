"""The variance-reduced estimate (arena.variance) on a toy game whose chance is known
exactly: unbiased for any beta, and its mean equal to the plain one on a large sample (the
real engine's checks are in test_variance_engine.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from arena.variance import chance_correction, reduced_mean

# --------------------------------------------------------------------------- a toy game
# Two dice are rolled one after the other (the chance events); the player stops after the
# first when it shows 5 or 6 (a decision that depends on chance), and scores the sum (or
# twice the first die when it stopped) plus a fair coin (luck no value function sees).
# V is an imperfect value: it knows the dice but values a stop wrongly.
FACES = range(1, 7)


def toy_outcome(d1: int, d2: int, coin: int) -> float:
    return (2 * d1 if d1 >= 5 else d1 + d2) + 3 * coin


def toy_value_after_first(d1: int) -> float:
    return 1.5 * d1 + 2.0  # wrong slope and offset: any V keeps the estimate unbiased


def toy_value_after_second(d1: int, d2: int) -> float:
    return float(d1 + d2) if d1 < 5 else 1.5 * d1 + 2.0


def toy_correction(d1: int, d2: int) -> float:
    c = chance_correction(toy_value_after_first(d1), [toy_value_after_first(f) for f in FACES])
    if d1 < 5:  # the second die is an event only when the player did not stop
        c += chance_correction(toy_value_after_second(d1, d2), [toy_value_after_second(d1, f) for f in FACES])
    return c


def test_toy_game_estimate_is_exactly_unbiased_for_any_beta():
    outcomes = list(itertools.product(FACES, FACES, (0, 1)))  # every outcome, equally likely
    plain = np.mean([toy_outcome(*o) for o in outcomes])
    corrections = [toy_correction(d1, d2) for d1, d2, _ in outcomes]
    assert np.mean(corrections) == pytest.approx(0.0, abs=1e-12)
    for beta in (0.0, 0.5, 1.0, 3.0):
        reduced = np.mean([toy_outcome(*o) - beta * c for o, c in zip(outcomes, corrections, strict=True)])
        assert reduced == pytest.approx(plain, abs=1e-12)


def test_toy_game_large_sample_mean_equals_the_plain_one_with_a_narrower_interval():
    rng = np.random.default_rng(54)
    n = 20_000
    d1, d2, coin = rng.integers(1, 7, n), rng.integers(1, 7, n), rng.integers(0, 2, n)
    y = np.array([toy_outcome(*o) for o in zip(d1, d2, coin, strict=True)])
    c = np.array([toy_correction(a, b) for a, b in zip(d1, d2, strict=True)])
    exact = np.mean([toy_outcome(*o) for o in itertools.product(FACES, FACES, (0, 1))])
    out = reduced_mean(y, c)
    assert out["reduced_ci"][0] < exact < out["reduced_ci"][1]
    assert out["plain_ci"][0] < exact < out["plain_ci"][1]
    assert abs(out["reduced"] - out["plain"]) < (out["plain_ci"][1] - out["plain_ci"][0]) / 2
    assert out["width_ratio"] > 1.5  # the dice explain most of the outcome
    assert out["correction_ci"][0] < 0 < out["correction_ci"][1]
    assert all(b == pytest.approx(1.0, abs=0.1) for b in out["beta"])  # V is in the outcome's units


def test_reduced_mean_refuses_mismatched_inputs_and_needs_four_units_to_fit():
    with pytest.raises(ValueError, match="one length"):
        reduced_mean([1.0, 2.0], [0.0])
    out = reduced_mean([1.0, 0.0, 1.0], [0.5, -0.5, 0.5])
    assert out["beta"] == [0.0, 0.0] and out["reduced"] == out["plain"]
    with pytest.raises(ValueError, match="probabilities"):
        chance_correction(1.0, [0.0, 1.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="at least one"):
        chance_correction(1.0, [])
