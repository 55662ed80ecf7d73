"""The compiled card kernels (hgin_env/card_kernels.py) beside their references: the
showdown kernel against ``scoring.settle`` and the brute force on random and hand-built
hands, the deadwood kernel against ``melds``; and which engine runs (hgin_env/compiled.py).

The step-by-step differential of both engines against the scalar ``Match`` in every format
is in tests/test_batch.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hgin_env import card_kernels, compiled, scoring
from hgin_env.batch import BatchGame
from hgin_env.cards import as_card_ids, cards_to_mask
from hgin_env.codes import BIG_GIN_KIND, GIN_KIND, KNOCK_KIND, UNDERCUT_KIND
from hgin_env.melds import deadwood_of_mask
from hgin_env.rules import PROFILES

try:
    from tests import brute as B
    from tests.test_brute_settle import HARD_CASES, _random_case
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    import brute as B
    from test_brute_settle import HARD_CASES, _random_case

KIND_OF_CODE = {KNOCK_KIND: "knock", GIN_KIND: "gin", BIG_GIN_KIND: "big_gin", UNDERCUT_KIND: "undercut"}


def compiled_settle(knocker, defender, limit: int = 10, multiplier: int = 1, rules=PROFILES["hollywood"]):
    """(kind, winner, points) of the showdown kernel, as ``scoring.settle`` names them."""
    big = -1 if rules.big_gin_bonus is None else rules.big_gin_bonus
    kind, knocker_wins, points = card_kernels.settle_hand(
        cards_to_mask(as_card_ids(knocker)), cards_to_mask(as_card_ids(defender)), limit, multiplier,
        rules.gin_bonus, rules.undercut_bonus, big)
    return KIND_OF_CODE[kind], "knocker" if knocker_wins else "defender", points


def scalar_settle(knocker, defender, limit: int = 10, multiplier: int = 1, rules=PROFILES["hollywood"]):
    res = scoring.settle(list(as_card_ids(knocker)), list(as_card_ids(defender)), rules=rules,
                         knock_limit=limit, multiplier=multiplier)
    return res.kind, res.winner, res.points


@pytest.mark.parametrize("seed", [11, 12])
def test_showdown_kernel_equals_settle_on_random_hands(seed):
    rng = np.random.default_rng(seed)
    kinds = {"gin": 0, "knock": 0, "undercut": 0}
    for i in range(1500):
        limit = 10 if i % 2 else int(rng.integers(0, 11))
        multiplier = 2 if i % 5 == 0 else 1
        knocker, defender = _random_case(rng, knock_limit=limit)
        got = compiled_settle(knocker, defender, limit, multiplier)
        assert got == scalar_settle(knocker, defender, limit, multiplier), (
            B.hand_text(knocker), B.hand_text(defender), limit)
        kinds[got[0]] += 1
    assert min(kinds.values()) > 20, kinds  # every kind exercised


@pytest.mark.parametrize("name", sorted(HARD_CASES))
def test_showdown_kernel_on_the_hand_built_hard_cases(name):
    knocker, defender = HARD_CASES[name]
    expected = B.settle(B.cards(knocker), B.cards(defender), 10, 25, 25, 1)
    got = compiled_settle(knocker, defender)
    assert got == scalar_settle(knocker, defender) == (expected.kind, expected.winner, expected.points)


def test_showdown_kernel_big_gin_and_profiles_bonuses():
    eleven = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS"
    defender = "AH 2H 5D 9C KC QD 7H 8C 4C 6D"
    rules = dataclasses.replace(PROFILES["hollywood"], big_gin_bonus=31)  # no shipped profile has one
    kind, winner, points = compiled_settle(eleven, defender, rules=rules)
    assert (kind, winner) == ("big_gin", "knocker")
    assert points == rules.big_gin_bonus + deadwood_of_mask(cards_to_mask(as_card_ids(defender)))
    rng = np.random.default_rng(5)
    for name in ("gin_us_uk", "hollywood_winner_deals", "gin_classic"):
        rules = PROFILES[name]
        for _ in range(200):
            knocker, defender = _random_case(rng)
            assert compiled_settle(knocker, defender, rules=rules) == scalar_settle(knocker, defender, rules=rules)


def test_deadwood_kernel_equals_melds_on_random_hands():
    rng = np.random.default_rng(3)
    for size in (0, 1, 3, 7, 10, 11):
        for _ in range(400):
            mask = cards_to_mask(rng.permutation(52)[:size].tolist())
            assert card_kernels.deadwood(mask) == deadwood_of_mask(mask)


# ---------------------------------------------------------------- which engine runs
def test_the_compiled_engine_is_the_default_where_numba_is_installed(monkeypatch):
    monkeypatch.delenv(compiled.ENGINE_VARIABLE, raising=False)
    assert compiled.compiled_available()  # make test installs the `fast` extra
    assert compiled.resolve_engine() == "numba" == BatchGame(2, seed=0).engine
    monkeypatch.setenv(compiled.ENGINE_VARIABLE, "numpy")
    assert compiled.resolve_engine() == "numpy" == BatchGame(2, seed=0).engine
    assert BatchGame(2, seed=0, engine="numba").engine == "numba"  # the argument wins


def test_without_numba_the_numpy_engine_runs_and_asking_for_numba_says_why(monkeypatch):
    monkeypatch.delenv(compiled.ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(compiled, "compiled_available", lambda: False)
    assert compiled.resolve_engine() == "numpy"
    assert BatchGame(2, seed=0).engine == "numpy"
    with pytest.raises(ValueError, match="engine='numba' needs numba"):
        BatchGame(2, seed=0, engine="numba")
    monkeypatch.setenv(compiled.ENGINE_VARIABLE, "numba")
    with pytest.raises(ValueError, match="HGIN_ENGINE='numba' needs numba"):
        compiled.resolve_engine()


@pytest.mark.parametrize("bad", ["numbaa", "C", ""])
def test_an_unknown_engine_is_refused_by_name(monkeypatch, bad):
    if bad:
        with pytest.raises(ValueError, match=f"engine={bad!r} is not an engine"):
            BatchGame(2, seed=0, engine=bad)
    monkeypatch.setenv(compiled.ENGINE_VARIABLE, bad or "x")
    with pytest.raises(ValueError, match="HGIN_ENGINE=.* is not an engine"):
        compiled.resolve_engine()


def test_both_engines_give_the_same_games_from_the_same_seed():
    """A quick end-to-end twin of the differential: the same seeds and actions give the
    same observations, masks, rewards and sheets on both engines, format by format."""
    for rules in ("hollywood", "hollywood_three_hand", "hollywood_partnership"):
        games = {e: BatchGame(16, rules=rules, seed=4, reward="points", engine=e) for e in compiled.ENGINES}
        rng = np.random.default_rng(0)
        for _ in range(400):
            obs = {e: g.observations().copy() for e, g in games.items()}
            masks = {e: g.legal_action_masks().copy() for e, g in games.items()}
            np.testing.assert_array_equal(obs["numba"], obs["numpy"])
            np.testing.assert_array_equal(masks["numba"], masks["numpy"])
            actions = np.argmax(rng.random(masks["numpy"].shape) * masks["numpy"], axis=1)
            results = {e: g.step(actions) for e, g in games.items()}
            np.testing.assert_array_equal(results["numba"].rewards, results["numpy"].rewards)
            np.testing.assert_array_equal(results["numba"].hand_points, results["numpy"].hand_points)


def test_warm_kernels_reports_seconds_and_later_calls_compile_nothing():
    from hgin_env.batch.engines import warm_kernels

    assert warm_kernels() >= 0.0
    assert warm_kernels() < 5.0  # loaded, not compiled again


# ---------------------------------------------------------------- the scalar observer
@pytest.mark.parametrize("rules", ["hollywood", "oklahoma", "hollywood_three_hand", "hollywood_partnership"])
def test_compiled_scalar_observations_equal_the_python_reference(rules):
    """Every seat's observation, at every decision of random matches, is the same vector bit
    for bit from the compiled encoder and the Python one (acting or not, every phase, the
    hand over, the context of a later hand)."""
    from hgin_env import observation
    from hgin_env.envs.aec import raw_env

    rng = np.random.default_rng(7)
    env = raw_env(rules=rules, episode="match")
    env.reset(seed=3)
    compared = 0
    for _ in range(1500):
        for game in _games_of(env.match):
            for player in (0, 1):
                np.testing.assert_array_equal(observation.encode(game, player, engine="numba"),
                                              observation.encode(game, player, engine="numpy"))
                compared += 1
        obs, _r, term, trunc, _i = env.last()
        if term or trunc:
            env.reset(seed=int(rng.integers(1 << 30)))
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert compared >= 3000


def _games_of(match):
    return [table.game for table in match.tables]


def test_the_scalar_observer_runs_the_engine_it_is_given():
    """The engine is passed in (no module switch): "numpy" is the Python reference, "numba"
    the compiled path, None the process's choice; a bad name says what is wrong."""
    from hgin_env import observation
    from hgin_env.envs.aec import raw_env
    from hgin_env.match import Match
    from hgin_env.observation import encoders

    assert encoders.encoder("numpy") is encoders._encode_python
    assert encoders.encoder("numba") is not encoders._encode_python
    assert encoders.encoder("numba") is encoders.encoder("numba")  # built once
    assert observation.DEFAULT_ENGINE == compiled.resolve_engine()
    with pytest.raises(ValueError, match="not an engine"):
        observation.encode(Match(seed=0).current_game, 0, engine="jax")
    env = raw_env(engine="numpy")
    env.reset(seed=3)
    want = observation.observe(env.match, 0, engine="numpy")["observation"]
    np.testing.assert_array_equal(env.observe("player_0")["observation"], want)
    with pytest.raises(ValueError, match="not an engine"):
        raw_env(engine="jax")


@pytest.mark.parametrize("copy_of", ["deepcopy", "pickle"])
def test_a_copied_compiled_batch_steps_its_own_arrays(copy_of):
    """A copy (copy.deepcopy, pickle) of a compiled BatchGame derives its kernels' views of
    its own arrays: stepping the copy leaves the original as it was, and both play on alike."""
    import copy
    import pickle

    games = BatchGame(8, seed=2, engine="numba")
    twin = copy.deepcopy(games) if copy_of == "deepcopy" else pickle.loads(pickle.dumps(games))
    before = games.observations().copy()
    rng = np.random.default_rng(1)
    for _ in range(60):
        masks = twin.legal_action_masks()
        twin.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    np.testing.assert_array_equal(games.observations(), before)
    rng = np.random.default_rng(1)
    for _ in range(60):
        masks = games.legal_action_masks()
        games.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    np.testing.assert_array_equal(games.observations(), twin.observations())


@pytest.mark.parametrize("fmt", ["duel", "three_hand", "partnership"])
def test_compiled_context_rows_equal_the_numpy_reference(fmt):
    """The context rows' compiled mirror (observation/context_kernels.py) writes exactly the
    float32 values of ``format_context_rows`` / ``sheet_context_rows`` on random sheets:
    column totals past the clip, open and won columns, every seat, sitting out or not."""
    from hgin_env.observation.context import format_context_rows, sheet_context_rows

    rng = np.random.default_rng(7)
    k, ncols = 200, 3
    rows = {"duel": 2, "three_hand": 3, "partnership": 2}[fmt]
    columns = rng.integers(0, 700, size=(k, rows, ncols))
    wins = rng.integers(0, 40, size=(k, rows))
    winners = rng.integers(-1, rows, size=(k, ncols))
    seats = {"duel": 2, "three_hand": 3, "partnership": 4}[fmt]
    seat = rng.integers(0, seats, size=k)
    for target in (100, 150):
        if fmt == "duel":
            opponent = np.where(rng.random(k) < 0.2, -1, 1 - seat)
            got = [sheet_context_rows(columns, wins, winners, seat, opponent, target, engine=e)
                   for e in ("numpy", "numba")]
        elif fmt == "three_hand":
            sitting_out = rng.integers(0, 3, size=k)
            opponent = np.where(seat == sitting_out, -1, 3 - seat - sitting_out)
            kw = dict(opponent=opponent, sitting_out=sitting_out, hands_played=rng.integers(0, 2000, size=k))
            got = [format_context_rows(fmt, columns, wins, winners, target, seat, engine=e, **kw)
                   for e in ("numpy", "numba")]
        else:
            kw = dict(partner_running=rng.random(k) < 0.5, round_points=rng.integers(0, 600, size=(k, 2)),
                      round_number=rng.integers(0, 2000, size=k))
            got = [format_context_rows(fmt, columns, wins, winners, target, seat, engine=e, **kw)
                   for e in ("numpy", "numba")]
        assert got[0].dtype == got[1].dtype == np.float32 and got[0].shape == got[1].shape
        assert np.array_equal(got[0], got[1])
