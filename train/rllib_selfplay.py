"""Multi-agent PPO self-play with Ray RLlib (new API stack), locally or on a Ray cluster.

    python -m train.rllib_selfplay --run-name my_rllib_run --episode hand --iterations 150   # this machine
    RAY_AUTH_MODE=token python -m train.rllib_selfplay --address HEAD:6379 --working-dir . \
        --num-env-runners 94 --train-batch-size 64000 --minibatch-size 4000 --iterations 500  # a cluster

Both seats of ``hollywood_gin_v0`` go through RLlib's PettingZoo wrapper
(``hgin_env.envs.rllib``). The trained RLModule ``main`` is RLlib's action-masking PPO
module; in each match it plays one seat (chosen at random) against an opponent drawn from
the mixture ``--opponents``:

    self       ``main`` in both seats (shared policy; both seats' experience trains it)
    snapshot   a frozen copy of ``main`` (``snapshot_0``..``snapshot_{N-1}``; every
               ``--snapshot-every`` iterations the oldest is overwritten with ``main``'s weights)
    random, simple, expert
               the project's heuristic agents, run inside RLlib as non-trained RLModules

The three-column outcomes (win rate, columns won, column totals) are those of
``train/ppo.py``: the same ``hgin_env.summary`` rows and the same
``charts/`` scalars (``train.callbacks.episode_row`` / ``outcome_scalars``).

A run folder ``runs/<run-name>/`` holds:
    args.json        the arguments of the run
    progress.csv     one row per iteration: env steps, env steps/s, learner stats, outcomes
    episodes.csv     one row per finished match (or hand, ``--episode hand``) of ``main``
    eval.csv         duplicate-match evaluations of the checkpoints against heuristics
    tb/              TensorBoard (``charts/`` outcomes, ``learner/`` losses, ``perf/``)
    checkpoints/     periodic RLlib checkpoints (``Algorithm.save_to_path``), ``iter_N/``
    checkpoint/      the final checkpoint; play it with ``rllib:runs/<run-name>``
    learning_curve.png   win rates over training (``python -m train.plots RUN_DIR``)

Every checkpoint holds ``hgin_meta.json`` (observation layout and rules versions), which
the ``rllib:PATH`` agent (``agents/rllib_agent.py``) checks before loading.

Cluster: ``--address`` (or the ``RAY_ADDRESS`` variable) connects to a running cluster
instead of starting a local Ray with ``--num-cpus``; nothing else changes. The code and
this package must be importable on every node (install it there, or pass
``--working-dir .`` to ship this folder as the job's runtime environment). Ray 2.60
clusters use token authentication: set ``RAY_AUTH_MODE=token`` with the cluster's token.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from hgin_env.envs.rllib import MASK_KEY, OBS_KEY, SUMMARY_KEY, from_rllib_obs
from train.callbacks import episode_row
from train.ppo import parse_args as parse_dataclass_args
from train.ppo import parse_mixture

ENV_NAME = "hollywood_gin_v0"
MAIN = "main"
HEURISTICS = ("random", "simple", "expert")
#: The ``episodes.csv`` metric the env runners log (one item per finished match of ``main``).
EPISODES_METRIC = "hollywood_episodes"


@dataclass
class Args:
    run_name: str = field(default="", metadata={"help": "run folder name (default: rllib_<seed>_<time>)"})
    out_dir: str = field(default="runs", metadata={"help": "parent folder of run folders"})
    seed: int = field(default=0, metadata={"help": "seed of the environments and the networks"})
    iterations: int = field(default=20, metadata={"help": "training iterations (one PPO update each)"})
    address: str = field(default="", metadata={
        "help": "Ray cluster address ('auto', 'ray://host:10001'); default: $RAY_ADDRESS, else a local Ray"})
    num_cpus: int = field(default=2, metadata={"help": "CPUs of the local Ray (ignored on a cluster)"})
    working_dir: str = field(default="", metadata={
        "help": "folder shipped to the cluster as the job's working dir (e.g. '.'); default: none"})
    num_env_runners: int = field(default=1, metadata={
        "help": "sampling actors (0 = sample in the driver); about one per CPU a node can spare"})
    envs_per_env_runner: int = field(default=4, metadata={
        "help": "environments stepped by each env runner (batches the forward passes)"})
    sample_timeout_s: float = field(default=600.0, metadata={
        "help": "wait this long for an env runner's samples before dropping them (RLlib's default 60 s "
                "is too short on a busy 2-core machine)"})
    num_learners: int = field(default=0, metadata={
        "help": "Learner actors (0 = update in the driver); N > 1 splits each batch data-parallel"})
    num_gpus_per_learner: float = field(default=0.0, metadata={"help": "GPUs of each Learner (0 = CPU)"})
    rules: str = field(default="hollywood", metadata={"help": "rules profile name"})
    episode: str = field(default="match", metadata={"help": "'match' (whole Hollywood match) or 'hand'"})
    reward: str = field(default="points", metadata={"help": "env reward: 'points', 'columns' or 'match'"})
    opponents: str = field(default="self:0.4,snapshot:0.2,simple:0.2,expert:0.2", metadata={
        "help": "opponents of main: 'name:weight,...' of self, snapshot, random, simple, expert"})
    snapshot_pool: int = field(default=4, metadata={"help": "frozen snapshots of main kept as opponents"})
    snapshot_every: int = field(default=5, metadata={"help": "copy main into the oldest snapshot every N iterations"})
    train_batch_size: int = field(default=4000, metadata={"help": "env steps (both seats) per iteration and Learner"})
    minibatch_size: int = field(default=500, metadata={"help": "SGD minibatch size"})
    num_epochs: int = field(default=4, metadata={"help": "PPO epochs per iteration"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    gamma: float = field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    clip_param: float = field(default=0.2, metadata={"help": "PPO clip range"})
    entropy_coeff: float = field(default=0.01, metadata={"help": "entropy bonus"})
    hidden: str = field(default="256,256", metadata={"help": "hidden layer sizes of the policy and value nets"})
    checkpoint_every: int = field(default=10, metadata={"help": "save a checkpoint every N iterations (0 = off)"})
    eval_matches: int = field(default=0, metadata={
        "help": "duplicate matches per heuristic when a checkpoint is saved (0 = off)"})
    eval_opponents: str = field(default="simple,expert", metadata={
        "help": "heuristics to evaluate against (random can take hundreds of hands per match against a weak policy)"})
    log_window: int = field(default=100, metadata={"help": "finished matches in the rolling charts/ means"})
    torch_threads: int = field(default=1, metadata={"help": "torch CPU threads of the learner"})


def parse_args(argv: list[str] | None = None) -> Args:
    return parse_dataclass_args(argv, cls=Args, description=__doc__)


def opponent_mixture(text: str, snapshot_pool: int) -> dict[str, float]:
    """'self:0.4,snapshot:0.2,expert:0.4' -> normalized weights; refuses unknown names."""
    specs, weights = parse_mixture(text)
    known = ("self", "snapshot", *HEURISTICS)
    mixture: dict[str, float] = {}
    for spec, weight in zip(specs, weights, strict=True):
        if spec not in known:
            raise ValueError(f"unknown opponent {spec!r} in {text!r}; known: {', '.join(known)}")
        if weight < 0:
            raise ValueError(f"negative weight for {spec!r} in {text!r}")
        mixture[spec] = mixture.get(spec, 0.0) + weight
    if mixture.get("snapshot") and snapshot_pool < 1:
        raise ValueError("snapshot opponents need --snapshot-pool >= 1")
    total = sum(mixture.values())
    if total <= 0:
        raise ValueError(f"opponent weights in {text!r} sum to 0")
    return {k: v / total for k, v in mixture.items() if v > 0}


def snapshot_ids(pool: int) -> list[str]:
    return [f"snapshot_{i}" for i in range(pool)]


class OpponentMapping:
    """RLlib's ``policy_mapping_fn``: per episode, ``main`` takes a random seat and the other
    seat gets a module drawn from the mixture. Both calls of an episode (one per agent) hash
    the episode id to the same draw, so it is picklable, stateless and the same on every
    env runner of a cluster."""

    def __init__(self, mixture: dict[str, float], snapshots: list[str], seed: int = 0):
        self.kinds = list(mixture)
        self.weights = np.array([mixture[k] for k in self.kinds], dtype=float)
        self.snapshots = list(snapshots)
        self.seed = seed

    def draw(self, episode_id: str) -> tuple[int, str]:
        """(seat of main, module id of the opponent) of an episode."""
        rng = np.random.default_rng([self.seed, zlib.crc32(str(episode_id).encode())])
        seat = int(rng.integers(2))
        kind = self.kinds[int(rng.choice(len(self.kinds), p=self.weights))]
        if kind == "self":
            return seat, MAIN
        if kind == "snapshot":
            return seat, self.snapshots[int(rng.integers(len(self.snapshots)))]
        return seat, kind

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        seat, opponent = self.draw(episode.id_)
        return MAIN if agent_id == f"player_{seat}" else opponent


def opponent_label(module_id: str) -> str:
    """How an opponent module is named in episodes.csv (all snapshots as one)."""
    if module_id == MAIN:
        return "self"
    return "snapshot" if module_id.startswith("snapshot_") else module_id


class HeuristicRLModule(RLModule):
    """One of the project's agents (``model_config={"agent": name, "columns": C, "seed": S}``)
    as a non-trained RLModule acting on the observation dicts RLlib batches."""

    def setup(self) -> None:
        from agents.base import make_agent

        config = self.model_config or {}
        self.agent = make_agent(config["agent"], seed=config.get("seed"), columns=config.get("columns", 3))

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        obs = {k: _numpy(v) for k, v in batch[Columns.OBS].items()}
        actions = [self.agent(from_rllib_obs({OBS_KEY: o, MASK_KEY: m}))
                   for o, m in zip(obs[OBS_KEY], obs[MASK_KEY], strict=True)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict, **kwargs: Any) -> dict:
        raise NotImplementedError(f"the {self.model_config['agent']} heuristic is not trained")


class HollywoodCallbacks(RLlibCallback):
    """On the env runners: one ``episodes.csv`` row per finished match of ``main``.

    Who played whom comes from the episode's draw (``OpponentMapping.draw``), not from the
    last step's infos: an episode sampled in several chunks ends with a chunk in which one
    seat may not appear. In self-play the row is from the side of ``main``'s drawn seat."""

    def on_episode_end(self, *, episode: Any, env_runner: Any = None, metrics_logger: Any = None,
                       **kwargs: Any) -> None:
        mapping = env_runner.config.policy_mapping_fn
        if not isinstance(mapping, OpponentMapping) or metrics_logger is None:
            return
        seat, opponent = mapping.draw(episode.id_)
        learner = f"player_{seat}"
        if learner not in episode.agent_episodes:
            return
        info = episode.agent_episodes[learner].get_infos(-1)
        if SUMMARY_KEY not in info:
            return  # the match did not finish (the env was closed): nothing to log
        row = episode_row(info[SUMMARY_KEY], 0, opponent_label(opponent))
        metrics_logger.log_value(EPISODES_METRIC, row, reduce="item_series")


def _numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def build_config(args: Args) -> Any:
    """The ``PPOConfig`` of a run: the shared module ``main``, the snapshots, the heuristics."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from hgin_env.envs.rllib import make_rllib_env
    from hgin_env.rules import get_rules

    rules = get_rules(args.rules)
    mixture = opponent_mixture(args.opponents, args.snapshot_pool)
    snapshots = snapshot_ids(args.snapshot_pool) if "snapshot" in mixture else []
    register_env(ENV_NAME, make_rllib_env)
    hidden = [int(h) for h in args.hidden.split(",") if h.strip()]
    model_config = {"fcnet_hiddens": hidden, "fcnet_activation": "tanh", "head_fcnet_hiddens": [],
                    "vf_share_layers": False}
    specs = {MAIN: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config)}
    for sid in snapshots:
        specs[sid] = RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config)
    for name in HEURISTICS:
        if name in mixture:
            specs[name] = RLModuleSpec(module_class=HeuristicRLModule, model_config={
                "agent": name, "columns": rules.columns, "seed": args.seed})
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"rules": rules.to_dict(), "episode": args.episode,
                                           "reward": args.reward},
                     # RLlib's env check steps unmasked random actions, which the game refuses.
                     disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_env_runner,
                     sample_timeout_s=args.sample_timeout_s)
        .learners(num_learners=args.num_learners, num_gpus_per_learner=args.num_gpus_per_learner)
        .multi_agent(policies=set(specs), policy_mapping_fn=OpponentMapping(mixture, snapshots, args.seed),
                     policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda,
                  clip_param=args.clip_param, entropy_coeff=args.entropy_coeff)
        .callbacks(HollywoodCallbacks)
        .debugging(seed=args.seed)
    )


def init_ray(args: Args) -> None:
    """Connect to ``--address`` / ``$RAY_ADDRESS``, else start a local Ray with ``--num-cpus``."""
    import ray

    if ray.is_initialized():
        return
    address = args.address or os.environ.get("RAY_ADDRESS", "")
    runtime_env: dict[str, Any] = {"env_vars": {"OMP_NUM_THREADS": "1"}}
    if args.working_dir:
        runtime_env["working_dir"] = args.working_dir
    if address:
        ray.init(address=address, runtime_env=runtime_env)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, runtime_env=runtime_env)


def copy_weights(algo: Any, source: str, target: str) -> None:
    """Overwrite module ``target`` with ``source``'s weights on the learner and every env runner."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE

    state = algo.learner_group.get_state(components=f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{source}")
    weights = state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][source]
    algo.set_state({COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {target: weights}}}})


def save_checkpoint(algo: Any, path: Path, meta: dict) -> Path:
    """``Algorithm.save_to_path`` plus ``hgin_meta.json`` (what the ``rllib:`` loader checks)."""
    from agents.rllib_agent import META_NAME

    algo.save_to_path(str(path.resolve()))
    (path / META_NAME).write_text(json.dumps(meta, indent=2))
    return path


class RunLogger:
    """Driver-side logging: episodes.csv, progress.csv and TensorBoard, per iteration."""

    def __init__(self, run_dir: Path, window: int):
        from torch.utils.tensorboard import SummaryWriter

        from train.callbacks import EPISODE_FIELDS, _CsvWriter

        self.run_dir = run_dir
        self.episodes = _CsvWriter(run_dir / "episodes.csv", EPISODE_FIELDS)
        self.progress: list[dict[str, float]] = []
        self.tb = SummaryWriter(str(run_dir / "tb"))
        self.recent: deque[dict] = deque(maxlen=window)

    def log(self, result: dict, elapsed: float) -> dict[str, float]:
        from ray.rllib.utils.metrics import (
            ENV_RUNNER_RESULTS,
            LEARNER_RESULTS,
            NUM_ENV_STEPS_SAMPLED_LIFETIME,
            NUM_MODULE_STEPS_SAMPLED_LIFETIME,
        )

        from train.callbacks import outcome_scalars

        runners = result.get(ENV_RUNNER_RESULTS, {})
        steps = int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))
        rows = runners.get(EPISODES_METRIC) or []
        if not isinstance(rows, list):
            rows = [rows]
        for row in rows:
            row = dict(row, timesteps=steps)
            self.recent.append(row)
            self.episodes.write(row)
        learner = result.get(LEARNER_RESULTS, {}).get(MAIN, {})
        module_steps = runners.get(NUM_MODULE_STEPS_SAMPLED_LIFETIME, {})
        scalars: dict[str, float] = {
            "iteration": float(result.get("training_iteration", 0)),
            "env_steps": float(steps),  # every move of both seats
            "main_steps": float(module_steps.get(MAIN, 0)),  # moves made by main (both seats in self-play)
            "perf/env_steps_per_s": steps / max(elapsed, 1e-9),
            "perf/iteration_s": float(result.get("time_this_iter_s", 0.0)),
            "perf/matches_this_iter": float(len(rows)),
        }
        timers = result.get("timers", {})
        for name, key in (("sample_s", "env_runner_sampling_timer"), ("learn_s", "learner_update_timer")):
            if key in timers:  # RLlib's (smoothed) time per iteration spent sampling / updating
                scalars[f"perf/{name}"] = float(timers[key])
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var"):
            if key in learner:
                scalars[f"learner/{key}"] = float(learner[key])
        scalars.update(outcome_scalars(list(self.recent)))
        for key, value in scalars.items():
            if "/" in key:
                self.tb.add_scalar(key, value, steps)
        self.tb.flush()
        self.progress.append(scalars)
        self._write_progress()
        return scalars

    def _write_progress(self) -> None:
        """Rewrite progress.csv: a column appears when its value first does (e.g. the first
        finished match), so the header is the union over all iterations so far."""
        import csv

        fields = list(dict.fromkeys(k for row in self.progress for k in row))
        tmp = self.run_dir / "progress.csv.tmp"
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.progress)
        tmp.replace(self.run_dir / "progress.csv")

    def close(self) -> None:
        self.episodes.close()
        self.tb.close()


def evaluate_checkpoint(path: Path, args: Args, steps: int, run_dir: Path) -> None:
    """Duplicate matches of the checkpoint against each heuristic (the tournament harness)."""
    from agents.rllib_agent import RLlibAgent
    from arena.evaluate import evaluate_against
    from hgin_env.rules import get_rules
    from train.callbacks import _CsvWriter

    agent = RLlibAgent.load(path)
    writer = _CsvWriter(run_dir / "eval.csv", ["timesteps", "opponent", "matches", "win_rate", "ci_low",
                                               "ci_high", "columns_won", "hands_per_match"])
    for opp in filter(None, args.eval_opponents.split(",")):
        s = evaluate_against(agent, opp, matches=args.eval_matches, seed=10_000, rules=get_rules(args.rules))
        writer.write({"timesteps": steps, "opponent": opp, "matches": s["matches"], "win_rate": s["a_win_rate"],
                      "ci_low": s["ci_low"], "ci_high": s["ci_high"], "columns_won": s["a_columns_won"],
                      "hands_per_match": s["hands_per_match"]})
        print(f"  eval vs {opp}: win rate {s['a_win_rate']:.3f} over {s['matches']} matches", flush=True)
    writer.close()


def train(args: Args) -> Path:
    """Run one training; returns the final checkpoint folder."""
    import torch

    from agents.ppo import checkpoint_meta
    from agents.rllib_agent import FORMAT
    from hgin_env.rules import get_rules

    torch.set_num_threads(args.torch_threads)
    rules = get_rules(args.rules)
    run_name = args.run_name or f"rllib_{args.seed}_{time.strftime('%Y%m%d_%H%M%S')}"
    run_dir = (Path(args.out_dir) / run_name).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    meta = checkpoint_meta(rules, {"format": FORMAT, "module": MAIN, "run": run_name,
                                   "args": dataclasses.asdict(args)})

    init_ray(args)
    config = build_config(args)
    algo = config.build_algo()
    snapshots = [m for m in snapshot_ids(args.snapshot_pool) if m in config.policies]
    for sid in snapshots:  # the pool starts as copies of the initial policy
        copy_weights(algo, MAIN, sid)
    logger = RunLogger(run_dir, args.log_window)
    train_seconds = 0.0  # time in algo.train() (sampling + updates), not checkpoints or evaluations
    steps = 0
    try:
        for it in range(1, args.iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            train_seconds += time.perf_counter() - start
            s = logger.log(result, train_seconds)
            steps = int(s["env_steps"])
            print(f"iter {it:4d}  env steps {steps:8d}  {s['perf/env_steps_per_s']:6.0f} steps/s  "
                  f"matches {int(s['perf/matches_this_iter']):3d}  "
                  f"win rate {s.get('charts/match_win_rate', float('nan')):.3f}  "
                  f"columns won {s.get('charts/columns_won', float('nan')):.2f}", flush=True)
            if snapshots and args.snapshot_every and it % args.snapshot_every == 0:
                copy_weights(algo, MAIN, snapshots[(it // args.snapshot_every - 1) % len(snapshots)])
            if args.checkpoint_every and it % args.checkpoint_every == 0 and it < args.iterations:
                path = save_checkpoint(algo, run_dir / "checkpoints" / f"iter_{it:06d}", meta)
                if args.eval_matches:
                    evaluate_checkpoint(path, args, steps, run_dir)
        final = save_checkpoint(algo, run_dir / "checkpoint", meta)
        if args.eval_matches:
            evaluate_checkpoint(final, args, steps, run_dir)
    finally:
        logger.close()
        algo.stop()
    from train.plots import plot_learning_curves

    plot_learning_curves(run_dir)
    return final


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = train(args)
    print(f"saved {path}  (play it: hgin play --opponent rllib:{path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
