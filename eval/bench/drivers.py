"""The benchmark's inputs, timing helpers and drivers: the loops that are timed, ours and the
shared shapes the anchors repeat (see ``eval.bench.run``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eval.bench.anchor_worker import _Uniform
from hgin_env.cards import mask_to_cards
from hgin_env.game import Phase
from hgin_env.loop import run_match
from hgin_env.match import Match
from hgin_env.melds import (
    deadwood_of_mask,
    min_deadwood_batch,
)


# ----------------------------------------------------------------------------- inputs
def random_hands(n: int, size: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(sorted(rng.permutation(52)[:size].tolist())) for _ in range(n)]


def real_play_hands(games: int, seed: int, min_turn: int = 4) -> tuple[list, list]:
    """10-card hands (draw phase, turn >= ``min_turn``) and 11-card hands (discard phase)
    of simple-vs-simple hands played through :func:`hgin_env.loop.run_match` (so :class:`Match` and the
    observation dict)."""
    from agents import make_agent

    agents = [make_agent("simple", seed=seed), make_agent("simple", seed=seed + 1)]
    tens: list[tuple[int, ...]] = []
    elevens: list[tuple[int, ...]] = []

    def collecting(agent: Any) -> Callable[[dict], int]:
        # The hands are read off the engine before each decision (a bench input, not
        # something the agent sees): the acting player's hand in this phase.
        def policy(obs: dict) -> int:
            game = match.current_game
            if game.turns >= min_turn:
                if game.phase == Phase.DRAW:
                    tens.append(mask_to_cards(game.hands[game.current_player]))
                elif game.phase == Phase.DISCARD:
                    elevens.append(mask_to_cards(game.hands[game.current_player]))
            return agent(obs)
        return policy

    policies = [collecting(a) for a in agents]
    for g in range(games):
        match = Match(seed=seed * 100_003 + g, single_hand=True)
        run_match(match, policies)
    return tens, elevens


def hand_stats(hands: Sequence[Sequence[int]]) -> str:
    """Mean deadwood, share of hands with a possible set and with any meld."""
    masks = [sum(1 << c for c in h) for h in hands]
    dws = [deadwood_of_mask(m) for m in masks]
    raw = [sum(min(c % 13 + 1, 10) for c in h) for h in hands]
    sets = sum(1 for h in hands if max(np.bincount([c % 13 for c in h], minlength=13)) >= 3)
    melded = sum(1 for d, r in zip(dws, raw, strict=True) if d < r)
    n = max(len(hands), 1)
    return (f"{len(hands)} hands, mean deadwood {np.mean(dws):.1f}, "
            f"{100 * sets / n:.0f}% with 3+ of a rank, {100 * melded / n:.0f}% with a meld")


# ----------------------------------------------------------------------------- timing helpers
def time_passes(fn: Callable[[Any], Any], items: Sequence[Any], repeat: int) -> tuple[float, list]:
    """Same shape as the worker's ``_time_calls``: a warm-up pass, then ``repeat`` timed passes."""
    first = [fn(x) for x in items]
    total = 0.0
    perf = time.perf_counter
    for _ in range(repeat):
        t0 = perf()
        for x in items:
            fn(x)
        total += perf() - t0
    return total, first


def time_batch(masks: np.ndarray, repeat: int) -> tuple[float, list[int]]:
    first = min_deadwood_batch(masks).tolist()
    total = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        min_deadwood_batch(masks)
        total += time.perf_counter() - t0
    return total, first


def clear_caches() -> None:
    """Empty our LRU caches so that no contender profits from hands another one played."""
    from hgin_env import melds, observation

    melds.cached_deadwood.cache_clear()
    melds.cached_after_discard.cache_clear()
    observation.take_deadwood.cache_clear()


def drive_aec(make: Callable[[], Any], steps: int, seed: int, whole_episodes: bool = True) -> dict[str, float]:
    """Random legal play the standard AEC way (agent_iter / last / step), whole hands (an
    episode each); ``whole_episodes=False`` stops at ``steps`` decisions inside a match (a
    format's episode is a whole match) and counts its finished hands."""
    rng = _Uniform(seed)
    flatnonzero = np.flatnonzero
    clear_caches()
    env = make()
    n = hands = 0
    t0 = time.perf_counter()
    env.reset(seed=seed)
    while True:
        for _agent in env.agent_iter():
            _obs_, _rew, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = flatnonzero(_obs_["action_mask"])
                action = int(legal[rng.pick(len(legal))])
                n += 1
            env.step(action)
            if not whole_episodes and n >= steps:
                break
        if not whole_episodes:
            hands += len(env.match.hand_history)
        else:
            hands += 1
        if n >= steps:
            break
        env.reset()
    seconds = time.perf_counter() - t0
    env.close()
    return {"seconds": seconds, "steps": n, "hands": hands}


def drive_engine(steps: int, seed: int) -> dict[str, float]:
    """Random legal play on a :class:`Hand` directly (a one-hand duel's), whole hands."""
    rng = _Uniform(seed)
    n = hands = 0
    clear_caches()
    t0 = time.perf_counter()
    while n < steps:
        game = Match(seed=seed * 1_000_003 + hands, single_hand=True).current_game
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[rng.pick(len(legal))])
            n += 1
        hands += 1
    return {"seconds": time.perf_counter() - t0, "steps": n, "hands": hands}


def drive_heuristic(name: str, hands: int, seed: int) -> dict[str, float]:
    """Agent-vs-agent hands through :func:`hgin_env.loop.run_match` (observation dict built per decision)."""
    from agents import make_agent

    agents = [make_agent(name, seed=seed), make_agent(name, seed=seed + 1)]
    n = 0
    clear_caches()
    t0 = time.perf_counter()
    for h in range(hands):
        n += len(run_match(Match(seed=seed * 1_000_003 + h, single_hand=True), agents).action_history)
    return {"seconds": time.perf_counter() - t0, "steps": n, "hands": hands}


def drive_batch(n: int, steps: int, seed: int, rules: str = "hollywood", engine: str | None = None
                ) -> dict[str, float]:
    """Random legal play on the batched engine (``engine``: "numba", "numpy", default
    :func:`~hgin_env.compiled.resolve_engine`'s): every step builds all N observations
    and masks, draws one uniform legal action per game (``agents.batched.BatchedRandom``)
    and steps. Construction (dealing the first N hands) is not timed, nor is compiling: the
    kernels are compiled (or loaded from numba's cache) before the clock starts."""
    from agents.batched import BatchedRandom
    from hgin_env.batch import BatchGame
    from hgin_env.batch.engines import warm_kernels

    clear_caches()
    batch = BatchGame(n, rules=rules, seed=seed, engine=engine)
    if batch.engine == "numba":
        warm_kernels()
    agent = BatchedRandom(seed=seed, layout=batch.layout)
    since = np.zeros(n, dtype=np.int64)  # decisions of each game's current hand
    lengths = []
    t0 = time.perf_counter()
    for _ in range(steps):
        obs = batch.observations()
        actions = agent.act(obs, batch.legal_action_masks())
        over = batch.step(actions).hand_over
        since += 1
        if over.any():
            lengths.append(since[over].copy())
            since[over] = 0
    seconds = time.perf_counter() - t0
    # Hands played = decisions / mean decisions of a completed hand: counting completed hands
    # alone would miss the hand each game is in the middle of when the clock stops.
    done = np.concatenate(lengths) if lengths else np.zeros(0)
    hands = n * steps / done.mean() if done.size else 0.0
    return {"seconds": seconds, "steps": n * steps, "hands": hands}


#: train.ppo's arguments at the defaults it had before the batched engine (4 processes with
#: one TrainingEnv each, 1,024 steps per env per rollout, minibatch 512, the network
#: sizes of the imitation policy hgin_ppo.zip), for the training-speed comparison.
PREVIOUS_TRAIN_DEFAULTS = {"vec_env": "subproc", "n_envs": 4, "n_steps": 1024, "batch_size": 512,
                           "hidden": 256, "summary": 128, "card_hidden": 64}


#: The faster learner (docs/learning.md): one trunk for actor and critic (today's recipe:
#: two trunks), which learns as much per step; and the same with two epochs of minibatches
#: of 2,048 (four of 1,024 today), faster still but it learns less per step.
FAST_LEARNER = {"shared_trunk": True}
#: ``train.ppo --pipeline on``: the pipelined learner beside the synchronous default.
PIPELINED_TRAINING = {"pipeline": "on"}
FASTEST_LEARNER = {"shared_trunk": True, "n_epochs": 2, "batch_size": 2048}


def _warm_opponent_loop() -> None:
    """Compile the opponents' loop before the clock starts, where this checkout has one
    (``agents.opponent_loop``, issue 53): a commit compared without it simply has none."""
    try:
        from agents.opponent_loop import warm_opponent_loop
    except ImportError:
        return
    warm_opponent_loop()


def drive_training(steps: int, seed: int, extra: dict | None = None, engine: str | None = None
                   ) -> dict[str, float]:
    """``train.ppo`` against Simple for ``steps`` environment steps (whole rollouts), with no
    evaluation or checkpoints; timed from the call to its return (environment start-up,
    PPO updates, saving and plotting included). ``extra``: ``Args`` fields that differ from
    the defaults (e.g. :data:`PREVIOUS_TRAIN_DEFAULTS`, :data:`FAST_LEARNER`). ``engine``:
    the batched engine's implementation for this run (``$HGIN_ENGINE`` while it trains)."""
    import os
    import tempfile

    from hgin_env.batch.engines import warm_kernels
    from hgin_env.compiled import ENGINE_VARIABLE
    from train.ppo import Args, resolved, train

    extra = extra or {}
    before = os.environ.get(ENGINE_VARIABLE)
    if engine is not None:
        os.environ[ENGINE_VARIABLE] = engine
    try:
        warm_kernels()
        _warm_opponent_loop()
        with tempfile.TemporaryDirectory() as tmp:
            args = Args(run_name="bench", out_dir=tmp, seed=seed, total_timesteps=steps, opponents="simple:1",
                        eval_every=0, checkpoint_every=0, progress_bar=False, **extra)
            t0 = time.perf_counter()
            train(args)
            seconds = time.perf_counter() - t0
    finally:
        if before is None:
            os.environ.pop(ENGINE_VARIABLE, None)
        else:
            os.environ[ENGINE_VARIABLE] = before
    full = resolved(args)
    rollout = full.n_envs * full.n_steps
    return {"seconds": seconds, "steps": -(-steps // rollout) * rollout}
