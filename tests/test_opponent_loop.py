"""The compiled opponent loop (:mod:`agents.opponent_loop`) against the Python loop of
``LearnerBatch._play_opponents``: for the same seed, the very same trajectory (opponents'
moves, observations, masks, rewards, finished summaries) and the same draws from every
generator, step by step, in every format, through ``LearnerBatch``, Gymnasium's
``HollywoodVectorEnv`` and SB3's ``BatchedVecEnv``; and bad input raising as before."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import agents.opponent_loop as opponent_loop  # noqa: E402
from agents.batched import BatchedExpert, BatchedRandom, BatchedSimple  # noqa: E402
from agents.openspiel_bot import BatchedOpenSpielBot  # noqa: E402
from hgin_env.batch.vector import HollywoodVectorEnv, LearnerBatch  # noqa: E402
from hgin_env.observation import ObservationLayout  # noqa: E402
from hgin_env.rules import get_rules  # noqa: E402


def _pool(kind: str, rules: str) -> tuple[list, object | None]:
    """A fresh opponent pool (and partner agent) of ``kind`` for ``rules``' layout."""
    lay = ObservationLayout.for_rules(get_rules(rules))
    simple = BatchedSimple(seed=11, layout=lay)
    pools = {
        "simple": ([simple], None),
        "expert": ([BatchedExpert(seed=12, layout=lay)], None),
        "bot": ([BatchedOpenSpielBot(seed=13, layout=lay)], None) if lay.format == "duel" else None,
        # The same Simple object twice (one generator, drawn in the Python loop's order), a
        # second Simple with its own generator, the Expert, and in a duel the bot.
        "mixture": ([simple, BatchedExpert(seed=12, layout=lay), simple, BatchedSimple(seed=14, layout=lay)]
                    + ([BatchedOpenSpielBot(seed=13, layout=lay)] if lay.format == "duel" else []), None),
        # A partnership's partner agent (a Simple that is an opponent too: one generator).
        "partner": ([simple, BatchedExpert(seed=12, layout=lay)], simple),
    }
    return pools[kind]


def _generators(agents: list) -> list:
    return [a.rng.bit_generator.state for a in agents] + [getattr(a, "fallbacks", None) for a in agents]


def _legal_random(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


CASES = [("hollywood", "simple", False), ("hollywood", "expert", False), ("hollywood", "bot", False),
         ("hollywood", "mixture", False), ("hollywood", "mixture", True),
         ("hollywood_three_hand", "simple", False), ("hollywood_three_hand", "mixture", False),
         ("hollywood_three_hand", "expert", False),
         ("hollywood_partnership", "mixture", False), ("hollywood_partnership", "partner", False),
         ("hollywood_partnership", "expert", False)]


def _learner_batch(rules: str, kind: str, single_hand: bool, compiled: bool, n: int, **kwargs) -> tuple:
    opponents, partner = _pool(kind, rules)
    lb = LearnerBatch(n, opponents, rules=rules, seed=5, partner=partner, single_hand=single_hand,
                      compiled_opponents=compiled, **kwargs)
    agents = list(dict.fromkeys(opponents + ([partner] if partner is not None else [])))
    return lb, agents


@pytest.mark.parametrize("rules,kind,single_hand", CASES)
@pytest.mark.parametrize("n", [2, 24])
def test_learner_batch_same_trajectory(rules: str, kind: str, single_hand: bool, n: int) -> None:
    """Step by step: the compiled loop's batch equals the Python loop's (n=2 also runs the
    uniform buffer short, so the kernel returns for more)."""
    shaping = {"shaping": 0.5, "shaping_gamma": 0.99} if kind == "mixture" else {}
    runs = [_learner_batch(rules, kind, single_hand, compiled, n, reward="points", match_bonus=1.0, **shaping)
            for compiled in (True, False)]
    (fast, fast_agents), (slow, slow_agents) = runs
    assert fast._compiled_loop() is not None and slow._compiled_loop() is None
    moves = [np.random.default_rng(3), np.random.default_rng(3)]
    finished = 0
    for step in range(150):
        views = [(lb.observations().copy(), lb.action_masks().copy()) for lb, _ in runs]
        np.testing.assert_array_equal(views[0][0], views[1][0], err_msg=f"observations, step {step}")
        np.testing.assert_array_equal(views[0][1], views[1][1], err_msg=f"masks, step {step}")
        out = [lb.step(_legal_random(rng, view[1])) for (lb, _), rng, view in zip(runs, moves, views, strict=True)]
        for a, b in zip(out[0][:3], out[1][:3], strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")
        assert out[0][3] == out[1][3], f"finished, step {step}"
        finished += len(out[0][3])
        np.testing.assert_array_equal(fast.seat, slow.seat)
        np.testing.assert_array_equal(fast.opponent_index, slow.opponent_index)
        np.testing.assert_array_equal(fast.episode_return, slow.episode_return)
        np.testing.assert_array_equal(fast.batch.current_seat, slow.batch.current_seat)
    assert fast.generator_state() == slow.generator_state()
    assert _generators(fast_agents) == _generators(slow_agents)
    assert [r.bit_generator.state for r in fast.batch.rngs] == [r.bit_generator.state for r in slow.batch.rngs]
    assert finished > 0 or n == 2


def test_short_buffer_and_hand_ends_return_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel comes back for each hand that ends and for more uniforms, and never leaves
    a pass to Python in ordinary play."""
    seen: list[int] = []
    run = opponent_loop.OpponentLoop.run

    def counting(self, *args):
        out = run(self, *args)
        seen.append(out[0])
        return out

    monkeypatch.setattr(opponent_loop.OpponentLoop, "run", counting)
    lb, _ = _learner_batch("hollywood_three_hand", "simple", False, True, 1)
    rng = np.random.default_rng(0)
    for _ in range(60):
        lb.step(_legal_random(rng, lb.action_masks()))
    assert {opponent_loop.WAITING, opponent_loop.HAND_ENDED, opponent_loop.REFILL} <= set(seen)
    assert opponent_loop.TO_PYTHON not in seen


def test_pools_without_a_compiled_form_keep_the_python_loop() -> None:
    """Random (no compiled form), a numpy-engine agent, a mismatched layout: the Python loop."""
    lay = ObservationLayout.for_rules(get_rules("hollywood"))
    for pool in ([BatchedSimple(seed=1, layout=lay), BatchedRandom(seed=2, layout=lay)],
                 [BatchedExpert(seed=1, layout=lay, engine="numpy")],
                 [BatchedSimple(seed=1, layout=ObservationLayout(5))]):
        assert LearnerBatch(4, pool, rules="hollywood", seed=0)._compiled_loop() is None
    assert LearnerBatch(4, [BatchedSimple(seed=1, layout=lay)], rules="hollywood", seed=0)._compiled_loop() is not None


def test_an_opponent_error_raises_as_before() -> None:
    """A pass the kernel will not decide (the bot refuses a knock limit above OpenSpiel's
    10) goes to the Python loop, which raises what it raised; a bad learner action is
    refused before anything moves, as before."""
    rules = get_rules("hollywood").replace(knock_limit=15, oklahoma=False)
    lay = ObservationLayout.for_rules(rules)
    errors = []
    for compiled in (True, False):
        lb = LearnerBatch(4, [BatchedSimple(seed=1, layout=lay), BatchedOpenSpielBot(seed=2, layout=lay)],
                          rules=rules, seed=3, compiled_opponents=compiled)
        with pytest.raises(ValueError) as info:
            for _ in range(20):
                lb.step(np.argmax(lb.action_masks(), axis=1))
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "knock limits up to 10" in errors[0]
    lb, _ = _learner_batch("hollywood_three_hand", "simple", False, True, 4)
    masks = lb.action_masks()
    bad = np.argmax(masks, axis=1)
    bad[0] = np.flatnonzero(~masks[0])[0]
    before = lb.observations().copy()
    with pytest.raises(ValueError):
        lb.step(bad)
    np.testing.assert_array_equal(lb.observations(), before)


def test_vector_envs_same_trajectory() -> None:
    """Gymnasium's ``HollywoodVectorEnv`` and SB3's ``BatchedVecEnv`` (``train.ppo``'s path):
    the compiled loop gives the Python loop's steps."""
    pytest.importorskip("stable_baselines3")
    from train.envs import BatchedVecEnv

    for rules in ("hollywood", "hollywood_three_hand", "hollywood_partnership"):
        lay = ObservationLayout.for_rules(get_rules(rules))
        envs = [HollywoodVectorEnv(8, [BatchedSimple(seed=1, layout=lay), BatchedExpert(seed=2, layout=lay)],
                                   rules=rules, seed=4) for _ in range(2)]
        envs[1].core.compiled_opponents = False
        outs = [env.reset() for env in envs]
        assert envs[0].core._compiled_loop() is not None and envs[1].core._compiled_loop() is None
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        rng = np.random.default_rng(2)
        for _ in range(60):
            actions = _legal_random(rng, outs[0][1]["action_mask"])
            outs = [env.step(actions) for env in envs]
            for a, b in zip(outs[0][:4], outs[1][:4], strict=True):
                np.testing.assert_array_equal(a, b)
            assert outs[0][4].keys() == outs[1][4].keys()
            for key in outs[0][4]:
                assert repr(outs[0][4][key].tolist()) == repr(outs[1][4][key].tolist()), key
            outs = [(o[0], o[4]) for o in outs]
        vecs = [BatchedVecEnv(8, ["simple", "expert"], rules=rules, seed=6, shaping=0.5) for _ in range(2)]
        vecs[1].core.compiled_opponents = False
        assert vecs[0].core._compiled_loop() is not None and vecs[1].core._compiled_loop() is None
        obs = [v.reset() for v in vecs]
        for _ in range(60):
            np.testing.assert_array_equal(obs[0], obs[1])
            actions = _legal_random(rng, vecs[0].action_masks())
            for v in vecs:
                v.step_async(actions)
            steps = [v.step_wait() for v in vecs]
            for a, b in zip(steps[0][:3], steps[1][:3], strict=True):
                np.testing.assert_array_equal(a, b)
            assert repr(steps[0][3]) == repr(steps[1][3])
            obs = [s[0] for s in steps]
        assert vecs[0].core.generator_state() == vecs[1].core.generator_state()
