"""PPO with Ray RLlib (new API stack) on the batched engine, locally or on a Ray cluster.

    python -m train.rllib_ppo --run-name my_rllib --total-timesteps 200000                 # this machine
    python -m train.rllib_ppo --run-name lg --league --self-play-every 50000 --opponents simple,expert
    python -m train.rllib_ppo --resume runs/lg                                             # after a kill
    RAY_ADDRESS=HEAD:6379 python -m train.rllib_ppo --working-dir . --num-env-runners 32 --n-envs 4096 ...

``train.ppo``'s recipe on RLlib: each env runner (:class:`train.rllib_runner.BatchedEnvRunner`)
steps its share of ``--n-envs`` matches of the batched engine as one vector env
(:mod:`train.rllib_env`) in whole-batch steps, the opponents acting inside the runner on
whole batches (heuristics as numpy agents, league snapshots and ``self`` as one torch
call); the learner (:class:`train.rllib_learner.CardPPOLearner`) trains the project's card
network as an RLModule (:mod:`agents.nets.rllib_module`, the same classes as ``agents.nets.policy``),
with the privileged critic under ``--privileged-critic``. One iteration = ``--n-envs`` x
``--n-steps`` learner decisions, then ``--n-epochs`` of minibatches of ``--batch-size``
(4,096 / 1,024 by default, as ``train.ppo``). PPO's settings are SB3's: no KL penalty, no
value clipping, gradient norm 0.5, value loss weight 0.5, advantages normalised per
minibatch.

``--pipelined`` (with ``--num-env-runners`` >= 1): the runners sample the next batch while
the learner updates on this one (:mod:`train.rllib_pipeline`): both cores busy, each batch
one update old when it is learned from.

``--league``: the PFSP league of ``train/league.py`` (the ``--opponents`` plus a snapshot of
the learner every ``--self-play-every`` steps, the newest ``--self-play-pool`` kept), drawn
by the learner's running win rates; snapshots are saved in ``snapshots/`` and their weights
sent to the runners through Ray (no shared file system needed).

A run folder ``runs/<run-name>/`` holds:
    args.json        the arguments of the run
    progress.csv     one row per iteration: env steps, steps/s, learner stats, outcomes
    episodes.csv     one row per finished match (``train.callbacks.EPISODE_FIELDS``)
    league.json, league.md   the league and its table (with ``--league``)
    snapshots/       the league's snapshots (``rllib_<step>.pt``: the network's weights)
    checkpoints/     ``step_<N>/``: an RLlib checkpoint (weights and optimizer) with
                     ``hgin_meta.json`` and ``hgin_state.json`` (step, league, deal streams)
    checkpoint/      the final checkpoint; play it with ``rllib:runs/<run-name>``
    eval.csv         duplicate matches of the final checkpoint (``--eval-matches``)

``--resume RUN_DIR`` (or a ``checkpoints/step_N`` folder) continues a run killed at any
point from its newest complete checkpoint: weights, optimizer, the league and each runner's
deal stream; the logs are cut back to its step. ``--init-from ZIP`` starts from an SB3
checkpoint's weights (its network sizes are taken over).

What a run is apart from RLlib (its flags, the resume merge, the run folder, the CSV logs
and their cut-back, the evaluations' seeds and rows) is ``train.ppo``'s, from
:mod:`train.run`. ``train`` runs its steps in order, one small function each
(take_init_from, find_start, run_meta, make_league, open_run_folder, build_config,
restore_or_start, learn, evaluate).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback

from agents.spec import parse_mixture
from train import run
from train.recipe import Recipe
from train.run import resolved  # the batched defaults of --n-envs 0 / --n-steps 0 (train.ppo's)

#: The ``episodes.csv`` metric the env runners log (one item per finished match).
EPISODES_METRIC = "hgin_episodes"
#: What a checkpoint adds to RLlib's files for --resume (step, league, deal streams).
STATE_NAME = "hgin_state.json"
CHECKPOINT_PREFIX = "step_"
#: The CSV logs a resume cuts back (file -> its step column).
RUN_LOGS = {"progress.csv": "env_steps", "episodes.csv": "timesteps"}


@dataclass
class Args(Recipe):
    run_name: str = field(default="", metadata={"help": "run folder name (default: rllib_<seed>_<time>)"})
    out_dir: str = field(default="runs", metadata={"help": "parent folder of run folders"})
    seed: int = field(default=0, metadata={"help": "seed of the deals and the network"})
    total_timesteps: int = field(default=200_000, metadata={"help": "learner decisions to train for (the run's total)"})
    rules: str = field(default="hollywood", metadata={"help": "rules profile name"})
    max_hands: int = field(default=0, metadata={"help": "cut every match after N hands (0 = the profile's)"})
    n_envs: int = field(default=0, metadata={
        "help": "matches over all env runners (0 = train.ppo's: 128; three-hand 256), split evenly"})
    n_steps: int = field(default=0, metadata={"help": "steps per match per iteration (0 = 32; three-hand 16)"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient norm clip"})
    num_env_runners: int = field(default=0, metadata={"help": "sampling actors (0 = sample in the driver)"})
    num_cpus: int = field(default=2, metadata={"help": "CPUs of the local Ray (ignored on a cluster)"})
    num_cpus_per_env_runner: float = field(default=1.0, metadata={"help": "CPUs reserved per env runner"})
    address: str = field(default="", metadata={"help": "Ray cluster address (default: $RAY_ADDRESS, else local)"})
    working_dir: str = field(default="", metadata={"help": "folder shipped to the cluster as the working dir"})
    num_learners: int = field(default=0, metadata={"help": "Learner actors (0 = update in the driver)"})
    num_gpus_per_learner: float = field(default=0.0, metadata={"help": "GPUs per Learner"})
    sample_timeout_s: float = field(default=600.0, metadata={"help": "wait this long for a runner's samples"})
    restart_failed_env_runners: bool = field(default=True, metadata={
        "help": "replace an env runner that died (its node lost) and go on"})
    checkpoint_every: int = field(default=100_000, metadata={"help": "checkpoint every N steps (0 = end only)"})
    resume: str = field(default="", metadata={"help": "run folder or checkpoints/step_N to continue"})
    init_from: str = field(default="", metadata={"help": "SB3 checkpoint .zip (ppo:) whose weights start the run"})
    eval_matches: int = field(default=0, metadata={"help": "duplicate matches per opponent at the end (0 = off)"})
    eval_opponents: str = field(default="simple,expert", metadata={"help": "agents to evaluate against"})
    log_window: int = field(default=100, metadata={"help": "finished matches in the rolling charts/ means"})
    torch_threads: int = field(default=1, metadata={"help": "torch CPU threads of the learner"})
    pipelined: bool = field(default=False, metadata={
        "help": "the remote runners sample the next batch during the update (each batch one update "
                "old when learned from; needs --num-env-runners >= 1; train/rllib_pipeline.py)"})

    def validate(self) -> None:
        self.validate_league()
        if self.self_play_every and not self.league:
            raise ValueError("--self-play-every adds the learner's snapshots to the league here "
                             "(train.rllib_ppo has no plain self-play pool): give --league")
        if self.num_env_runners and self.n_envs % self.num_env_runners:
            raise ValueError(f"--n-envs {self.n_envs} does not split evenly over {self.num_env_runners} runners")
        if self.pipelined and self.num_env_runners < 1:
            raise ValueError("--pipelined samples on remote env runners while the driver updates: "
                             "give --num-env-runners 1 or more")
        parse_mixture(self.opponents)


#: Arguments a resumed run does not take over from its args.json (the shared ones; this
#: trainer adds none).
NOT_RESUMED = run.NOT_RESUMED


def parse_args(argv: list[str] | None = None, defaults: dict | None = None) -> Args:
    """This trainer's flags (:func:`train.run.parse_args` of :class:`Args`)."""
    return run.parse_args(argv, defaults, Args, __doc__)


def run_rules(args: Args) -> Any:
    """The run's rules: the profile, with ``--max-hands`` when given."""
    from hgin_env.rules import get_rules

    rules = get_rules(args.rules)
    return get_rules(dict(rules.to_dict(), max_hands=args.max_hands)) if args.max_hands else rules


# ---------------------------------------------------------------------- the RLlib config
def net_config(args: Args, rules: Any) -> dict:
    from agents.nets.rllib_module import model_config
    from hgin_env.batch import privileged_size

    return model_config(rules.columns, rules.format, hidden=args.hidden, summary=args.summary,
                        card_hidden=args.card_hidden, relations=args.relations, knock_bound=args.knock_bound,
                        privileged=privileged_size(rules.format) if args.privileged_critic else 0,
                        shared_trunk=args.shared_trunk, seed=args.seed)


def build_config(args: Args, rules: Any, specs: list[str], weights: list[float]) -> Any:
    """The ``PPOConfig``: the batched env per runner, the card module, SB3-like PPO settings."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.nets.rllib_module import CardRLModule
    from train.rllib_env import register
    from train.rllib_learner import CardPPOLearner
    from train.rllib_pipeline import configure
    from train.rllib_runner import BatchedEnvRunner

    runners = max(1, args.num_env_runners)
    env_config = {"rules": rules.to_dict(), "reward": args.reward, "match_bonus": args.match_bonus,
                  "shaping": args.shaping, "gamma": args.gamma, "shaping_potential": args.shaping_potential,
                  "partner": args.partner, "opponents": list(specs), "weights": list(weights),
                  "privileged": args.privileged_critic, "seed": args.seed, "net_config": net_config(args, rules)}
    config = (
        PPOConfig()
        .environment(register(), env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.n_envs // runners,
                     rollout_fragment_length=args.n_steps, gym_env_vectorize_mode="vector_entry_point",
                     num_cpus_per_env_runner=args.num_cpus_per_env_runner,
                     sample_timeout_s=args.sample_timeout_s, env_runner_cls=BatchedEnvRunner)
        .fault_tolerance(restart_failed_env_runners=args.restart_failed_env_runners)
        .learners(num_learners=args.num_learners, num_gpus_per_learner=args.num_gpus_per_learner,
                  learner_class=CardPPOLearner)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=CardRLModule, model_config=net_config(args, rules)))
        .training(lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip_range,
                  entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef, grad_clip=args.max_grad_norm,
                  grad_clip_by="global_norm", use_kl_loss=False, vf_clip_param=float("inf"),
                  num_epochs=args.n_epochs, minibatch_size=args.batch_size,
                  train_batch_size_per_learner=args.n_envs * args.n_steps // max(1, args.num_learners))
        .callbacks(HginCallbacks)
        .debugging(seed=args.seed)
    )
    if args.pipelined:  # the batches are one update old: decoupled PPO's loss (train/rllib_learner.py)
        config.learners(learner_config_dict={"proximal_policy": True})
        return configure(config)
    return config


class HginCallbacks(RLlibCallback):
    """On the env runners: hook the env to its runner, log one item per finished match."""

    def on_environment_created(self, *, env_runner: Any, env: Any, **kwargs: Any) -> None:
        base = getattr(env, "unwrapped", env)
        if hasattr(base, "attach_to_runner"):
            base.attach_to_runner(env_runner)

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        from hgin_env.envs.rllib import SUMMARY_KEY
        from train.callbacks import episode_row
        from train.league import Member

        info = episode.get_infos(-1)
        if metrics_logger is None or SUMMARY_KEY not in info:
            return
        spec = info.get("opponent_spec", "")
        row = episode_row(info[SUMMARY_KEY], 0, Member(spec).name)
        metrics_logger.log_value(EPISODES_METRIC, {"row": row, "spec": spec}, reduce="item_series")


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


# ---------------------------------------------------------------------- weights, runners
def learner_net_state(algo: Any) -> dict:
    """The learner's CardNet weights (numpy)."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from agents.nets.rllib_module import net_state

    return net_state(algo.get_module(DEFAULT_MODULE_ID).state_dict())


def set_learner_weights(algo: Any, net_state_dict: dict) -> None:
    """Put CardNet weights in the learner's module and every runner's."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID

    from agents.nets.rllib_module import module_state

    algo.set_state({COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {
        DEFAULT_MODULE_ID: module_state(net_state_dict)}}}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


def on_runners(algo: Any, func: Any) -> list:
    """``func(env)`` on the env of every runner that samples (the remote ones, or the
    driver's own when there are none)."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    return group.foreach_env_runner(lambda r: func(r.worker_index, r.env.unwrapped), local_env_runner=not remote)


def push_league(algo: Any, league: Any, states: dict[str, dict], refs: dict[str, Any] | None = None) -> None:
    """The league's members and PFSP weights to every runner; snapshot weights go to the
    runners that lack them (new snapshots, or a runner restarted after a failure).

    A pipelined run (``--pipelined``) pushes without waiting for the batch in flight: the
    snapshots go through Ray's object store, each put once into ``refs``."""
    specs, weights = league.specs, [float(w) for w in league.weights()]
    if getattr(algo, "pipelined", False) and algo.env_runner_group.num_remote_env_runners():
        import ray

        from train.rllib_pipeline import push_league_async

        refs = {} if refs is None else refs
        for spec in [s for s in refs if s not in specs]:  # dropped from the pool: free the object store
            del refs[spec]
        for spec in specs:
            if spec in states and spec not in refs:
                refs[spec] = ray.put(states[spec])
        push_league_async(algo, specs, weights, refs)
        return
    missing = set()
    for names in on_runners(algo, lambda i, env: env.missing_snapshots(specs)):
        missing.update(names)
    payload = {s: states[s] for s in missing if s in states}
    on_runners(algo, lambda i, env: env.set_league(specs, weights, payload))


# ---------------------------------------------------------------------- checkpoints
def save_checkpoint(algo: Any, path: Path, meta: dict, state: dict) -> Path:
    """``Algorithm.save_to_path`` + ``hgin_meta.json`` + ``hgin_state.json``, written in a
    temporary folder renamed into place: a kill leaves a whole checkpoint or none."""
    from agents.rllib_agent import META_NAME

    path = path.resolve()
    tmp = path.with_name(f".{path.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp))
    (tmp / META_NAME).write_text(json.dumps({**meta, "timesteps": int(state["steps"])}, indent=2))
    (tmp / STATE_NAME).write_text(json.dumps(state))
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
    return path


def run_state(algo: Any, steps: int, iteration: int, league: Any) -> dict:
    """What a checkpoint adds to RLlib's: the step, the league, each runner's deal stream."""
    generators = dict(on_runners(algo, lambda i, env: (str(i), env.generator_state())))
    return {"steps": steps, "iteration": iteration, "generators": generators,
            "league": league.to_dict() if league is not None else None}


def find_checkpoint(path: str | Path) -> Path:
    """The checkpoint to resume: ``path`` itself, or the newest complete one of a run folder."""
    path = Path(path)
    if (path / STATE_NAME).is_file():
        return path
    found = sorted((p for p in (path / "checkpoints").glob(f"{CHECKPOINT_PREFIX}*") if (p / STATE_NAME).is_file()),
                   key=lambda p: int(p.name[len(CHECKPOINT_PREFIX):]))
    if not found:
        raise ValueError(f"{path}: no complete checkpoint (checkpoints/{CHECKPOINT_PREFIX}N/{STATE_NAME}) to resume")
    return found[-1]


def rewind(run_dir: Path, step: int) -> None:
    """Cut the logs back to ``step`` (:func:`train.run.cut_logs`) and drop checkpoints,
    snapshots and a final checkpoint after it (what they describe is not in the checkpoint;
    it is trained and logged again)."""
    run.cut_logs(run_dir, RUN_LOGS, step)
    final = run_dir / "checkpoint" / STATE_NAME
    if final.is_file() and json.loads(final.read_text())["steps"] > step:  # a later run's end, not this one's
        shutil.rmtree(final.parent)
    for folder, prefix in (("checkpoints", CHECKPOINT_PREFIX), ("snapshots", "rllib_")):
        for p in (run_dir / folder).glob("*") if (run_dir / folder).is_dir() else []:
            stem = p.name.split(".")[0]
            if p.name.startswith(".") or (stem.startswith(prefix) and int(stem[len(prefix):]) > step):
                shutil.rmtree(p) if p.is_dir() else p.unlink()


def save_snapshot(state: dict, folder: Path, step: int, config: dict) -> Path:
    """A league snapshot: the network's weights and its config, written atomically."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rllib_{step}.pt"
    tmp = folder / f".rllib_{step}.pt.tmp"
    torch.save({"state": {k: torch.as_tensor(v) for k, v in state.items()}, "net_config": config}, tmp)
    os.replace(tmp, path)
    return path


def load_snapshot(path: str | Path) -> dict:
    import torch

    data = torch.load(path, map_location="cpu", weights_only=True)
    return {k: v.numpy() for k, v in data["state"].items()}


def sb3_start_weights(path: str, rules: Any) -> tuple[dict, dict]:
    """``--init-from``: an SB3 checkpoint's CardNet weights and its network sizes (refused,
    in one line, if it was trained for another observation layout than the run's rules)."""
    from agents.nets.policy import load_model
    from agents.ppo import check_layout, load_error, read_meta
    from hgin_env.observation import ObservationLayout

    check_layout(read_meta(path), path, layout=ObservationLayout.for_rules(rules))
    try:
        policy = load_model(path, device="cpu").policy
    except Exception as exc:  # SB3 raises many kinds on damaged files
        raise load_error(path, exc) from None
    if not hasattr(policy, "mlp_extractor") or not hasattr(policy, "sizes"):
        raise ValueError(f"{path}: not a card-network policy (agents.nets.policy.CardAwarePolicy)")
    sizes = dict(policy.sizes, relations=policy.relations, knock_bound=policy.knock_bound,
                 shared_trunk=policy.shared_trunk, privileged=policy.privileged, format=policy.format)
    return {k: v.numpy() for k, v in policy.state_dict().items()}, sizes


# ---------------------------------------------------------------------- logging
class RunLogger:
    """Driver-side logs: episodes.csv, progress.csv (rewritten whole: columns appear as
    their values first do) and TensorBoard."""

    def __init__(self, run_dir: Path, window: int):
        from torch.utils.tensorboard import SummaryWriter

        from train.callbacks import EPISODE_FIELDS

        self.run_dir = run_dir
        self.progress: list[dict] = []
        if (run_dir / "progress.csv").exists():  # a resumed run keeps its rows (cut back by rewind)
            with (run_dir / "progress.csv").open() as f:
                self.progress = list(csv.DictReader(f))
        self.episodes = run.CsvWriter(run_dir / "episodes.csv", EPISODE_FIELDS)
        self.tb = SummaryWriter(str(run_dir / "tb"))
        self.recent: deque[dict] = deque(maxlen=window)

    def log(self, result: dict, steps: int, rows: list[dict], elapsed: float, started: int) -> dict[str, float]:
        from ray.rllib.core import DEFAULT_MODULE_ID
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS

        from train.callbacks import outcome_scalars
        from train.rllib_pipeline import UPDATE_SECONDS, WAIT_SECONDS
        from train.rllib_runner import SAMPLE_SECONDS

        for row in rows:
            row = dict(row, timesteps=steps)
            self.recent.append(row)
            self.episodes.write(row)
        learner = result.get(LEARNER_RESULTS, {}).get(DEFAULT_MODULE_ID, {})
        scalars: dict[str, float] = {
            "iteration": float(result.get("training_iteration", 0)),
            "env_steps": float(steps),
            "perf/env_steps_per_s": (steps - started) / max(elapsed, 1e-9),
            "perf/iteration_s": float(result.get("time_this_iter_s", 0.0)),
            "perf/matches_this_iter": float(len(rows)),
        }
        sample_s = result.get(ENV_RUNNER_RESULTS, {}).get(SAMPLE_SECONDS)
        wait_s = result.get(WAIT_SECONDS)
        if wait_s is not None:  # pipelined: sampling overlaps the update; the driver's wait and update
            scalars["perf/sample_s"] = float(sample_s or 0.0)
            scalars["perf/wait_s"] = float(wait_s)
            scalars["perf/learn_s"] = float(result.get(UPDATE_SECONDS, 0.0))
        elif sample_s is not None:  # this iteration: the slowest runner's sampling, and the rest (the update)
            scalars["perf/sample_s"] = float(sample_s)
            scalars["perf/learn_s"] = scalars["perf/iteration_s"] - float(sample_s)
        for key in ("policy_loss", "vf_loss", "entropy", "vf_explained_var"):
            if key in learner:
                scalars[f"learner/{key}"] = float(learner[key])
        scalars.update(outcome_scalars(list(self.recent)))
        for key, value in scalars.items():
            if "/" in key:
                self.tb.add_scalar(key, value, steps)
        self.tb.flush()
        self.progress.append(scalars)
        fields = list(dict.fromkeys(k for row in self.progress for k in row))
        tmp = self.run_dir / ".progress.csv.tmp"
        with tmp.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.progress)
        tmp.replace(self.run_dir / "progress.csv")
        return scalars

    def close(self) -> None:
        self.episodes.close()
        self.tb.close()


def episode_items(result: dict) -> list[dict]:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

    items = result.get(ENV_RUNNER_RESULTS, {}).get(EPISODES_METRIC) or []
    return items if isinstance(items, list) else [items]


def evaluate(path: Path, args: Args, steps: int, run_dir: Path) -> None:
    """Duplicate matches of the final checkpoint against each opponent, on the evaluation
    seeds of both trainers (:func:`train.run.evaluation_row`), one ``eval.csv`` row each."""
    from agents.rllib_agent import RLlibAgent

    agent = RLlibAgent.load(path)
    writer = run.eval_log(run_dir)
    for opp in filter(None, args.eval_opponents.split(",")):
        row = run.evaluation_row(agent, opp, args.eval_matches, run_rules(args), steps)
        writer.write(row)
        print(f"  eval vs {opp}: win rate {row['win_rate']:.3f} over {row['matches']} matches", flush=True)
    writer.close()


# ---------------------------------------------------------------------- training
@dataclass
class Start:
    """Where a run starts, found before anything is written: its folder and, with
    ``--resume``, the checkpoint and what was saved with it (``hgin_state.json``: step,
    iteration, league, each runner's deal stream)."""

    run_dir: Path
    checkpoint: Path | None = None
    state: dict | None = None

    @property
    def step(self) -> int:
        return int(self.state["steps"]) if self.state else 0

    @property
    def iteration(self) -> int:
        return int(self.state["iteration"]) if self.state else 0


def take_init_from(args: Args) -> tuple[Args, dict | None]:
    """``--init-from``: the SB3 checkpoint's weights, and ``args`` with its network's sizes
    (they become this run's, so its weights load as they are); else ``args`` and None."""
    if not args.init_from:
        return args, None
    weights, sizes = sb3_start_weights(args.init_from, run_rules(args))
    return dataclasses.replace(args, hidden=sizes["hidden"], summary=sizes["summary"],
                               card_hidden=sizes["card_hidden"], relations=sizes["relations"],
                               knock_bound=sizes["knock_bound"], shared_trunk=sizes["shared_trunk"],
                               privileged_critic=bool(sizes["privileged"])), weights


def find_start(args: Args) -> Start:
    """The run folder (:func:`train.run.run_folder`: resumed, the checkpoint's run's) and
    the ``--resume`` checkpoint with its saved state."""
    if not args.resume:
        return Start(run.run_folder(args, "rllib").resolve())
    checkpoint = find_checkpoint(args.resume)
    state = json.loads((checkpoint / STATE_NAME).read_text())
    return Start(run.run_folder(args, "rllib", checkpoint).resolve(), checkpoint, state)


def run_meta(args: Args, rules: Any, run_dir: Path) -> dict:
    """The metadata every checkpoint of the run carries (``hgin_meta.json``)."""
    from agents.ppo import checkpoint_meta
    from agents.rllib_agent import FORMAT
    from hgin_env.batch import privileged_size

    meta = checkpoint_meta(rules, {"format": FORMAT, "module": "default_policy", "run": run_dir.name,
                                   "args": dataclasses.asdict(args)})
    if args.privileged_critic:
        meta["privileged_size"] = privileged_size(rules.format)
    return meta


def make_league(args: Args, start: Start) -> Any:
    """``--league``: the PFSP league of the ``--opponents`` (train/league.py), or resumed,
    the one saved with the checkpoint (less snapshots gone missing). None without it."""
    if not args.league:
        return None
    from train.league import League

    specs, _ = parse_mixture(args.opponents)
    league = League(specs, mode=args.pfsp, exponent=args.pfsp_exponent, pool_size=args.self_play_pool,
                    memory=args.league_memory)
    if start.state and start.state.get("league"):
        league = League.from_dict(start.state["league"])
        league.drop_missing()
    return league


def first_opponents(args: Args, league: Any) -> tuple[list[str], list[float]]:
    """The opponents the runners are built with: the mixture, or the league's fixed members
    (its snapshots arrive with the first push, :class:`LeaguePlay`)."""
    specs, weights = (league.specs, list(league.weights())) if league else parse_mixture(args.opponents)
    first = [(s, w) for s, w in zip(specs, weights, strict=True) if not s.startswith("snapshot:")]
    return [s for s, _ in first], [w for _, w in first]


def open_run_folder(args: Args, start: Start) -> None:
    """Write ``args.json``; a resumed run first cuts its folder back to the checkpoint's step."""
    start.run_dir.mkdir(parents=True, exist_ok=True)
    (start.run_dir / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    if start.state:
        rewind(start.run_dir, start.step)


def restore_or_start(algo: Any, start: Start, start_weights: dict | None) -> None:
    """``--resume``: the checkpoint's weights and optimizer, on every runner too, each
    runner dealing on from its saved stream; ``--init-from``: the SB3 weights; else the
    module's initial weights as built."""
    if start.checkpoint is not None:
        algo.restore_from_path(str(start.checkpoint.resolve()))  # weights and optimizer
        algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
        generators = start.state["generators"] if start.state else {}
        on_runners(algo, lambda i, env: env.continue_from(generators[str(i)]) if str(i) in generators else None)
        print(f"resumed {start.checkpoint} at step {start.step}", flush=True)
    elif start_weights is not None:
        set_learner_weights(algo, start_weights)


class LeaguePlay:
    """The league on the driver during training (``--league``): after each iteration it
    records the finished matches, adds a snapshot of the learner when the step count
    crossed a multiple of ``--self-play-every``, and sends the members, their PFSP weights
    and any snapshot weights a runner lacks to the runners (:func:`push_league`); it writes
    ``league.json`` and ``league.md``."""

    def __init__(self, algo: Any, league: Any, args: Args, rules: Any, run_dir: Path):
        self.algo = algo
        self.league = league
        self.every = args.self_play_every
        self.net_config = net_config(args, rules)
        self.run_dir = run_dir
        # Each snapshot's weights, read once (a resumed league's from its files).
        self.states = {m.spec: load_snapshot(m.spec[len("snapshot:"):]) for m in league.members
                       if m.spec.startswith("snapshot:")}
        self.refs: dict[str, Any] = {}  # a pipelined run's snapshots in the object store

    def push(self) -> None:
        push_league(self.algo, self.league, self.states, self.refs)

    def after_iteration(self, items: list[dict], last: int, steps: int) -> None:
        from train.callbacks import crossed

        for it in items:
            row = it["row"]
            self.league.record(it["spec"], 1.0 if row["won"] else 0.0 if row["lost"] else 0.5)
        if crossed(last, steps, self.every):
            weights_now = learner_net_state(self.algo)
            path = save_snapshot(weights_now, self.run_dir / "snapshots", steps, self.net_config)
            self.league.add_snapshot(path, steps)
            self.states = {m.spec: self.states.get(m.spec) or weights_now
                           for m in self.league.members if m.spec.startswith("snapshot:")}
        self.league.step = steps
        self.push()
        self.league.save(self.run_dir / "league.json")
        (self.run_dir / "league.md").write_text(f"league at step {steps}\n\n```\n{self.league.table()}\n```\n")


def learn(algo: Any, args: Args, rules: Any, start: Start, meta: dict, league: Any) -> tuple[int, int]:
    """Iterate until ``--total-timesteps``: each iteration samples and updates
    (``algo.train()``), logs (:class:`RunLogger`), plays the league, and checkpoints when
    the step count crossed a multiple of ``--checkpoint-every`` (not at the end, whose
    checkpoint the caller saves). Returns the step and iteration reached."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    from train.callbacks import crossed

    play = LeaguePlay(algo, league, args, rules, start.run_dir) if league is not None else None
    if play is not None:
        play.push()
    logger = RunLogger(start.run_dir, args.log_window)
    steps, iteration = start.step, start.iteration
    seconds = 0.0
    try:
        while steps < args.total_timesteps:
            began = time.perf_counter()
            result = algo.train()
            seconds += time.perf_counter() - began
            iteration += 1
            last, steps = steps, steps + int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0))
            items = episode_items(result)
            s = logger.log(result, steps, [it["row"] for it in items], seconds, start.step)
            print(f"iter {iteration:4d}  steps {steps:8d}  {s['perf/env_steps_per_s']:6.0f} steps/s  "
                  f"matches {len(items):3d}  win rate {s.get('charts/match_win_rate', float('nan')):.3f}",
                  flush=True)
            if play is not None:
                play.after_iteration(items, last, steps)
            if crossed(last, steps, args.checkpoint_every) and steps < args.total_timesteps:
                save_checkpoint(algo, start.run_dir / "checkpoints" / f"{CHECKPOINT_PREFIX}{steps}", meta,
                                run_state(algo, steps, iteration, league))
    finally:
        logger.close()
    return steps, iteration


def train(args: Args) -> Path:
    """Run (or resume) one training; returns the final checkpoint folder. Every check (the
    flags, the ``--init-from`` and ``--resume`` checkpoints) comes before anything is
    written; then the run folder, Ray and the algorithm, the start (resumed, warm or new),
    the iterations, the final checkpoint, and with ``--eval-matches`` its evaluation."""
    import ray

    run.configure_torch(args.torch_threads)
    args, start_weights = take_init_from(args)
    args = resolved(args)
    args.validate()
    rules = run_rules(args)
    start = find_start(args)
    meta = run_meta(args, rules, start.run_dir)
    league = make_league(args, start)
    specs, weights = first_opponents(args, league)

    open_run_folder(args, start)
    init_ray(args)
    algo = build_config(args, rules, specs, weights).build_algo()
    try:
        restore_or_start(algo, start, start_weights)
        steps, iteration = learn(algo, args, rules, start, meta, league)
        final = save_checkpoint(algo, start.run_dir / "checkpoint", meta, run_state(algo, steps, iteration, league))
    finally:
        algo.stop()
        ray.shutdown()
    if args.eval_matches:
        evaluate(final, args, steps, start.run_dir)
    return final


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.resume:  # the run's own arguments (its args.json), overridden by the flags given again
        run_dir = run.run_folder_of(find_checkpoint(args.resume))
        saved = json.loads((run_dir / "args.json").read_text()) if run_dir is not None else {}
        args = run.resume_args(argv, saved, Args, NOT_RESUMED, __doc__)
    from agents.ppo import CheckpointError

    try:
        path = train(args)
    except CheckpointError as exc:  # a --init-from checkpoint refused: one line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"saved {path}  (play it: hgin play --opponent rllib:{path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
