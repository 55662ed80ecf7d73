"""Train a MaskablePPO agent for Hollywood Gin (readable top to bottom, one folder per run).

    python -m train.ppo --total-timesteps 2000000 --run-name my_run

A run folder ``runs/<run-name>/`` holds:
    args.json            the arguments of the run
    tb/                  TensorBoard logs (SB3's losses under train/, Hollywood outcomes
                         under charts/, evaluations under eval/)
    progress.csv         the same scalars as CSV (SB3's logger)
    episodes.csv         one row per finished training match (outcome, columns, hand kinds)
    eval.csv             periodic duplicate-match evaluations against the heuristics (a run
                         shorter than --eval-every evaluates once, at its end)
    checkpoints/         periodic checkpoints, each complete with hgin_meta.json (resume with
                         --resume PATH: the run continues in its folder, see resume below)
    snapshots/           frozen copies used as self-play opponents
    model.zip            the final policy (a checkpoint with hgin_meta.json inside)
    learning_curve.png   win rates over training (``python -m train.plots RUN_DIR``)

The run ends by printing a summary (train/summary.py): its steps and steps/s, the win rates
of its last 100 training matches and of its last evaluation, and where the curve is.
The flags are checked against each other by ``Args.validate`` before anything is built;
``train`` then runs its steps in order, one small function each (find_start, make_league,
make_envs, new_model or resumed_model, open_run_folder, imitation_warm_start,
set_up_logging, make_callbacks, learn); what both trainers share of them (the start, the
league and its resume rules, the run metadata, the run folder, ``main``) is
:mod:`train.run`'s.

By default the environments are the batched engine (``--vec-env batched``): 128 matches
in this process, stepped by numpy, with the opponents acting on whole batches (Simple in a
few numpy calls, a frozen snapshot in one torch call, ``self`` = the live learner on the
other seat, the Expert as :class:`agents.batched.BatchedExpert`). ``--vec-env subproc`` is the previous path (one
``TrainingEnv`` per process), kept for comparison.

Three-hand and partnership (``--rules hollywood_three_hand``, ``hollywood_partnership``, ...)
train on the batched engine too (the default): the learner takes one seat, the opponent
drawn for the match plays every other one; in a partnership the learner plays its
partner's seat as well (one trajectory per match on the team's reward), unless
``--partner SPEC`` names an agent for it. The network reads the format's observation
layout, which the checkpoint's metadata records; the periodic evaluations play the
format's duplicate seatings (``arena.matches.seatings``). The imitation warm start records
duel demonstrations and is refused for a format (``--imitation-matches 0``).
``--vec-env subproc`` trains a format on ``TrainingEnv`` (the opponent agent plays the
partner there).

Why these defaults on 2 cores: with the batched engine the environment costs little
(about a tenth of the time); the PPO update is the rest, so the network and minibatches
are sized for one torch thread: 128 games x 32 steps = 4,096 decisions per rollout (as
before: 4 x 1,024), minibatches of 1,024 (fewer, larger matrix products), and the
card-aware network with trunks of 128 -> 64 and a 32-unit per-card scorer (the shipped
policy's; the imitation policy hgin_ppo.zip uses 256 -> 128 and 64, about 3x the FLOPs per
sample).

Both cores (``--pipeline on``; the default is ``off`` until it measures faster: on the shared
2-core machine it ran at 1.0x the synchronous loop, docs/learning.md): a rollout
worker process owns the environments and a CPU copy of the policy and samples the next
rollout while this process updates on the last one (train/pipeline.py: every rollout is
one update old, and the update is decoupled PPO's, which corrects for that). The callbacks
run here and see every step's infos as in a synchronous run; what they change in the
environments (snapshots, the league's weights) reaches the worker one rollout later.
``--pipeline off`` is SB3's synchronous loop, whose update by default computes each
minibatch's gradient in two halves at once, here and in a helper process
(``--update-processes 0``, auto: 2 for a CPU learner on 2 cores or more;
train/split_update.py: SB3's update as a function, the weights equal to float rounding, a
run repeatable bit for bit) and, on the batched engine, samples each rollout in two parts
at once, the helper sampling one (train/split_rollout.py: two streams of matches, each
part's rollout the same whichever process samples it); ``--update-processes 1`` is SB3's
own update and loop.
``--torch-threads 0`` (auto) gives each process that runs torch its share of half the cores
(``OMP_NUM_THREADS`` when set; train.run.torch_threads).
``--device auto|cpu|cuda`` puts the learner (and, synchronous, the rollout's forward) on
the GPU when asked (``auto``: when torch sees one); the engine and the opponents stay on
the CPU, and checkpoints load on a CPU-only machine. ``--rollout-workers K`` (with the
pipeline) samples in K worker processes, each n_envs / K of the matches, joined into one
rollout: for a machine with many cores and a GPU. A script that calls :func:`train` in
a pipelined run must guard its entry point (``if __name__ == "__main__":``): the worker is
a spawned process, which imports the script again.

Resuming (after a crash or a kill):

    python -m train.ppo --resume runs/my_run/checkpoints/ppo_200000_steps.zip

continues the run in its own folder with the arguments it was started with (any flag given
again overrides them; ``--total-timesteps`` is the run's total, not extra steps). The logs keep
their rows up to the checkpoint's step and drop the later ones (the checkpoint does not contain
what they describe; those steps are trained and logged again), checkpoints and snapshots after
it are deleted, and TensorBoard continues at the checkpoint's step. With ``--league`` the
league saved with the checkpoint goes on, joined by any opponent ``--opponents`` names
(both trainers' rule, :func:`train.run.make_league`). Nothing is written until
the checkpoint has been checked and loaded. With ``--run-name`` the resumed training goes to
that (new) folder instead.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.spec import parse_mixture  # noqa: F401  (the opponents flag's grammar; re-exported)
from train import run
from train.recipe import Recipe

# What both trainers' runs share (train/run.py).
from train.run import ResumeError, Start, make_league, resolved, run_folder_of

if TYPE_CHECKING:  # torch and SB3 load only when training starts (``--help`` stays quick)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv

    from hgin_env.rules import Rules
    from train.distill import Distillation
    from train.league import League


@dataclass
class Args(Recipe):
    run_name: str = field(default="", metadata={"help": "run folder name (default: ppo_<seed>_<time>)"})
    out_dir: str = field(default="runs", metadata={"help": "parent folder of run folders"})
    seed: int = field(default=0, metadata={"help": "seed of the environments and the network"})
    total_timesteps: int = field(default=1_000_000, metadata={"help": "learner decisions to train for"})
    n_envs: int = field(default=0, metadata={
        "help": "parallel environments: matches in the batch with 'batched' (0 = 128; three-hand 256), "
                "processes with 'subproc'/'dummy' (0 = 4) (default: 0 = by --vec-env)"})
    vec_env: str = field(default="batched", metadata={
        "help": "'batched' (numpy batch in-process), 'subproc' (one env per process) or 'dummy'"})
    rules: str = field(default="hollywood", metadata={"help": "rules profile name"})
    episode: str = field(default="match", metadata={"help": "'match' (whole Hollywood match) or 'hand'"})
    self_play_weight: float = field(default=0.3, metadata={
        "help": "without --league: share of matches against the --self-play-every snapshots"})
    imitation_matches: int = field(default=0, metadata={
        "help": "warm start: clone the teacher's play over N matches before PPO (0 = off)"})
    imitation_teacher: str = field(default="expert", metadata={"help": "agent to imitate"})
    imitation_epochs: int = field(default=4, metadata={"help": "epochs over the recorded decisions"})
    imitation_lr: float = field(default=2e-3, metadata={"help": "Adam learning rate of the imitation phase"})
    imitation_knock_weight: float = field(default=1.0, metadata={
        "help": "loss weight of recorded decisions where a knock was legal"})
    n_steps: int = field(default=0, metadata={
        "help": "rollout steps per environment per update (default: 0 = 32 with 'batched' (three-hand 16), "
                "1024 otherwise)"})
    policy: str = field(default="card", metadata={"help": "'card' (card-aware network) or 'mlp'"})
    knock_start_gap: float = field(default=0.0, metadata={
        "help": "with --init-from and --knock-bound: start the knock outputs at the discard outputs "
                "plus this (< 0: a policy that mostly plays on; 0 = off; see agents/nets/policy.py)"})
    eval_every: int = field(default=100_000, metadata={"help": "evaluate every N steps (0 = off)"})
    eval_matches: int = field(default=100, metadata={"help": "duplicate matches per opponent per evaluation"})
    eval_opponents: str = field(default="random,simple,expert", metadata={
        "help": "agents to evaluate against, comma-separated (random, simple, expert, ppo:PATH...)"})
    checkpoint_every: int = field(default=200_000, metadata={"help": "save a checkpoint every N steps (0 = off)"})
    resume: str = field(default="", metadata={"help": "checkpoint .zip to continue training from"})
    init_from: str = field(default="", metadata={
        "help": "checkpoint .zip whose network weights start a new run (e.g. an imitation-only run)"})
    target_kl: float = field(default=0.0, metadata={"help": "stop an update's epochs past this KL (0 = off)"})
    frozen_policy: bool = field(default=False, metadata={
        "help": "train the critic alone: the started policy's moves stay as they are, bit for bit, while its "
                "critic learns this run's game (a duel network widened into a format; needs --init-from or "
                "--resume; agents.nets.policy.freeze_actor); without the start's --shared-trunk the critic is a "
                "fresh trunk of its own that reads the whole observation"})
    distill: str = field(default="", metadata={
        "help": "folder of recorded search games (train.search_games): add the distillation loss "
                "(train/distill.py) to PPO's"})
    distill_coef: float = field(default=1.0, metadata={
        "help": "weight of the distillation loss against PPO's (with Adam it sets the mix of the two in a "
                "step, not the step's length: that is the learning rate's; docs/runs/soft54)"})
    distill_batch: int = field(default=256, metadata={"help": "recorded decisions per PPO minibatch"})
    distill_deviation_weight: float = field(default=1.0, metadata={
        "help": "weight of the decisions where the search left the policy's move"})
    distill_holdout: float = field(default=0.1, metadata={
        "help": "share of the recorded matches held out (agreement logged, never trained on)"})
    distill_target: str = field(default="chosen", metadata={
        "help": "'chosen': cross-entropy with the search's move; 'soft': KL toward the improved policy "
                "softmax(log prior + c*Q) of the search's values (train/distill.py)"})
    distill_c: float = field(default=10.0, metadata={
        "help": "with --distill-target soft: the weight c of the search's values (hand points / 100)"})
    progress_bar: bool = field(default=True, metadata={"help": "show a progress bar"})
    pipeline: str = field(default="off", metadata={
        "help": "'on': a worker process samples the next rollout while this one updates (train/pipeline.py); "
                "'off' (default: the pipeline measured no faster on 2 cores): SB3's synchronous loop; "
                "'auto' = on with --vec-env batched, else off"})
    rollout_workers: int = field(default=1, metadata={
        "help": "with --pipeline on: worker processes that sample the rollouts, each n_envs / N of the "
                "environments (a machine with many cores and a GPU; train/pipeline.py)"})
    device: str = field(default="auto", metadata={
        "help": "where the learner runs: 'cpu', 'cuda' or 'auto' (CUDA when torch sees it); the engine and "
                "the opponents run on the CPU"})
    update_processes: int = field(default=0, metadata={
        "help": "processes computing each PPO minibatch's gradient: 2 = its two halves at once, here and in a "
                "helper process (train/split_update.py), which also samples half of each rollout's matches "
                "(train/split_rollout.py; batched engine, even --n-envs); 1 = SB3's update and rollouts in this "
                "process; 0 = auto: 2 for a CPU learner on 2 cores or more with --pipeline off, else 1"})
    rollout_parts: int = field(default=0, metadata={
        "help": "with the update split (--update-processes 2) on the batched engine: 2 = each rollout sampled in "
                "two parts at once, n_envs / 2 matches each, one part in the update's helper process "
                "(train/split_rollout.py); 1 = SB3's rollouts in this process (faster where other jobs hold the "
                "cores); 0 = auto: 2 with the split update and an even --n-envs, else 1"})
    torch_threads: int = field(default=0, metadata={
        "help": "torch CPU threads per process (0 = auto: OMP_NUM_THREADS if set, else half the cores shared by "
                "the processes that run torch, train.run.torch_threads)"})

    def validate(self) -> None:
        """Check the flags against each other before anything is built or written; a
        combination that cannot train raises ``ValueError`` naming the flags. :func:`train`
        calls it; checks that need the checkpoint (``--resume``) are made where it is read."""
        from hgin_env.rules import get_rules

        batched = self.vec_env == "batched"
        rules = get_rules(self.rules)
        if rules.format != "duel" and self.imitation_matches > 0:
            raise ValueError(f"--imitation-matches records duel demonstrations; format={rules.format!r} "
                             f"trains by PPO alone (--imitation-matches 0)")
        if self.partner and rules.format != "partnership":
            raise ValueError(f"--partner is for a partnership; format={rules.format!r} has no partners")
        if self.partner and not batched:
            raise ValueError("--partner plays the learner's partner on the batched engine (--vec-env batched); "
                             "TrainingEnv's partner is its opponent agent")
        if self.knock_start_gap and not self.init_from:  # it sets the weights --init-from loads
            raise ValueError("--knock-start-gap starts from a checkpoint: give --init-from")
        for flag, on in (("--privileged-critic", self.privileged_critic), ("--league", self.league)):
            if on and not batched:
                raise ValueError(f"{flag} trains on the batched engine (--vec-env batched)")
        if self.privileged_critic and (self.imitation_matches or self.policy != "card"):
            raise ValueError("--privileged-critic is for the card policy trained by PPO alone "
                             "(no --imitation-matches: recorded demonstrations hold no privileged facts)")
        self.validate_league()
        if self.frozen_policy and not (self.init_from or self.resume):
            raise ValueError("--frozen-policy trains the critic of a policy that already plays: give --init-from "
                             "(or --resume)")
        if self.frozen_policy and self.policy != "card":
            raise ValueError("--frozen-policy trains the card policy's critic (--policy card)")
        if self.frozen_policy and (self.distill or self.imitation_matches):
            raise ValueError("--frozen-policy keeps the policy's moves: --distill and --imitation-matches train them "
                             "(give one or the other)")
        if self.frozen_policy and self.update_processes == 2:
            raise ValueError("--frozen-policy updates in one process (its helper's copy would learn the actor): "
                             "give --update-processes 1 or 0")
        if self.distill and not (Path(self.distill) / "chunks").is_dir():
            raise ValueError(f"--distill {self.distill}: no recorded search games there (run train.search_games)")
        if self.distill_target not in ("chosen", "soft") or self.distill_c < 0:
            raise ValueError(f"--distill-target must be chosen or soft and --distill-c >= 0, got "
                             f"{self.distill_target!r} and {self.distill_c}")
        if self.distill:
            games = json.loads((Path(self.distill) / "args.json").read_text()).get("rules")
            if games != self.rules or self.policy != "card":
                raise ValueError(f"--distill {self.distill}: its search games play {games!r}; the card policy "
                                 f"trained here plays --rules {self.rules!r}")
        if self.episode not in ("match", "hand"):
            raise ValueError(f"--episode must be match or hand, not {self.episode!r}")
        if self.episode == "hand" and rules.format != "duel":
            raise ValueError(f"--episode hand plays one hand of the duel; format={rules.format!r} plays matches")
        if "self" in parse_mixture(self.opponents)[0] and not batched:  # (an empty mixture is refused too)
            raise ValueError("the 'self' opponent needs --vec-env batched")
        if self.pipeline not in ("auto", "on", "off"):
            raise ValueError(f"--pipeline must be auto, on or off, not {self.pipeline!r}")
        if self.pipeline == "on" and not batched:
            raise ValueError("--pipeline on samples the batched engine in its worker (--vec-env batched); "
                             f"--vec-env {self.vec_env} trains with --pipeline off")
        if self.rollout_workers < 1 or (self.rollout_workers > 1 and not self.pipelined):
            raise ValueError(f"--rollout-workers {self.rollout_workers}: one or more, and more than one samples in "
                             f"worker processes (--pipeline on)")
        if self.n_envs and self.n_envs % self.rollout_workers:
            raise ValueError(f"--rollout-workers {self.rollout_workers} share --n-envs {self.n_envs} evenly: "
                             f"give a multiple of {self.rollout_workers}")
        run.torch_device(self.device)  # refuses an unknown name, or cuda without CUDA
        if self.update_processes not in (0, 1, 2):
            raise ValueError(f"--update-processes must be 0 (auto), 1 or 2, not {self.update_processes}")
        if self.update_processes == 2 and self.pipelined:
            raise ValueError("--update-processes 2 splits the synchronous loop's update; a pipelined run (--pipeline "
                             "on) updates in one process: give --update-processes 1 or --pipeline off")
        if self.update_processes == 2 and run.torch_device(self.device) != "cpu":
            raise ValueError("--update-processes 2 splits a CPU learner's update; with --device cuda give 1")
        if self.rollout_parts not in (0, 1, 2):
            raise ValueError(f"--rollout-parts must be 0 (auto), 1 or 2, not {self.rollout_parts}")
        if self.rollout_parts == 2 and not (self.split_update and batched):
            raise ValueError("--rollout-parts 2 samples a part in the split update's helper: it needs "
                             "--update-processes 2 (or auto on 2 cores), --pipeline off and --vec-env batched")
        if self.rollout_parts == 2 and self.n_envs % 2:
            raise ValueError(f"--rollout-parts 2 deals n_envs / 2 matches to each part: give an even --n-envs, "
                             f"not {self.n_envs}")

    @property
    def pipelined(self) -> bool:
        """Whether this run samples in a worker process (``--pipeline``, train/pipeline.py);
        never for a run of no PPO steps (``--total-timesteps 0``: imitation only)."""
        return self.total_timesteps > 0 and (self.pipeline == "on" or
                                             (self.pipeline == "auto" and self.vec_env == "batched"))

    @property
    def split_update(self) -> bool:
        """Whether each minibatch's gradient is computed in two halves at once, here and in a
        helper process (``--update-processes``, train/split_update.py): on ``auto``, for a CPU
        learner with two cores or more, when the run is not pipelined."""
        if self.total_timesteps <= 0 or self.pipelined or self.update_processes == 1 or self.frozen_policy:
            return False
        return self.update_processes == 2 or (run.available_cores() >= 2 and run.torch_device(self.device) == "cpu")

    @property
    def sampled_parts(self) -> int:
        """The parts a rollout is sampled in, each its own stream of matches: a pipelined
        run's rollout workers; ``--rollout-parts``, whose auto is two with the split update
        on the batched engine (its helper samples one, train/split_rollout.py) for an even
        number of matches; else one."""
        if self.pipelined:
            return self.rollout_workers
        if self.rollout_parts:
            return self.rollout_parts
        even = self.n_envs >= 2 and self.n_envs % 2 == 0
        return 2 if self.split_update and self.vec_env == "batched" and even else 1

    @property
    def torch_processes(self) -> int:
        """The processes that run torch at once: the learner, and its rollout workers when
        pipelined or its update's helper when the update is split."""
        if self.pipelined:
            return 1 + self.rollout_workers
        return 2 if self.split_update else 1


#: Arguments a resumed run does not take over from the run it continues: the shared ones,
#: and the imitation warm start (a resumed run does not redo it).
NOT_RESUMED = run.NOT_RESUMED + ("imitation_matches", "knock_start_gap")


def parse_args(argv: list[str] | None = None, defaults: dict | None = None) -> Args:
    """This trainer's flags (:func:`train.run.parse_args` of :class:`Args`)."""
    return run.parse_args(argv, defaults, Args, __doc__)


#: PPO settings a resumed run takes from its arguments (the rest is the checkpoint's).
RESUMABLE_HYPERPARAMETERS = ("learning_rate", "ent_coef", "clip_range", "n_epochs", "batch_size",
                             "gamma", "gae_lambda", "target_kl")


def resumed_hyperparameters(args: Args) -> dict:
    """``custom_objects`` for ``MaskablePPO.load``: the run's PPO settings (flags given with
    ``--resume`` override the run's ``args.json``, and so the model's)."""
    out = {name: getattr(args, name) for name in RESUMABLE_HYPERPARAMETERS}
    out["target_kl"] = args.target_kl or None
    return out


def find_start(args: Args, rules: Rules) -> Start:
    """The run folder (``--out-dir/--run-name``, or the resumed checkpoint's own folder), and
    every checkpoint given (``--resume``, ``--init-from``) read, checked against the rules
    and the observation layout, and loaded (``Start.weights``: the last one, ``--init-from``'s
    when given, is what a new model starts from); resumed, the league saved beside the
    checkpoint (``train.league.league_state_path``)."""
    from agents.nets.policy import load_model
    from agents.ppo import check_layout, load_error, read_meta
    from hgin_env.observation import ObservationLayout

    resume_meta: dict = {}
    league = None
    if args.resume:
        resume_meta = read_meta(args.resume)
        if resume_meta.get("rules") != rules.to_dict():
            raise ResumeError(f"{args.resume} was trained with rules {resume_meta.get('rules', {}).get('name')!r}, "
                              f"this run plays {rules.name!r}")
    run_dir = run.run_folder(args, "ppo", args.resume or None)
    step = int(resume_meta.get("timesteps", -1)) if args.resume else 0
    if args.resume and args.league:  # the league as it was at the checkpoint
        from train.league import League, league_state_path

        saved = league_state_path(run_folder_of(Path(args.resume)) or run_dir, step)
        league = League.load(saved) if saved.is_file() else None
    weights = None
    layout = ObservationLayout.for_rules(rules)
    for path in filter(None, (args.resume, args.init_from)):
        meta = read_meta(path)
        if path == args.init_from and meta.get("observation_format", "duel") == "duel" \
                and layout.format != "duel":  # a duel network widens into a format's (load_start_weights)
            check_layout(meta, path, layout=ObservationLayout(layout.columns, "duel"))
        else:
            check_layout(meta, path, layout=layout)
        try:  # the whole checkpoint loads, before any environment or file is made
            weights = load_model(path, device="cpu")  # checked on the CPU; the model moves to --device
        except Exception as exc:  # SB3 raises many kinds on damaged files
            raise load_error(path, exc) from None
    return Start(run_dir, Path(args.resume) if args.resume else None, step, resume_meta, league, weights)


def run_meta(args: Args, rules: Rules, run_dir: Path, distillation: Distillation | None = None) -> dict:
    """The metadata every checkpoint of the run carries (``hgin_meta.json``,
    :func:`train.run.run_meta`), with the weights it started from and its distillation."""
    meta = run.run_meta(args, rules, run_dir)
    if args.init_from:  # which weights the run started from (a duel network widens into a format's)
        from agents.ppo import read_meta

        started = read_meta(args.init_from)
        meta["started_from"] = {"path": args.init_from, "run": started.get("run"),
                                "observation_format": started.get("observation_format", "duel"),
                                "sha256": hashlib.sha256(Path(args.init_from).read_bytes()).hexdigest()}
    if distillation is not None:  # the lineage: which search games taught it
        meta["distilled_from"] = distillation.lineage()
    return meta


def make_envs(args: Args, rules: Rules, specs: list[str], weights: list[float], here: bool = False) -> VecEnv:
    """The learner's environments against the opponent mixture, one seat at random: the
    batched engine (``--vec-env batched``), or one ``TrainingEnv`` per process or in a loop.
    A pipelined run's are built in its rollout worker (:class:`train.pipeline.PipelinedEnv`;
    ``here`` builds them in this process, as the worker does)."""
    if args.pipelined and not here:
        import importlib

        from train.pipeline import PipelinedEnv, worker_seed

        # By the module's importable name and plain values: the spawned workers unpickle
        # them also when this module runs as ``__main__`` (python -m train.ppo). Worker w
        # builds n_envs / K of the matches from its own seed (worker 0: the run's).
        worker_envs = importlib.import_module("train.ppo").worker_envs
        k = args.rollout_workers
        parts = [functools.partial(worker_envs, dataclasses.asdict(dataclasses.replace(
            args, n_envs=args.n_envs // k, seed=worker_seed(args.seed, w))), rules, specs, weights) for w in range(k)]
        return PipelinedEnv(parts, threads=run.torch_threads(args.torch_threads, processes=args.torch_processes))
    if args.vec_env == "batched":
        from train.envs import BatchedVecEnv

        def batched(n_envs: int, seed: int) -> BatchedVecEnv:
            return BatchedVecEnv(n_envs, specs, weights, rules=rules, reward=args.reward,
                                 match_bonus=args.match_bonus, seed=seed, shaping=args.shaping,
                                 shaping_gamma=args.gamma, shaping_potential=args.shaping_potential,
                                 privileged=args.privileged_critic, partner_spec=args.partner or None,
                                 episode=args.episode)

        if rollout_parts(args) == 2 and not here:  # sampled in two parts at once (train/split_rollout.py)
            from train.split_rollout import SplitEnv, split_parts

            return SplitEnv(split_parts(batched, args.n_envs, args.seed))
        return batched(args.n_envs, args.seed)
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from train.envs import TrainingEnv

    def make_env(rank: int):
        def thunk():
            env = TrainingEnv(specs, weights, rules=rules, reward=args.reward,
                              match_bonus=args.match_bonus, episode=args.episode,
                              seed=args.seed * 100 + rank, shaping=args.shaping,
                              shaping_gamma=args.gamma, shaping_potential=args.shaping_potential)
            env = Monitor(env)
            env.reset(seed=args.seed * 100 + rank)
            return env
        return thunk

    vec_cls = SubprocVecEnv if args.vec_env == "subproc" and args.n_envs > 1 else DummyVecEnv
    return vec_cls([make_env(i) for i in range(args.n_envs)])


def saved_rollout_parts(checkpoint: str, resume_state: dict | None = None) -> int | None:
    """The parts the run of ``checkpoint`` sampled its rollouts in, each its own stream of
    matches (its saved deal state's), or None where it saved none; ``resume_state``: what
    was saved beside it, when already read."""
    from train.callbacks import read_resume_state
    from train.rollout import ROLLOUT_WORKERS_KEY

    if resume_state is None:
        resume_state = read_resume_state(Path(checkpoint)) or {}
    state = resume_state.get("generator_state")
    return None if state is None else len(state.get(ROLLOUT_WORKERS_KEY, [None]))


def rollout_parts(args: Args) -> int:
    """The parts this run samples its rollouts in (``Args.sampled_parts``), except that on
    ``--rollout-parts`` auto a resumed one-stream run stays one stream (its deals go on as
    they were dealt; the update is split all the same)."""
    parts = args.sampled_parts
    if args.resume and parts == 2 and not args.rollout_parts and not args.pipelined \
            and saved_rollout_parts(args.resume) == 1:
        return 1
    return parts


def worker_envs(fields: dict, rules: Rules, specs: list[str], weights: list[float]) -> VecEnv:
    """A pipelined run's environments, built in its rollout worker (:func:`make_envs`)."""
    return make_envs(Args(**fields), rules, specs, weights, here=True)


def algorithm(args: Args) -> type[MaskablePPO]:
    """The PPO class of the run: :class:`train.pipeline.PipelinedPPO` when pipelined, else
    sb3-contrib's MaskablePPO (their checkpoints are the same)."""
    if args.pipelined:
        from train.pipeline import PipelinedPPO

        return PipelinedPPO
    if args.split_update:
        from train.split_update import SplitUpdatePPO

        return SplitUpdatePPO
    from sb3_contrib import MaskablePPO

    return MaskablePPO


def new_model(args: Args, envs: VecEnv, rules: Rules, start: Start) -> MaskablePPO:
    """A fresh MaskablePPO (the card-aware policy or an MLP) on ``--device``, started from
    ``--init-from``'s weights when given."""
    from agents.nets.policy import CardAwarePolicy, load_start_weights
    from hgin_env.batch import privileged_size

    if args.policy == "card":
        policy = CardAwarePolicy
        policy_kwargs = {"columns": rules.columns, "format": rules.format, "hidden": args.hidden,
                         "summary": args.summary, "card_hidden": args.card_hidden, "relations": args.relations,
                         "knock_bound": args.knock_bound,
                         "privileged": privileged_size(rules.format) if args.privileged_critic else 0,
                         "shared_trunk": args.shared_trunk}
    else:
        policy, policy_kwargs = "MlpPolicy", {"net_arch": [256, 256]}
    model = algorithm(args)(policy, envs, learning_rate=args.learning_rate, n_steps=args.n_steps,
                        batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
                        gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
                        policy_kwargs=policy_kwargs, seed=args.seed, device=run.torch_device(args.device),
                        verbose=0, target_kl=args.target_kl or None)
    if start.weights is not None:  # --init-from
        # --frozen-policy with another critic (a trunk of its own): the actor alone, the critic fresh.
        same_critic = getattr(start.weights.policy, "shared_trunk", False) == args.shared_trunk
        load_start_weights(model.policy, start.weights.policy, args.knock_start_gap or None,
                           critic=same_critic or not args.frozen_policy)
    return model


def resumed_model(args: Args, envs: VecEnv) -> tuple[MaskablePPO, int, dict]:
    """``--resume``: the checkpoint's model on ``envs`` and ``--device`` with the run's PPO
    settings, its step, and what was saved beside it (``train.callbacks.save_resume_state``); the environments
    deal on from the saved generator state. The environments are closed on a refusal."""
    from agents.nets.policy import load_model
    from agents.ppo import load_error
    from train.callbacks import read_resume_state

    try:
        # The run's (possibly overridden) hyperparameters replace the saved ones, so that
        # e.g. `--resume ... --learning-rate 1e-4` anneals the run as args.json says.
        model = load_model(args.resume, env=envs, device=run.torch_device(args.device),
                           custom_objects=resumed_hyperparameters(args), algorithm=algorithm(args))
    except Exception as exc:  # SB3 raises many kinds on damaged files or other spaces
        envs.close()
        raise load_error(args.resume, exc) from None
    start_step = int(model.num_timesteps)
    if args.total_timesteps <= start_step:
        envs.close()
        raise ResumeError(f"{args.resume} is at step {start_step}; --total-timesteps "
                          f"{args.total_timesteps} (the run's total) leaves nothing to train")
    # Deal on from the checkpoint's generator state (not the run's first matches again).
    resume_state = read_resume_state(Path(args.resume)) or {}
    saved_parts = saved_rollout_parts(args.resume, resume_state)
    dealt_on = "generator_state" in resume_state and hasattr(envs, "continue_from")
    if dealt_on and saved_parts != rollout_parts(args):
        envs.close()
        how = {1: "--rollout-parts 1 --pipeline off", 2: "--rollout-parts 2 --update-processes 2 (or --pipeline on "
               "--rollout-workers 2)"}.get(saved_parts, f"--pipeline on --rollout-workers {saved_parts}")
        raise ResumeError(f"{args.resume} was saved with its rollouts sampled in {saved_parts} part(s), each "
                          f"dealing its own matches; resume it with {how}")
    if dealt_on:
        envs.continue_from(resume_state["generator_state"])
    else:  # said aloud: the per-process envs (dummy, subproc) have no saved deal state yet
        print(f"warning: no saved deal state for {args.resume} (a final model.zip, an older checkpoint, "
              f"or --vec-env {args.vec_env}): the resumed run deals from its seed again", file=sys.stderr)
    return model, start_step, resume_state


def imitation_warm_start(args: Args, model: MaskablePPO, rules: Rules, run_dir: Path, meta: dict) -> None:
    """``--imitation-matches N``: clone the teacher's play over N matches before PPO
    (train/imitation.py says why); writes ``imitation.json`` and ``model_imitation.zip``."""
    from agents.ppo import save_checkpoint
    from train.imitation import collect, pretrain

    demos = collect(args.imitation_matches, teacher=args.imitation_teacher, rules=rules,
                    gamma=args.gamma, match_bonus=args.match_bonus, reward=args.reward, shaping=args.shaping,
                    shaping_potential=args.shaping_potential,
                    seed=10_000_000 + args.seed,
                    workers=max(1, min(args.n_envs, os.cpu_count() or 1)), progress=args.progress_bar)
    stats = pretrain(model, demos, epochs=args.imitation_epochs, lr=args.imitation_lr,
                     knock_weight=args.imitation_knock_weight, seed=args.seed, progress=args.progress_bar)
    stats["decisions"] = len(demos)
    (run_dir / "imitation.json").write_text(json.dumps(stats, indent=2))
    save_checkpoint(model, run_dir / "model_imitation.zip", meta)


def set_up_logging(model: MaskablePPO, run_dir: Path, start_step: int | None, resume_state: dict) -> None:
    """SB3's logger to ``progress.csv`` and TensorBoard ``tb/``, continued at the checkpoint's
    step when resuming."""
    from stable_baselines3.common.logger import Logger

    from train.callbacks import continued_csv_output, continued_tensorboard_output

    model.set_logger(Logger(str(run_dir), [continued_csv_output(run_dir / "progress.csv", start_step),
                                           continued_tensorboard_output(run_dir / "tb", start_step)]))
    if start_step is not None:  # the last update's train/* go out with the next row, as unresumed
        for key, value in resume_state.get("train_metrics", {}).items():
            model.logger.record(key, value)


def make_callbacks(args: Args, run_dir: Path, rules: Rules, meta: dict, league: League | None,
                   specs: list[str], weights: list[float]) -> list[BaseCallback]:
    """Outcome logging, progress bar, evaluations, the league, checkpoints, self-play snapshots."""
    from train.callbacks import Checkpoints, HollywoodLogger, PeriodicEval, ProgressFps, SelfPlaySnapshots

    callbacks = [HollywoodLogger(run_dir)]
    if args.progress_bar:
        callbacks.append(ProgressFps(args.total_timesteps))
    if args.eval_every:
        callbacks.append(PeriodicEval(run_dir, args.eval_every, args.eval_matches,
                                      [o for o in args.eval_opponents.split(",") if o], rules))
    companions = []
    if league is not None:
        from train.league import LeagueCallback

        companions.append(LeagueCallback(run_dir, league, args.self_play_every, meta))
        callbacks.extend(companions)
    if args.checkpoint_every:
        callbacks.append(Checkpoints(run_dir, args.checkpoint_every, meta, companions=companions))
    if args.self_play_every and league is None:
        callbacks.append(SelfPlaySnapshots(run_dir, args.self_play_every, args.self_play_pool,
                                           args.self_play_weight, specs, weights, meta))
    return callbacks


def train(args: Args) -> Path:
    """Run one training; returns the path of the final model. Every check (the flags, the
    checkpoints) comes before anything is written; then the run folder, the optional
    imitation warm start, PPO, the final model, its learning curve and a summary."""
    from stable_baselines3.common.callbacks import CallbackList

    from agents.ppo import save_checkpoint
    from hgin_env.rules import get_rules
    from train.plots import plot_learning_curves
    from train.summary import run_summary

    args = resolved(args)
    args.validate()
    run.configure_torch(run.torch_threads(args.torch_threads, processes=args.torch_processes))
    rules = get_rules(args.rules)
    start = find_start(args, rules)
    distillation = None
    if args.distill:  # PPO's loss plus the distillation term (train/distill.py), installed on the model below
        from train.distill import Distillation

        distillation = Distillation(args.distill, coef=args.distill_coef, batch=args.distill_batch,
                                    deviation_weight=args.distill_deviation_weight, holdout=args.distill_holdout,
                                    target=args.distill_target, c=args.distill_c,
                                    seed=args.seed)
    meta = run_meta(args, rules, start.run_dir, distillation)

    # 1. Environments: the learner against a mixture of opponents (or a league), one seat at random.
    league = make_league(args, start)
    specs, weights = (league.specs, list(league.weights())) if league else parse_mixture(args.opponents)
    envs = make_envs(args, rules, specs, weights)

    # 2. The agent: a new one, or the checkpoint to resume.
    start_step, resume_state = None, {}
    if args.resume:
        model, start_step, resume_state = resumed_model(args, envs)
    else:
        model = new_model(args, envs, rules, start)
    if args.frozen_policy:  # after the weights are in, new or resumed: only the critic learns
        from agents.nets.policy import freeze_actor

        freeze_actor(model.policy)
    if distillation is not None:
        distillation.install(model)
    if hasattr(envs, "set_live_model"):
        envs.set_live_model(model)  # the 'self' opponent samples the learner's current policy

    # 3. The run folder is written from here on; optionally warm-start by imitation.
    from train.callbacks import rewind_run

    run_dir = start.run_dir
    if start_step is not None:  # cut back to the model's own step count
        start = dataclasses.replace(start, step=start_step)
    run.open_run_folder(args, start, rewind_run)
    if args.imitation_matches and not args.resume:
        imitation_warm_start(args, model, rules, run_dir, meta)
    set_up_logging(model, run_dir, start_step, resume_state)

    # 4. Learn (the callbacks log, evaluate, checkpoint, snapshot), save with metadata, plot.
    callbacks = make_callbacks(args, run_dir, rules, meta, league, specs, weights)
    if distillation is not None:
        callbacks.append(distillation.callback())
    began = time.perf_counter()
    try:
        if args.total_timesteps > 0:  # 0: imitation only; on resume the total counts from step 0
            model.learn(total_timesteps=args.total_timesteps - (start_step or 0), callback=CallbackList(callbacks),
                        reset_num_timesteps=start_step is None)
    finally:
        envs.close()  # a pipelined run's worker process ends here, whatever happened
    seconds = time.perf_counter() - began
    model_path = save_checkpoint(model, run_dir / "model.zip", meta)
    curve = plot_learning_curves(run_dir)
    print(run_summary(run_dir, model.num_timesteps, model.num_timesteps - (start_step or 0), seconds, curve))
    return model_path


def saved_args(checkpoint: str) -> dict | None:
    """The arguments the resumed checkpoint's run was started with (its metadata's)."""
    from agents.ppo import read_meta

    return read_meta(checkpoint).get("args")


def main(argv: list[str] | None = None) -> int:
    """``python -m train.ppo``: :func:`train.run.main` with this trainer."""
    from agents.ppo import CheckpointError

    return run.main(run.Trainer(Args, __doc__, NOT_RESUMED, saved_args, train, (CheckpointError, ResumeError)),
                    argv)


if __name__ == "__main__":
    sys.exit(main())
