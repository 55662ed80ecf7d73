"""Speed benchmark of hgin_env against OpenSpiel, RLCard and PettingZoo gin rummy.

    python -m eval.bench.run                 # full run (a few minutes), anchors if installed
    python -m eval.bench.run --quick         # small sizes (a few seconds)
    python -m eval.bench.run --no-anchors    # ours only

One invocation on one machine: every benchmark runs ``--rounds`` rounds and in each round
every contender runs once on the same inputs (the order rotates from round to round), so
slow drifts of a busy machine hit every contender alike. The table reports the median
per-unit time over the rounds and, for each anchor, the median over rounds of the per-round
ratio of its time to ours ("ours x faster").

The anchors (OpenSpiel, RLCard, PettingZoo ``gin_rummy_v4``) run in their own venv behind
:class:`eval.bench.anchors.AnchorWorker`; their timings are taken inside the worker with the
same loop shape as ours (one warm-up pass, then timed passes over the same inputs), so the
JSON-lines transport is never timed. Without ``bench_venv`` only our contenders run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.bench.anchor_worker import _Uniform
from eval.bench.anchors import AnchorWorker
from hgin_env.cards import mask_to_cards
from hgin_env.game import Game, Phase
from hgin_env.match import Match
from hgin_env.melds import (
    deadwood_after_discard_mask,
    deadwood_of_mask,
    min_deadwood,
    min_deadwood_batch,
)

DEFAULT_OUT = Path("runs/bench")
GROUPS = ("meld", "discard", "env", "heuristic", "batch", "expert", "train")


def record_play(steps_b: Any, hands_b: Any, unit: str, label: str, rep: dict, ours: bool, note: str,
                decisions: str = "steps") -> None:
    """One play report into a per-decision bench (``unit``: "step" or "decision") and its
    per-hand twin, with the decisions per hand noted."""
    steps_b.row(label, unit, ours, note).times.append(rep["seconds"] / rep[decisions])
    hr = hands_b.row(label, "hand", ours, note)
    if rep["hands"]:
        hr.times.append(rep["seconds"] / rep["hands"])
    hr.extra.setdefault("decisions_per_hand", []).append(rep[decisions] / max(rep["hands"], 1))


# ----------------------------------------------------------------------------- sizes
@dataclass
class Sizes:
    rounds: int = 7
    hands: int = 2000  # 10-card hands per meld set
    meld_repeat: int = 10  # passes over the hands per round (ours and OpenSpiel)
    rlcard_hands: int = 150  # RLCard is ~100x slower: a prefix of the hands, one pass
    hands11: int = 500  # 11-card hands for the after-discard benchmark
    discard_repeat: int = 4
    rlcard_hands11: int = 30
    env_steps: int = 20000  # decisions per round for each env contender
    pz_steps: int = 3000  # PettingZoo is slow: fewer steps (per-step time is what counts)
    heuristic_hands: int = 30  # heuristic hands per round (simple, expert)
    real_games: int = 300  # simple-vs-simple hands played to collect real-play hands
    batch_n: int = 1024  # games in the batched engine
    batch_steps: int = 300  # batched steps per round (batch_n decisions each)
    os_observed_steps: int = 3000  # OpenSpiel decisions per round with observation tensor + mask
    train_steps: int = 16384  # environment steps per PPO training contender (0 = skip)
    train_rounds: int = 2  # rounds that include the (slow) training contenders
    expert_calls: int = 6  # batches of expert_n states the batched Expert decides per round
    expert_row_calls: int = 1  # of those, how many the row-by-row Expert decides per round
    expert_n: int = 256  # states per call (the N)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(rounds=3, hands=300, meld_repeat=3, rlcard_hands=40, hands11=100,
                   discard_repeat=2, rlcard_hands11=10, env_steps=1500, pz_steps=500,
                   heuristic_hands=3, real_games=40, batch_steps=40, os_observed_steps=800,
                   train_steps=4096, train_rounds=1, expert_calls=3)

    @classmethod
    def tiny(cls) -> Sizes:
        return cls(rounds=2, hands=40, meld_repeat=1, rlcard_hands=10, hands11=20,
                   discard_repeat=1, rlcard_hands11=3, env_steps=200, pz_steps=100,
                   heuristic_hands=1, real_games=6, batch_n=64, batch_steps=20, os_observed_steps=100,
                   train_steps=0, train_rounds=0, expert_calls=1, expert_n=64)


# ----------------------------------------------------------------------------- results
@dataclass
class Row:
    bench: str
    contender: str
    unit: str
    ours: bool = False
    note: str = ""
    times: list[float] = field(default_factory=list)  # seconds per unit, one per round
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")


@dataclass
class Bench:
    """One benchmark: its contenders' rows; ``ref`` names our reference row."""

    name: str
    title: str
    ref: str
    rows: dict[str, Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def row(self, contender: str, unit: str, ours: bool = False, note: str = "") -> Row:
        if contender not in self.rows:
            self.rows[contender] = Row(self.name, contender, unit, ours, note)
        return self.rows[contender]

    def ratio(self, contender: str, ref: str | None = None) -> float:
        """Median over rounds of time(contender) / time(ref): how many times ``ref`` is faster."""
        a, b = self.rows[contender].times, self.rows[ref or self.ref].times
        n = min(len(a), len(b))
        if not n:
            return float("nan")
        return statistics.median(a[i] / b[i] for i in range(n))


# ----------------------------------------------------------------------------- inputs
def random_hands(n: int, size: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(sorted(rng.permutation(52)[:size].tolist())) for _ in range(n)]


def real_play_hands(games: int, seed: int, min_turn: int = 4) -> tuple[list, list]:
    """10-card hands (draw phase, turn >= ``min_turn``) and 11-card hands (discard phase)
    of simple-vs-simple hands played through :meth:`Match.play` (so :class:`Game` and the
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
        match.play(policies)
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


def drive_aec(make: Callable[[], Any], steps: int, seed: int) -> dict[str, float]:
    """Random legal play the standard AEC way (agent_iter / last / step), whole hands."""
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
        hands += 1
        if n >= steps:
            break
        env.reset()
    seconds = time.perf_counter() - t0
    env.close()
    return {"seconds": seconds, "steps": n, "hands": hands}


def drive_engine(steps: int, seed: int) -> dict[str, float]:
    """Random legal play on :class:`Game` directly (one hand per game), whole hands."""
    rng = _Uniform(seed)
    n = hands = 0
    clear_caches()
    t0 = time.perf_counter()
    while n < steps:
        game = Game(seed=seed * 1_000_003 + hands, single_hand=True)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[rng.pick(len(legal))])
            n += 1
        hands += 1
    return {"seconds": time.perf_counter() - t0, "steps": n, "hands": hands}


def drive_heuristic(name: str, hands: int, seed: int) -> dict[str, float]:
    """Agent-vs-agent hands through :meth:`Match.play` (observation dict built per decision)."""
    from agents import make_agent

    agents = [make_agent(name, seed=seed), make_agent(name, seed=seed + 1)]
    n = 0
    clear_caches()
    t0 = time.perf_counter()
    for h in range(hands):
        n += len(Match(seed=seed * 1_000_003 + h, single_hand=True).play(agents).action_history)
    return {"seconds": time.perf_counter() - t0, "steps": n, "hands": hands}


def drive_batch(n: int, steps: int, seed: int) -> dict[str, float]:
    """Random legal play on the batched engine: every step builds all N observations and
    masks, draws one uniform legal action per game (``agents.batched.BatchedRandom``) and
    steps. Construction (dealing the first N hands) is not timed."""
    from agents.batched import BatchedRandom
    from hgin_env.batch import BatchGame

    clear_caches()
    batch = BatchGame(n, seed=seed)
    agent = BatchedRandom(seed=seed)
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
#: one TrainingEnv each, 1,024 steps per env per rollout, minibatch 512, the shipped
#: network sizes), for the training-speed comparison.
PREVIOUS_TRAIN_DEFAULTS = {"vec_env": "subproc", "n_envs": 4, "n_steps": 1024, "batch_size": 512,
                           "hidden": 256, "summary": 128, "card_hidden": 64}


def drive_training(steps: int, seed: int, previous: bool) -> dict[str, float]:
    """``train.ppo`` against Simple for ``steps`` environment steps (whole rollouts), with no
    evaluation or checkpoints; timed from the call to its return (environment start-up,
    PPO updates, saving and plotting included)."""
    import tempfile

    from train.ppo import Args, resolved, train

    extra = PREVIOUS_TRAIN_DEFAULTS if previous else {}
    with tempfile.TemporaryDirectory() as tmp:
        args = Args(run_name="bench", out_dir=tmp, seed=seed, total_timesteps=steps, opponents="simple:1",
                    eval_every=0, checkpoint_every=0, progress_bar=False, **extra)
        t0 = time.perf_counter()
        train(args)
        seconds = time.perf_counter() - t0
    full = resolved(args)
    rollout = full.n_envs * full.n_steps
    return {"seconds": seconds, "steps": -(-steps // rollout) * rollout}


# ----------------------------------------------------------------------------- the run
class Runner:
    def __init__(self, sizes: Sizes, anchors: AnchorWorker | None, seed: int, log: Callable,
                 only: Sequence[str] = GROUPS) -> None:
        self.s = sizes
        self.only = set(only)
        self.anchors = anchors
        self.seed = seed
        self.log = log
        self.benches: dict[str, Bench] = {}
        self.checks: list[str] = []
        self.inputs: dict[str, str] = {}
        self.meld_mismatch: dict[str, dict[str, int]] = {}

    def bench(self, name: str, title: str, ref: str) -> Bench:
        self.benches[name] = Bench(name, title, ref)
        return self.benches[name]

    # -------------------------------------------------------------- meld evaluation
    def meld_contenders(self, name: str, hands: list[tuple[int, ...]]) -> list[Callable[[int], None]]:
        s, b = self.s, self.benches[name]
        masks = [sum(1 << c for c in h) for h in hands]
        masks_arr = np.array(masks, dtype=np.uint64)
        rl_hands = hands[: s.rlcard_hands]
        want = [deadwood_of_mask(m) for m in masks]
        mismatches: dict[str, int] = {}
        n = len(hands)

        def check(label: str, got: list[int], ref: list[int] | None = None) -> None:
            ref = want if ref is None else ref
            mismatches[label] = sum(1 for x, y in zip(got, ref, strict=True) if int(x) != int(y))

        def ours_mask(_r: int) -> None:
            sec, got = time_passes(deadwood_of_mask, masks, s.meld_repeat)
            b.row("ours deadwood_of_mask", "call", True, "uncached, from a 52-bit int mask") \
                .times.append(sec / (n * s.meld_repeat))
            check("ours deadwood_of_mask", got)

        def ours_ids(_r: int) -> None:
            sec, got = time_passes(min_deadwood, hands, s.meld_repeat)
            b.row("ours min_deadwood", "call", True, "uncached, from a tuple of 10 card ids") \
                .times.append(sec / (n * s.meld_repeat))
            check("ours min_deadwood", got)

        def ours_batch(_r: int) -> None:
            sec, got = time_batch(masks_arr, s.meld_repeat)
            b.row("ours min_deadwood_batch", "hand", True, f"one numpy call over {n} masks") \
                .times.append(sec / (n * s.meld_repeat))
            check("ours min_deadwood_batch", got)

        out = [ours_ids, ours_mask, ours_batch]
        if self.anchors is not None:
            w = self.anchors

            def openspiel(_r: int) -> None:
                rep = w.meld_openspiel(hands, repeat=s.meld_repeat)
                b.row("OpenSpiel GinRummyUtils.min_deadwood", "call", note="C++ via pybind11, list of ids") \
                    .times.append(rep["seconds"] / rep["calls"])
                check("OpenSpiel", rep["deadwood"])

            def rlcard(_r: int) -> None:
                rep = w.meld_rlcard(rl_hands, repeat=1)
                b.row("RLCard get_best_meld_clusters", "call",
                      note=f"pure Python, first {len(rl_hands)} hands") \
                    .times.append(rep["seconds"] / rep["calls"])
                check("RLCard", rep["deadwood"], want[: len(rl_hands)])

            out += [openspiel, rlcard]
        self.meld_mismatch[name] = mismatches
        return out

    def discard_contenders(self, name: str, hands: list[tuple[int, ...]]) -> list[Callable[[int], None]]:
        s, b = self.s, self.benches[name]
        masks = [sum(1 << c for c in h) for h in hands]
        n = len(hands)
        want = [[d[c] for c in h] for h, d in zip(hands, map(deadwood_after_discard_mask, masks),
                                                      strict=True)]
        mismatches: dict[str, int] = {}

        def check(label: str, got: list[list[int]], ref: list[list[int]]) -> None:
            mismatches[label] = sum(1 for x, y in zip(got, ref, strict=True) if list(x) != list(y))

        def ours(_r: int) -> None:
            sec, got = time_passes(deadwood_after_discard_mask, masks, s.discard_repeat)
            b.row("ours deadwood_after_discard_mask", "11-card hand", True,
                  "uncached, one call -> all 11 discards").times.append(sec / (n * s.discard_repeat))
            check("ours", [[d[c] for c in h] for h, d in zip(hands, got, strict=True)], want)

        out = [ours]
        if self.anchors is not None:
            w = self.anchors
            rl = hands[: s.rlcard_hands11]

            def openspiel(_r: int) -> None:
                rep = w.discards_openspiel(hands, repeat=s.discard_repeat)
                b.row("OpenSpiel min_deadwood x11", "11-card hand",
                      note="11 calls on the 10-card subsets").times.append(rep["seconds"] / rep["hands"])
                check("OpenSpiel", rep["deadwood"], want)

            def rlcard(_r: int) -> None:
                rep = w.discards_rlcard(rl, repeat=1)
                b.row("RLCard melding x11", "11-card hand", note=f"first {len(rl)} hands") \
                    .times.append(rep["seconds"] / rep["hands"])
                check("RLCard", rep["deadwood"], want[: len(rl)])

            out += [openspiel, rlcard]
        self.meld_mismatch[name] = mismatches
        return out

    # -------------------------------------------------------------- environments
    def env_contenders(self) -> list[Callable[[int], None]]:
        from hgin_env import hollywood_gin_v0

        s = self.s
        steps_b = self.bench("env_steps", "Random legal play: time per decision (step)", "ours raw_env")
        hands_b = self.bench("env_hands", "Random legal play: time per hand", "ours raw_env")

        def record(label: str, rep: dict, ours: bool, note: str, decisions: str = "steps") -> None:
            record_play(steps_b, hands_b, "step", label, rep, ours, note, decisions)

        def raw(r: int) -> None:
            rep = drive_aec(lambda: hollywood_gin_v0.raw_env(episode="hand"), s.env_steps, self.seed + 1000 + r)
            record("ours raw_env", rep, True, "AEC raw_env(episode='hand'), agent_iter/last/step")

        def wrapped(r: int) -> None:
            rep = drive_aec(lambda: hollywood_gin_v0.env(episode="hand"), s.env_steps, self.seed + 2000 + r)
            record("ours env() wrapped", rep, True,
                   "hollywood_gin_v0.env(): PettingZoo's wrapper checks, done natively (GuardedEnv)")

        def engine(r: int) -> None:
            rep = drive_engine(s.env_steps, self.seed + 3000 + r)
            record("ours Game engine", rep, True, "Game.legal_actions/apply, no observation")

        out = [raw, wrapped, engine]
        if self.anchors is not None:
            w = self.anchors

            def pettingzoo(r: int) -> None:
                rep = w.env_pettingzoo(s.pz_steps, seed=self.seed + 4000 + r)
                record("PettingZoo gin_rummy_v4", rep, False, "env() wrapped, RLCard engine")

            def openspiel(r: int) -> None:
                rep = w.env_openspiel(s.env_steps, seed=self.seed + 5000 + r)
                record("OpenSpiel gin_rummy (Python)", rep, False,
                       "pyspiel legal_actions/apply_action; chance actions applied in the loop, not counted",
                       decisions="decisions")

            def openspiel_obs(r: int) -> None:
                rep = w.env_openspiel(s.env_steps, seed=self.seed + 6000 + r, observe=True)
                record(OPENSPIEL_OBS, rep, False,
                       "pyspiel with observation_tensor + legal_actions_mask as numpy arrays each "
                       "decision (what a learner needs); chance actions not counted", decisions="decisions")

            out += [pettingzoo, openspiel, openspiel_obs]
        return out

    def heuristic_contenders(self) -> list[Callable[[int], None]]:
        s = self.s
        b = self.bench("heuristic", "Heuristic self-play through Match.play (ours only)", "simple vs simple")

        def run(name: str) -> Callable[[int], None]:
            def go(r: int) -> None:
                rep = drive_heuristic(name, s.heuristic_hands, self.seed + 7 * r)
                row = b.row(f"{name} vs {name}", "hand", True,
                            "obs = observation.observe() per decision")
                row.times.append(rep["seconds"] / rep["hands"])
                row.extra.setdefault("decisions_per_hand", []).append(rep["steps"] / rep["hands"])
            return go

        return [run("simple"), run("expert")]

    def batch_contenders(self) -> list[Callable[[int], None]]:
        s = self.s
        steps_b = self.bench("batch_steps", "Random legal play with an observation and a legal-action mask at "
                             "every decision: time per decision", f"ours BatchGame N={s.batch_n}")
        hands_b = self.bench("batch_hands", "Random legal play: time per hand", f"ours BatchGame N={s.batch_n}")

        def record(label: str, rep: dict, ours: bool, note: str, decisions: str = "steps") -> None:
            record_play(steps_b, hands_b, "decision", label, rep, ours, note, decisions)

        def batched(r: int) -> None:
            rep = drive_batch(s.batch_n, s.batch_steps, self.seed + 8000 + r)
            record(f"ours BatchGame N={s.batch_n}", rep, True,
                   "observations() [N,394] + legal_action_masks() [N,108] + BatchedRandom + step, one core")

        def raw(r: int) -> None:
            from hgin_env import hollywood_gin_v0

            rep = drive_aec(lambda: hollywood_gin_v0.raw_env(episode="hand"), s.os_observed_steps,
                            self.seed + 8500 + r)
            record("ours raw_env", rep, True, "AEC raw_env(episode='hand'): observation + mask per decision")

        out = [batched, raw]
        if self.anchors is not None:
            w = self.anchors

            def observed(r: int) -> None:
                rep = w.env_openspiel(s.os_observed_steps, seed=self.seed + 9000 + r, observe=True)
                record(OPENSPIEL_OBS, rep, False,
                       "observation_tensor + legal_actions_mask as numpy per decision; chance actions "
                       "in the loop", decisions="decisions")

            def bare(r: int) -> None:
                rep = w.env_openspiel(s.os_observed_steps, seed=self.seed + 9500 + r)
                record("OpenSpiel gin_rummy (Python)", rep, False,
                       "legal_actions/apply_action only", decisions="decisions")

            out += [observed, bare]
        return out

    def agent_contenders(self) -> list[Callable[[int], None]]:
        """Batched agents deciding on the same stored states (observations + masks of a
        Simple-vs-Simple batch), timed per decision."""
        from agents.batched import BatchedSimple, make_batched_agent
        from hgin_env.batch import BatchGame

        s = self.s
        n = min(s.batch_n, 256)
        batch, player = BatchGame(n, seed=self.seed), BatchedSimple(seed=self.seed)
        states = []
        for _ in range(max(2, s.batch_steps // 10)):
            obs, masks = batch.observations().copy(), batch.legal_action_masks().copy()
            states.append((obs, masks))
            batch.step(player.act(obs, masks))
        b = self.bench("batch_agents", f"Batched agents: time per decision on stored states (N={n} per call)",
                       "random (batched)")

        def run(name: str, label: str, note: str) -> Callable[[int], None]:
            agent = make_batched_agent(name, seed=self.seed)

            def go(r: int) -> None:
                todo = states if name != "expert" else states[:2]
                t0 = time.perf_counter()
                for obs, masks in todo:
                    agent.act(obs, masks)
                b.row(label, "decision", True, note).times.append(
                    (time.perf_counter() - t0) / (len(todo) * n))
            return go

        return [run("random", "random (batched)", "BatchedRandom: a few numpy calls"),
                run("simple", "simple (batched)", "BatchedSimple: vectorised Neller rules"),
                run("expert", "expert (batched)", "BatchedExpert: the Expert's decisions in numpy")]

    def expert_contenders(self) -> list[Callable[[int], None]]:
        """The batched Expert against the row-by-row Expert (``RowByRow(ExpertAgent)``) on
        the same stored states: ``expert_n`` rows per call, taken from Expert-vs-Simple
        matches on the batched engine (draw and discard decisions, early and late in hands)."""
        from agents.batched import BatchedExpert, BatchedSimple, RowByRow
        from agents.expert import ExpertAgent
        from hgin_env.batch import BatchGame

        s = self.s
        n = s.expert_n
        batch = BatchGame(n, seed=self.seed + 31)
        players = (BatchedExpert(seed=self.seed), BatchedSimple(seed=self.seed))
        pool_obs, pool_masks = [], []
        for step in range(10 + 8 * s.expert_calls):
            obs, masks = batch.observations().copy(), batch.legal_action_masks().copy()
            if step >= 10:
                pool_obs.append(obs)
                pool_masks.append(masks)
            seat0 = batch.current_player == 0
            batch.step(np.where(seat0, players[0].act(obs, masks), players[1].act(obs, masks)))
        # The games start together, so one step's rows share a phase: shuffle the pooled rows
        # into calls that mix draw and discard decisions at every stage of a hand.
        order = np.random.default_rng(self.seed).permutation(len(pool_obs) * n)
        all_obs, all_masks = np.concatenate(pool_obs)[order], np.concatenate(pool_masks)[order]
        states = [(all_obs[i * n:(i + 1) * n], all_masks[i * n:(i + 1) * n]) for i in range(s.expert_calls)]
        b = self.bench("expert_agents", f"The Expert batched and row by row: time per decision on the same "
                       f"stored states (N={n} per call, Expert-vs-Simple matches)", "expert (batched)")
        batched, rows = BatchedExpert(seed=self.seed), RowByRow(ExpertAgent(seed=self.seed))

        def run(agent: Any, label: str, calls: int, note: str) -> Callable[[int], None]:
            def go(r: int) -> None:
                todo = [states[(r + i) % len(states)] for i in range(calls)]
                t0 = time.perf_counter()
                for obs, masks in todo:
                    agent.act(obs, masks)
                b.row(label, "decision", True, note).times.append((time.perf_counter() - t0) / (calls * n))
            return go

        return [run(batched, "expert (batched)", s.expert_calls, "BatchedExpert: one call per batch"),
                run(rows, "expert (row by row)", s.expert_row_calls,
                    "RowByRow(ExpertAgent): one Python call per row")]

    def train_contenders(self) -> list[Callable[[int], None]]:
        s = self.s
        b = self.bench("train_steps", "PPO training against Simple (train.ppo): time per environment step, "
                       "updates included", "ours train.ppo (batched, default)")

        def run(label: str, previous: bool, note: str) -> Callable[[int], None]:
            def go(r: int) -> None:
                if r >= s.train_rounds:
                    return
                rep = drive_training(s.train_steps, self.seed + r, previous)
                row = b.row(label, "step", True, note)
                row.times.append(rep["seconds"] / rep["steps"])
            return go

        return [run("ours train.ppo (batched, default)", False,
                    "128 games in one process, minibatch 1024, card net 128/64/32"),
                run("train.ppo previous defaults (--vec-env subproc)", True,
                    "4 processes x TrainingEnv, n_steps 1024, minibatch 512, card net 256/128/64")]

    # -------------------------------------------------------------- driver
    def run(self) -> None:
        s = self.s
        self.log("collecting hands ...")
        rnd10 = random_hands(s.hands, 10, self.seed)
        real10, real11 = real_play_hands(s.real_games, self.seed)
        rng = np.random.default_rng(self.seed + 5)
        real10 = [real10[i] for i in rng.permutation(len(real10))[: s.hands]]
        real11 = [real11[i] for i in rng.permutation(len(real11))[: s.hands11]]
        rnd11 = random_hands(s.hands11, 11, self.seed + 1)
        self.inputs = {
            "random 10-card": hand_stats(rnd10),
            "real-play 10-card": hand_stats(real10) + f" (from {s.real_games} simple-vs-simple hands)",
            "random 11-card": hand_stats(rnd11),
            "real-play 11-card": hand_stats(real11),
        }
        for k, v in self.inputs.items():
            self.log(f"  {k}: {v}")
        self.bench("meld_random", "Min deadwood, random 10-card hands", "ours min_deadwood")
        self.bench("meld_real", "Min deadwood, real-play 10-card hands", "ours min_deadwood")
        self.bench("discard_random", "Deadwood after each discard, random 11-card hands",
                   "ours deadwood_after_discard_mask")
        self.bench("discard_real", "Deadwood after each discard, real-play 11-card hands",
                   "ours deadwood_after_discard_mask")
        groups = []
        if "meld" in self.only:
            groups += [self.meld_contenders("meld_random", rnd10), self.meld_contenders("meld_real", real10)]
        if "discard" in self.only:
            groups += [self.discard_contenders("discard_random", rnd11),
                       self.discard_contenders("discard_real", real11)]
        if "env" in self.only:
            groups.append(self.env_contenders())
        if "heuristic" in self.only:
            groups.append(self.heuristic_contenders())
        if "batch" in self.only:
            groups.append(self.batch_contenders())
            groups.append(self.agent_contenders())
        if "expert" in self.only:
            groups.append(self.expert_contenders())
        if "train" in self.only and s.train_steps and s.train_rounds:
            groups.append(self.train_contenders())
        self.benches = {k: v for k, v in self.benches.items() if k.split("_")[0] in self.only}
        for r in range(s.rounds):
            t0 = time.perf_counter()
            for group in groups:
                k = r % len(group)  # rotate who goes first
                for fn in group[k:] + group[:k]:
                    fn(r)
            self.log(f"round {r + 1}/{s.rounds} done in {time.perf_counter() - t0:.1f} s")


# ----------------------------------------------------------------------------- report
def machine_info() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform(), "load1": round(load, 2)}


def fmt_time(sec: float) -> str:
    if sec != sec:
        return "-"
    if sec < 1e-3:
        return f"{sec * 1e6:.2f} µs"
    if sec < 1:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec:.2f} s"


def fmt_rate(sec: float) -> str:
    if sec != sec or sec <= 0:
        return "-"
    r = 1.0 / sec
    return f"{r / 1e6:.2f} M" if r >= 1e6 else f"{r / 1e3:.1f} k" if r >= 1e3 else f"{r:.0f}"


OPENSPIEL_OBS = "OpenSpiel gin_rummy (Python, obs + mask)"
#: (bench, ours row, anchor row, required ratio anchor_time / ours_time, label)
TARGETS = [
    ("meld_real", "ours min_deadwood", "OpenSpiel GinRummyUtils.min_deadwood", 1.0,
     "single min_deadwood >= OpenSpiel (real-play hands)"),
    ("meld_real", "ours min_deadwood_batch", "OpenSpiel GinRummyUtils.min_deadwood", 10.0,
     "batched >= 10x OpenSpiel per hand (real-play hands)"),
    ("env_steps", "ours raw_env", "PettingZoo gin_rummy_v4", 10.0, "raw_env >= 10x PettingZoo steps/s"),
    ("env_steps", "ours env() wrapped", "PettingZoo gin_rummy_v4", 10.0,
     "env() wrapped >= 10x PettingZoo steps/s"),
    ("env_steps", "ours raw_env", "OpenSpiel gin_rummy (Python)", 1.0,
     "raw_env faster than OpenSpiel per decision"),
    ("env_hands", "ours raw_env", "OpenSpiel gin_rummy (Python)", 1.0,
     "raw_env faster than OpenSpiel per hand"),
    ("env_steps", "ours env() wrapped", "OpenSpiel gin_rummy (Python)", 1.0,
     "env() wrapped faster than OpenSpiel per decision"),
    ("env_hands", "ours env() wrapped", "OpenSpiel gin_rummy (Python)", 1.0,
     "env() wrapped faster than OpenSpiel per hand"),
    ("env_steps", "ours env() wrapped", OPENSPIEL_OBS, 1.5,
     "env() >= 1.5x OpenSpiel's Python loop with observation + mask, per decision"),
    ("env_steps", "ours raw_env", OPENSPIEL_OBS, 2.0,
     "raw_env >= 2x OpenSpiel's Python loop with observation + mask, per decision"),
    ("batch_steps", "ours BatchGame N=1024", OPENSPIEL_OBS, 20.0,
     "batched engine >= 20x OpenSpiel Python loop with obs tensor + mask, decisions/s"),
    ("batch_hands", "ours BatchGame N=1024", "OpenSpiel gin_rummy (Python)", 10.0,
     "batched engine >= 10x OpenSpiel Python loop, hands/s"),
    ("expert_agents", "expert (batched)", "expert (row by row)", 20.0,
     "batched Expert >= 20x the row-by-row Expert per decision (N=256, same states)"),
    ("train_steps", "ours train.ppo (batched, default)", "train.ppo previous defaults (--vec-env subproc)", 10.0,
     "PPO training >= 10x the previous train.ppo defaults, steps/s (opponent Simple)"),
]


def report(runner: Runner, machine: dict[str, Any], anchors_info: dict[str, Any] | None,
           anchors_note: str, sizes: Sizes, wall: float) -> tuple[str, dict[str, Any]]:
    lines = ["# hgin_env speed benchmark", ""]
    lines.append(f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
                 f"numpy {machine['numpy']} ({machine['platform']}; load average {machine['load1']} "
                 "at the start: timings are noisy, compare ratios).")
    if anchors_info:
        lines.append("Anchors (bench_venv worker): " + ", ".join(f"{k} {v}" for k, v in anchors_info.items())
                     + ".")
    lines.append(f"Anchors: {anchors_note}")
    lines.append(f"{sizes.rounds} rounds, contenders alternated within each round; median per-unit time; "
                 f"'x ref' = median over rounds of (its time / the bench's reference row's time), >1 means "
                 f"the reference is faster. Wall time {wall:.0f} s.")
    lines.append("")
    lines.append("Inputs: " + "; ".join(f"**{k}**: {v}" for k, v in runner.inputs.items()) + ".")
    lines.append("")
    data: dict[str, Any] = {"machine": machine, "anchors": anchors_info, "anchors_note": anchors_note,
                            "sizes": sizes.__dict__, "inputs": runner.inputs, "benches": {},
                            "targets": [], "mismatches": runner.meld_mismatch}
    for b in runner.benches.values():
        lines += [f"## {b.title}", "", f"Reference row: **{b.ref}**. 'x ref' = a row's time / the reference's "
                  "time in the same round (median over rounds); above 1 the reference is that many times "
                  "faster, below 1 the row is faster than the reference.", "",
                  "| contender | per unit | per second | x ref | notes |", "|---|---|---|---|---|"]
        jb: dict[str, Any] = {"title": b.title, "ref": b.ref, "rows": {}}
        for label, row in b.rows.items():
            ratio = b.ratio(label) if b.ref in b.rows and label != b.ref else float("nan")
            rtxt = "ref" if label == b.ref else ("-" if ratio != ratio else f"{ratio:.2f} (ref {b.ref})"
                                                 if row.ours else f"{ratio:.2f}")
            note = row.note
            dph = row.extra.get("decisions_per_hand")
            if dph:
                note += f"; {statistics.median(dph):.0f} decisions/hand"
            name = f"**{label}**" if row.ours else label
            lines.append(f"| {name} | {fmt_time(row.median)} / {row.unit} | {fmt_rate(row.median)} | "
                         f"{rtxt} | {note} |")
            jb["rows"][label] = {"unit": row.unit, "ours": row.ours, "median_s": row.median,
                                 "times_s": row.times, "ratio_vs_ref": None if ratio != ratio else ratio,
                                 "note": note, **{k: v for k, v in row.extra.items()}}
        mm = data["mismatches"].get(b.name)
        if mm is not None:
            lines += ["", "Deadwood mismatches vs ours: " + ", ".join(f"{k} {v}" for k, v in mm.items())
                      + "."]
        lines.append("")
        data["benches"][b.name] = jb
    lines += [
        "Our env and engine runs start with our LRU caches emptied and use their own seeds, so no "
        "contender reuses positions another one played.",
        "",
        "What a hand is: **ours** (episode='hand'): one deal of Hollywood Gin rules, ending by knock, "
        "gin or the dead-hand rule; uniformly random legal play rarely knocks, so most hands are dead "
        "(played until the stock is down to the dead-hand limit). "
        "**PettingZoo gin_rummy_v4** (RLCard engine): one deal of RLCard's gin rummy "
        "(its own knock/dead-hand rules; steps include declaring/scoring moves). "
        "**OpenSpiel gin_rummy**: one deal with OpenSpiel's rules (knock, layoff phases as decisions); "
        "only non-chance actions count as decisions, but the chance actions (deal, draws) are applied "
        "inside the timed loop.",
        "",
    ]
    have_anchor = any(a in runner.benches.get(bn, Bench("", "", "")).rows for bn, _o, a, _t, _l in TARGETS)
    if have_anchor:
        lines += ["## Targets", "", "| target | ratio | met |", "|---|---|---|"]
        for bn, ours, anchor, need, label in TARGETS:
            b = runner.benches.get(bn)
            if b is None or ours not in b.rows or anchor not in b.rows:
                continue
            ratio = b.ratio(anchor, ours)
            met = ratio >= need
            lines.append(f"| {label} | {ratio:.2f}x (need {need:g}x) | {'yes' if met else 'NO'} |")
            data["targets"].append({"target": label, "ratio": ratio, "need": need, "met": met})
        lines.append("")
    return "\n".join(lines), data


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    p.add_argument("--tiny", action="store_true", help="smoke-test sizes (seconds)")
    p.add_argument("--no-anchors", action="store_true", help="run our contenders only")
    p.add_argument("--rounds", type=int, help="rounds (each contender once per round)")
    p.add_argument("--hands", type=int, help="10-card hands per meld benchmark")
    p.add_argument("--hands11", type=int, help="11-card hands per after-discard benchmark")
    p.add_argument("--env-steps", type=int, help="decisions per round per env contender")
    p.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS),
                   help="benchmark groups to run (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for bench.md and bench.json")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)

    sizes = Sizes.tiny() if args.tiny else Sizes.quick() if args.quick else Sizes()
    for attr, val in (("rounds", args.rounds), ("hands", args.hands), ("hands11", args.hands11),
                      ("env_steps", args.env_steps)):
        if val is not None:
            setattr(sizes, attr, val)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    machine = machine_info()
    worker: AnchorWorker | None = None
    anchors_info = None
    if args.no_anchors:
        note = "not run (--no-anchors): ours only."
    elif not AnchorWorker.available():
        note = "not run: no bench_venv (run `bash eval/bench/setup_anchors.sh`); ours only."
    else:
        worker = AnchorWorker()
        anchors_info = worker.info()
        note = "OpenSpiel, RLCard and PettingZoo timed inside the worker process."
    log(f"machine: {machine}")
    log(f"anchors: {note}")
    t0 = time.perf_counter()
    try:
        runner = Runner(sizes, worker, args.seed, log, args.only)
        runner.run()
    finally:
        if worker is not None:
            worker.close()
    text, data = report(runner, machine, anchors_info, note, sizes, time.perf_counter() - t0)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text(text + "\n")
    (args.out / "bench.json").write_text(json.dumps(data, indent=1, default=float) + "\n")
    log(f"wrote {args.out / 'bench.md'} and {args.out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
