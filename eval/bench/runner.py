"""The benchmark run: every bench, round by round, ours and the anchors on the same inputs
(see ``eval.bench.run``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eval.bench.anchors import AnchorWorker
from eval.bench.drivers import (
    FAST_LEARNER,
    FASTEST_LEARNER,
    PIPELINED_TRAINING,
    PREVIOUS_TRAIN_DEFAULTS,
    drive_aec,
    drive_batch,
    drive_engine,
    drive_heuristic,
    drive_training,
    hand_stats,
    random_hands,
    real_play_hands,
    time_batch,
    time_passes,
)
from eval.bench.results import FORMAT_PROFILES, GROUPS, OPENSPIEL_OBS, Bench, Sizes, batch_label
from hgin_env.compiled import compiled_available, resolve_engine
from hgin_env.melds import (
    deadwood_after_discard_mask,
    deadwood_of_mask,
    min_deadwood,
)

#: What each engine's rows say of it.
ENGINE_NOTES = {"numba": "compiled kernels (numba, the default)", "numpy": "numpy reference (HGIN_ENGINE=numpy)"}


def record_play(steps_b: Any, hands_b: Any, unit: str, label: str, rep: dict, ours: bool, note: str,
                decisions: str = "steps") -> None:
    """One play report into a per-decision bench (``unit``: "step" or "decision") and its
    per-hand twin, with the decisions per hand noted."""
    steps_b.row(label, unit, ours, note).times.append(rep["seconds"] / rep[decisions])
    hr = hands_b.row(label, "hand", ours, note)
    if rep["hands"]:
        hr.times.append(rep["seconds"] / rep["hands"])
    hr.extra.setdefault("decisions_per_hand", []).append(rep[decisions] / max(rep["hands"], 1))



def pooled_decisions(batch: Any, players: tuple[Any, Any], steps: int, skip: int, calls: int,
                     seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``calls`` stored calls of ``batch.n`` decisions each: ``batch`` played ``steps`` steps by
    ``players`` (seat 0's, seat 1's), the first ``skip`` steps left out. The games start
    together, so one step's rows share a phase: the pooled rows are shuffled into calls that
    mix draw and discard decisions at every stage of a hand."""
    n = batch.n
    pool_obs, pool_masks = [], []
    for step in range(steps):
        obs, masks = batch.observations().copy(), batch.legal_action_masks().copy()
        if step >= skip:
            pool_obs.append(obs)
            pool_masks.append(masks)
        seat0 = batch.current_player == 0
        batch.step(np.where(seat0, players[0].act(obs, masks), players[1].act(obs, masks)))
    order = np.random.default_rng(seed).permutation(len(pool_obs) * n)
    all_obs, all_masks = np.concatenate(pool_obs)[order], np.concatenate(pool_masks)[order]
    return [(all_obs[i * n:(i + 1) * n], all_masks[i * n:(i + 1) * n]) for i in range(calls)]


def timed_decisions(b: Any, states: list[tuple[np.ndarray, np.ndarray]],
                    act: Callable[[np.ndarray, np.ndarray], Any], label: str, calls: int,
                    note: str) -> Callable[[int], None]:
    """A contender timing ``act`` over ``calls`` of the stored ``states`` (round ``r`` starts
    at call ``r``), recorded as time per decision in row ``label`` of bench ``b``."""
    def go(r: int) -> None:
        todo = [states[(r + i) % len(states)] for i in range(calls)]
        t0 = time.perf_counter()
        for obs, masks in todo:
            act(obs, masks)
        b.row(label, "decision", True, note).times.append(
            (time.perf_counter() - t0) / (calls * len(todo[0][0])))
    return go


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
        #: The batched engine's implementations timed side by side (numpy alone without numba).
        self.engines = ("numba", "numpy") if compiled_available() else ("numpy",)

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
            record("ours Hand engine", rep, True, "Hand.legal_actions/apply, no observation")

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
        b = self.bench("heuristic", "Heuristic self-play through run_match (ours only)", "simple vs simple")

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
        ref = batch_label(s.batch_n, resolve_engine())
        steps_b = self.bench("batch_steps", "Random legal play with an observation and a legal-action mask at "
                             "every decision: time per decision", ref)
        hands_b = self.bench("batch_hands", "Random legal play: time per hand", ref)

        def record(label: str, rep: dict, ours: bool, note: str, decisions: str = "steps") -> None:
            record_play(steps_b, hands_b, "decision", label, rep, ours, note, decisions)

        def batched(n: int, engine: str) -> Callable[[int], None]:
            steps = max(1, s.batch_steps * s.batch_n // n)  # the same decisions per row

            def go(r: int) -> None:
                rep = drive_batch(n, steps, self.seed + 8000 + r, engine=engine)
                record(batch_label(n, engine), rep, True,
                       f"observations() [N,394] + legal_action_masks() [N,108] + BatchedRandom + step, one "
                       f"core, {ENGINE_NOTES[engine]}")
            return go

        def raw(r: int) -> None:
            from hgin_env import hollywood_gin_v0

            rep = drive_aec(lambda: hollywood_gin_v0.raw_env(episode="hand"), s.os_observed_steps,
                            self.seed + 8500 + r)
            record("ours raw_env", rep, True, "AEC raw_env(episode='hand'): observation + mask per decision")

        out = [batched(n, engine) for engine in self.engines for n in s.batch_ns] + [raw]
        for profile in FORMAT_PROFILES:
            out += self.format_contenders(profile, record)
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

    def format_contenders(self, profile: str, record: Callable) -> list[Callable[[int], None]]:
        """A format's rows beside the duel's: the batched engine and the AEC env, random
        play with an observation and a mask at every decision (the AEC env's episode is the
        whole match: the run stops inside it at the step count)."""
        from hgin_env import hollywood_gin_v0

        s = self.s
        offset = 100 * (1 + FORMAT_PROFILES.index(profile))

        def batched(engine: str) -> Callable[[int], None]:
            def go(r: int) -> None:
                rep = drive_batch(s.batch_n, s.batch_steps, self.seed + 8000 + offset + r, rules=profile,
                                  engine=engine)
                record(batch_label(s.batch_n, engine, profile), rep, True,
                       f"{profile}: observations() + legal_action_masks() + BatchedRandom + step, one core, "
                       f"{ENGINE_NOTES[engine]}")
            return go

        def raw(r: int) -> None:
            rep = drive_aec(lambda: hollywood_gin_v0.raw_env(rules=profile), s.os_observed_steps,
                            self.seed + 8500 + offset + r, whole_episodes=False)
            record(f"ours raw_env ({profile})", rep, True,
                   f"{profile}: AEC raw_env, observation + mask per decision")

        return [batched(engine) for engine in self.engines] + [raw]

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
                run("simple", "simple (batched)", "BatchedSimple: Neller's rules, compiled where numba is"),
                run("expert", "expert (batched)", "BatchedExpert: the Expert's decisions, compiled where numba is")]

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
        states = pooled_decisions(batch, players, 10 + 8 * s.expert_calls, 10, s.expert_calls, self.seed)
        b = self.bench("expert_agents", f"The Expert batched (numpy), compiled and row by row: time per decision "
                       f"on the same stored states (N={n} per call, Expert-vs-Simple matches)", "expert (batched)")
        batched, rows = BatchedExpert(seed=self.seed, engine="numpy"), RowByRow(ExpertAgent(seed=self.seed))
        compiled = BatchedExpert(seed=self.seed, engine="numba") if compiled_available() else None

        def run(agent: Any, label: str, calls: int, note: str) -> Callable[[int], None]:
            return timed_decisions(b, states, agent.act, label, calls, note)

        contenders = [run(batched, "expert (batched)", s.expert_calls, "BatchedExpert(engine='numpy'): numpy calls"),
                      run(rows, "expert (row by row)", s.expert_row_calls,
                          "RowByRow(ExpertAgent): one Python call per row")]
        if compiled is not None:
            compiled.act(*states[0])  # compiles (or loads the cached machine code) outside the timing
            contenders.append(run(compiled, "expert (compiled)", s.expert_calls,
                                  "BatchedExpert(engine='numba'): one compiled loop over the rows"))
        return contenders

    def openspiel_bot_contenders(self) -> list[Callable[[int], None]]:
        """OpenSpiel's ``SimpleGinRummyBot`` as the peer benchmark's training opponent: the
        batched bot compiled and its literal reference (agents/openspiel_bot.py) against the
        real bot through pyspiel (``OpenSpielBotAgent``, a pyspiel state per decision), on
        the same states (``expert_n`` per call, the bot against Simple on single hands)."""
        from agents.batched import BatchedSimple, RowByRow
        from agents.openspiel_bot import BatchedOpenSpielBot
        from hgin_env.batch import BatchGame

        s = self.s
        n = s.expert_n
        batch = BatchGame(n, seed=self.seed + 53, single_hand=True)
        players = (BatchedOpenSpielBot(engine="numpy"), BatchedSimple(seed=self.seed))
        states = pooled_decisions(batch, players, 8 * s.expert_calls, 0, s.expert_calls, self.seed)
        b = self.bench("expert_openspiel_bot", f"OpenSpiel's SimpleGinRummyBot (openspiel:simple): time per "
                       f"decision on the same states (N={n} per call, the bot against Simple, single hands)",
                       "bot (pyspiel, row by row)")

        def run(act: Callable[[np.ndarray, np.ndarray], Any], label: str, calls: int,
                note: str) -> Callable[[int], None]:
            return timed_decisions(b, states, act, label, calls, note)

        contenders = [run(BatchedOpenSpielBot(engine="numpy").act, "bot (reference, row by row)", s.expert_calls,
                          "BatchedOpenSpielBot(engine='numpy'): gin_rummy_utils translated, one Python call per row")]
        want = players[0].act(*states[0])
        agree = "no numba"
        if compiled_available():
            compiled = BatchedOpenSpielBot(engine="numba")
            same = int((compiled.act(*states[0]) == want).sum())  # compiles outside the timing
            agree = f"compiled = reference on {same}/{n}"
            contenders.append(run(compiled.act, "bot (compiled)", s.expert_calls,
                                  "BatchedOpenSpielBot(engine='numba'): one compiled loop over the rows"))
        try:
            from agents.openspiel import OpenSpielBotAgent

            live = RowByRow(OpenSpielBotAgent())
        except ImportError:  # the openspiel extra is not installed: the batched forms only
            self.inputs["openspiel:simple moves"] = f"{agree} states; no pyspiel"
            return contenders
        same = int((live.act(*states[0]) == want).sum())
        self.inputs["openspiel:simple moves"] = f"{agree} states, reference = the pyspiel bot on {same}/{n}"
        contenders.append(run(live.act, "bot (pyspiel, row by row)", s.expert_row_calls,
                              "OpenSpielBotAgent: a pyspiel state built and the real bot asked per row"))
        return contenders

    def train_contenders(self) -> list[Callable[[int], None]]:
        s = self.s
        b = self.bench("train_steps", "PPO training against Simple (train.ppo): time per environment step, "
                       "updates included", "ours train.ppo (batched, default)")

        # The process's first training pays one-off costs (importing SB3 and TensorBoard,
        # torch's first calls): an untimed small run takes them, so that no contender's
        # first round (the one that goes first in round 0) carries them.
        drive_training(4096, self.seed, {})

        def run(label: str, extra: dict, note: str, engine: str | None = None) -> Callable[[int], None]:
            def go(r: int) -> None:
                if r >= s.train_rounds:
                    return
                rep = drive_training(s.train_steps, self.seed + r, extra, engine=engine)
                row = b.row(label, "step", True, note)
                row.times.append(rep["seconds"] / rep["steps"])
            return go

        numpy_row = [run("train.ppo (batched, numpy engine)", {}, "the default recipe on HGIN_ENGINE=numpy",
                         engine="numpy")] if "numba" in self.engines else []
        return [run("ours train.ppo (batched, default)", {},
                    "the synchronous loop: 128 games, 4 epochs of minibatches of 1024, card net 128/64/32 "
                    "with two trunks, sparse first layers, each minibatch's gradient in two halves at once "
                    "and each rollout in two parts at once (a helper process, train/split_update.py, "
                    f"train/split_rollout.py); engine {resolve_engine()}"),
                run("train.ppo --rollout-parts 1", {"rollout_parts": 1},
                    "the update split, SB3's one-part rollouts in the learner (the two-part rollouts' anchor)"),
                run("train.ppo --update-processes 1", {"update_processes": 1},
                    "SB3's own update and rollouts, in the learner alone (the split learner's anchor)"),
                run("train.ppo --pipeline on", PIPELINED_TRAINING,
                    "pipelined: a rollout worker process samples during the update (train/pipeline.py)"),
                *numpy_row,
                run("train.ppo --shared-trunk", FAST_LEARNER, "one trunk for actor and critic"),
                run("train.ppo --shared-trunk --n-epochs 2 --batch-size 2048", FASTEST_LEARNER,
                    "one trunk, 2 epochs of minibatches of 2048"),
                run("train.ppo previous defaults (--vec-env subproc)", PREVIOUS_TRAIN_DEFAULTS,
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
            groups.append(self.openspiel_bot_contenders())
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
