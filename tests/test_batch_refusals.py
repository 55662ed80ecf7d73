"""Issue 22, "nothing silent": the batched engine, the vector envs, the single-agent adapter
and the partnership env refuse bad input as the AEC env does (one check,
``hgin_env.actions.as_action`` / ``as_actions``), and a refused step changes nothing."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from agents.batched import BatchedRandom
from hgin_env import actions as A
from hgin_env import hollywood_gin_v0
from hgin_env.batch import BatchGame
from hgin_env.batch.vector import HollywoodVectorEnv, LearnerBatch
from hgin_env.envs.single_agent import SingleAgentEnv
from hgin_env.match import Match
from hgin_env.rules import Rules
from train.envs import BatchedVecEnv

N = 4


def _legal(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(axis=1).astype(np.int64)  # the first legal action of each row


def _state(batch: BatchGame) -> dict:
    """Everything a step could change, copied."""
    masks, obs = batch.legal_action_masks().copy(), batch.observations().copy()
    # The kernels' fields are views and arguments derived from the arrays (compared through them).
    out = {k: copy.deepcopy(v) for k, v in vars(batch).items()
           if k not in ("rules", "layout", "_slices", *batch._KERNEL_FIELDS)}
    out["_masks"], out["_obs"] = masks, obs
    out["_rng"] = batch.rng.bit_generator.state
    return out


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), k
        elif isinstance(x, list) and x and hasattr(x[0], "to_dict"):
            assert [s.to_dict() for s in x] == [s.to_dict() for s in y], k
        elif isinstance(x, tuple) and x and isinstance(x[0], np.ndarray):  # the table state record
            assert len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y, strict=True)), k
        elif isinstance(x, np.random.Generator):
            assert x.bit_generator.state == y.bit_generator.state, k
        elif isinstance(x, list) and x and isinstance(x[0], np.random.Generator):
            assert [g.bit_generator.state for g in x] == [g.bit_generator.state for g in y], k
        elif hasattr(x, "table_seats"):  # the format's seating: its own state (the rules compared alone)
            _same({j: v for j, v in vars(x).items() if j != "rules"},
                  {j: v for j, v in vars(y).items() if j != "rules"})
        else:
            assert x == y, k


def _bad_rows(legal: np.ndarray) -> list[tuple[object, type, str]]:
    """(actions, exception, text in the message) for every kind of bad batch in the issue."""
    out: list[tuple[object, type, str]] = []
    for v in (-5, -7, A.NUM_ACTIONS, 10**6):
        a = legal.copy()
        a[2] = v
        out.append((a, ValueError, f"row 2: {v}"))
    for v in (np.nan, np.inf):
        a = legal.astype(np.float64)
        a[1] = v
        out.append((a, ValueError, "row 1"))
    out.append((legal.astype(np.float64) + 0.9, TypeError, "float64"))  # 105.9 is not 105
    out.append((legal.astype(np.float64), TypeError, "float64"))  # not even 105.0
    out.append((legal.astype(str), TypeError, "dtype"))
    out.append((legal.astype(bool), TypeError, "bool"))
    out.append((legal.reshape(N, 1), ValueError, "shape"))
    out.append((legal.reshape(2, 2), ValueError, "shape"))
    out.append((legal[:3], ValueError, "shape"))
    out.append((np.int64(legal[0]), ValueError, "shape"))
    return out


@pytest.mark.parametrize("rules", ["hollywood", "hollywood_three_hand", "gin_partnership"])
def test_batchgame_step_refuses_negative_nan_inf_float_string_shape_and_moves_nothing(rules):
    batch = BatchGame(N, rules=rules, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):  # through several phases
        masks = batch.legal_action_masks()
        legal = _legal(masks)
        before = _state(batch)
        for bad, exc, text in _bad_rows(legal):
            with pytest.raises(exc, match=text.replace("(", r"\(")):
                batch.step(bad)
            _same(_state(batch), before)
        illegal = legal.copy()
        illegal[3] = int(np.flatnonzero(~masks[3])[0])
        with pytest.raises(ValueError, match=f"illegal actions: row 3: {illegal[3]}"):
            batch.step(illegal)
        _same(_state(batch), before)
        choice = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        batch.step(choice)
    # The one documented "no move" value still works: that row stays, the others move.
    before = batch.observations()[0].copy()
    a = _legal(batch.legal_action_masks())
    a[0] = A.NO_MOVE
    batch.step(a)
    assert np.array_equal(batch.observations()[0], before)


def test_hollywoodvectorenv_step_refuses_bad_actions_and_moves_nothing():
    env = HollywoodVectorEnv(N, [BatchedRandom(seed=0)], seed=1)
    env.reset()
    for bad, exc, text in _bad_rows(_legal(env.action_masks())) + [(np.full(N, A.NO_MOVE), ValueError, "row 0: -1")]:
        before = _state(env.core.batch)
        lengths = env.core.episode_length.copy()
        with pytest.raises(exc, match=text.replace("(", r"\(")):
            env.step(bad)
        _same(_state(env.core.batch), before)
        assert np.array_equal(env.core.episode_length, lengths)


@pytest.mark.parametrize("face", ["LearnerBatch", "BatchedVecEnv"])
def test_refused_step_does_not_add_to_episode_length(face):
    """A 55-step match reports l=55 however many refused steps came in between (the
    Gymnasium face shares LearnerBatch's counts: see the test above)."""
    rules = {"max_hands": 1}  # one-hand matches (truncated): short episodes
    if face == "LearnerBatch":
        env = core = LearnerBatch(2, [BatchedRandom(seed=0)], rules=rules, seed=2)
    else:
        env = BatchedVecEnv(2, ["random"], rules=rules, seed=2)
        env.reset()
        core = env.core
    rng = np.random.default_rng(0)
    steps = np.zeros(2, dtype=int)
    checked = 0
    while checked < 3:
        masks = core.action_masks()
        bad = _legal(masks)
        bad[0] = -5
        with pytest.raises(ValueError, match="row 0: -5"):
            env.step(bad)
        steps += 1
        out = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        infos = out[3].items() if face == "LearnerBatch" else enumerate(out[3])
        for i, info in infos:
            if "episode" in info:
                assert info["episode"]["l"] == steps[i]
                steps[i] = 0
                checked += 1


def test_hollywoodvectorenv_step_and_reset_after_close_are_refused():
    env = HollywoodVectorEnv(2, [BatchedRandom(seed=0)], seed=0)
    env.reset()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(_legal(env.action_masks()))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=1)


@pytest.mark.parametrize("bad", [105.9, "105", np.float64(105.0), True, None, [105]])
def test_singleagentenv_step_takes_integers_only(bad):
    env = SingleAgentEnv()
    env.reset(seed=0)
    while not env.action_masks()[A.TAKE_DISCARD]:
        env.reset(seed=int(env.np_random.integers(100)))
    history = list(env.aec.match.action_history)
    with pytest.raises(TypeError, match="integer action id"):
        env.step(bad)
    assert env.aec.match.action_history == history
    env.step(np.int64(A.TAKE_DISCARD))  # numpy integers are integers
    assert env.aec.match.action_history[len(history)] == A.TAKE_DISCARD


def test_singleagentenv_step_out_of_bounds_and_before_reset():
    with pytest.raises(RuntimeError, match="before reset"):
        SingleAgentEnv().step(105)
    env = SingleAgentEnv()
    env.reset(seed=0)
    for bad in (-1, A.NUM_ACTIONS):
        with pytest.raises(ValueError, match="out of bounds"):
            env.step(bad)


def test_raw_env_partnership_illegal_action_names_the_seat():
    env = hollywood_gin_v0.raw_env(rules="hollywood_partnership")
    env.reset(seed=0)
    seen = set()
    for _ in range(400):
        agent = env.agent_selection
        mask = env.action_mask()
        illegal = int(np.flatnonzero(~mask.astype(bool))[0])
        if agent not in seen:
            seen.add(agent)
            with pytest.raises(ValueError, match=f"for seat {agent[-1]} \\({agent}\\)"):
                env.step(illegal)
        env.step(int(np.flatnonzero(mask)[-1]))
        if len(seen) == 4:
            break
    assert seen == {"player_0", "player_1", "player_2", "player_3"}


def test_save_match_of_an_unseeded_game_records_a_seed(tmp_path):
    from hgin_cli.cli import load_match, save_match

    match = Match(seed=None)
    for _ in range(30):
        match.apply(match.legal_actions()[-1])
    game = match.current_game
    assert isinstance(match.seed, int)
    data = json.loads(save_match(match, tmp_path / "m.json").read_text())
    assert data["seed"] == match.seed
    _, loaded = load_match(tmp_path / "m.json")
    assert loaded.action_history == match.action_history and loaded.current_game.hands == game.hands
    again = Match(None, seed=match.seed)  # the seed and the actions replay the match
    for action in match.action_history:
        again.apply(action)
    assert again.current_game.hands == game.hands
    assert Match(seed=None).seed != Match(seed=None).seed  # fresh entropy each time


@pytest.mark.parametrize("option", ["big_gin_bonus", "shutout_game_bonus"])
def test_rules_big_gin_bonus_true_is_refused(option):
    for bad in (True, False, 1.5, "31"):
        with pytest.raises(ValueError, match=f"{option}={bad!r}.*not a {type(bad).__name__}"):
            Rules(**{option: bad})
    assert getattr(Rules(**{option: 31}), option) == 31
