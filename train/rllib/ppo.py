"""PPO with Ray RLlib (new API stack) on the batched engine, locally or on a Ray cluster.

    python -m train.rllib.ppo --run-name my_rllib --total-timesteps 200000                 # this machine
    python -m train.rllib.ppo --run-name lg --league --self-play-every 50000 --opponents simple,expert
    python -m train.rllib.ppo --resume runs/lg                                             # after a kill
    RAY_ADDRESS=HEAD:6379 python -m train.rllib.ppo --working-dir . --num-env-runners 32 --n-envs 4096 ...

``train.ppo``'s recipe on RLlib: each env runner (:class:`train.rllib.runner.BatchedEnvRunner`)
steps its share of ``--n-envs`` matches of the batched engine as one vector env
(:mod:`train.rllib.env`) in whole-batch steps, the opponents acting inside the runner on
whole batches (heuristics as numpy agents, league snapshots and ``self`` as one torch
call); the learner (:class:`train.rllib.learner.CardPPOLearner`) trains the project's card
network as an RLModule (:mod:`agents.nets.rllib_module`, the same classes as ``agents.nets.policy``),
with the privileged critic under ``--privileged-critic``. One iteration = ``--n-envs`` x
``--n-steps`` learner decisions, then ``--n-epochs`` of minibatches of ``--batch-size``
(4,096 / 1,024 by default, as ``train.ppo``). PPO's settings are SB3's: no KL penalty, no
value clipping, gradient norm 0.5, value loss weight 0.5, advantages normalised per
minibatch.

``--pipelined`` (with ``--num-env-runners`` >= 1): the runners sample the next batch while
the learner updates on this one (:mod:`train.rllib.pipeline`): both cores busy, each batch
one update old when it is learned from.

``--device auto|cpu|cuda`` (as ``train.ppo``'s): the learner on the GPU when asked (``auto``:
when torch sees one; RLlib's ``num_gpus_per_learner``, :func:`train.rllib.config.learner_gpus`),
the env runners (the engine, the opponents, the sampling forward) on the CPU cores;
checkpoints hold numpy arrays, so they load on a CPU-only machine and resume on either.

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
deal stream; the logs are cut back to its step. With ``--league`` any opponent
``--opponents`` names joins the resumed league (``train.ppo``'s rule too). ``--init-from ZIP``
starts from an SB3 checkpoint's weights (its network sizes are taken over).

What a run is apart from RLlib (its flags, the resume merge and rules, the league's set-up,
the run folder and its metadata, the CSV logs and their cut-back, the evaluations' seeds and
rows, ``main``) is ``train.ppo``'s, from :mod:`train.run`. ``train`` runs its steps in
order, one small function each (take_init_from, find_start, run_meta, make_league,
open_run_folder, build_config, restore_or_start, learn, evaluate); the package
:mod:`train.rllib` holds the config, Ray, checkpoints and logs, one module each.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from agents.spec import parse_mixture
from train import run
from train.rllib.checkpoints import (
    CHECKPOINT_PREFIX,
    STATE_NAME,
    find_checkpoint,
    load_snapshot,
    rewind,
    run_state,
    save_checkpoint,
    save_snapshot,
    sb3_start_weights,
)
from train.rllib.config import Args, build_config, net_config, run_rules
from train.rllib.ray_setup import init_ray, learner_net_state, on_runners, push_league, set_learner_weights
from train.rllib.run_log import RunLogger, episode_items
from train.run import ResumeError, Start, make_league, resolved

#: Arguments a resumed run does not take over from its args.json (the shared ones; this
#: trainer adds none).
NOT_RESUMED = run.NOT_RESUMED


def parse_args(argv: list[str] | None = None, defaults: dict | None = None) -> Args:
    """This trainer's flags (:func:`train.run.parse_args` of :class:`Args`)."""
    return run.parse_args(argv, defaults, Args, __doc__)


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


# ---------------------------------------------------------------------- the start
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


def find_start(args: Args, start_weights: dict | None = None) -> Start:
    """The run folder (:func:`train.run.run_folder`: resumed, the checkpoint's run's), the
    ``--resume`` checkpoint with what was saved with it (``hgin_state.json``: step,
    iteration, league, each runner's deal stream), and ``start_weights`` (``--init-from``'s)."""
    if not args.resume:
        return Start(run.run_folder(args, "rllib").resolve(), weights=start_weights)
    checkpoint = find_checkpoint(args.resume)
    state = json.loads((checkpoint / STATE_NAME).read_text())
    league = None
    if state.get("league"):
        from train.league import League

        league = League.from_dict(state["league"])
    return Start(run.run_folder(args, "rllib", checkpoint).resolve(), checkpoint, int(state["steps"]), state,
                 league, start_weights)


def run_meta(args: Args, rules: Any, run_dir: Path) -> dict:
    """The metadata every checkpoint of the run carries (``hgin_meta.json``,
    :func:`train.run.run_meta`), with RLlib's checkpoint format and module name."""
    from agents.rllib_agent import FORMAT

    return run.run_meta(args, rules, run_dir, {"format": FORMAT, "module": "default_policy"})


def first_opponents(args: Args, league: Any) -> tuple[list[str], list[float]]:
    """The opponents the runners are built with: the mixture, or the league's fixed members
    (its snapshots arrive with the first push, :class:`LeaguePlay`)."""
    specs, weights = (league.specs, list(league.weights())) if league else parse_mixture(args.opponents)
    first = [(s, w) for s, w in zip(specs, weights, strict=True) if not s.startswith("snapshot:")]
    return [s for s, _ in first], [w for _, w in first]


def restore_or_start(algo: Any, start: Start) -> None:
    """``--resume``: the checkpoint's weights and optimizer, on every runner too, each
    runner dealing on from its saved stream; ``--init-from``: the SB3 weights; else the
    module's initial weights as built."""
    if start.checkpoint is not None:
        algo.restore_from_path(str(start.checkpoint.resolve()))  # weights and optimizer
        algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
        generators = start.saved.get("generators", {})
        on_runners(algo, lambda i, env: env.continue_from(generators[str(i)]) if str(i) in generators else None)
        print(f"resumed {start.checkpoint} at step {start.step}", flush=True)
    elif start.weights is not None:
        set_learner_weights(algo, start.weights)


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
    steps, iteration = start.step, int(start.saved.get("iteration", 0))
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
    start = find_start(args, start_weights)
    meta = run_meta(args, rules, start.run_dir)
    league = make_league(args, start)
    specs, weights = first_opponents(args, league)

    run.open_run_folder(args, start, rewind)
    init_ray(args)
    algo = build_config(args, rules, specs, weights).build_algo()
    try:
        restore_or_start(algo, start)
        steps, iteration = learn(algo, args, rules, start, meta, league)
        final = save_checkpoint(algo, start.run_dir / "checkpoint", meta, run_state(algo, steps, iteration, league))
    finally:
        algo.stop()
        ray.shutdown()
    if args.eval_matches:
        evaluate(final, args, steps, start.run_dir)
    return final


def saved_args(resume: str) -> dict:
    """The arguments the resumed run was started with: its ``args.json`` (none for a
    checkpoint copied out of its run folder)."""
    run_dir = run.run_folder_of(find_checkpoint(resume))
    return json.loads((run_dir / "args.json").read_text()) if run_dir is not None else {}


def main(argv: list[str] | None = None) -> int:
    """``python -m train.rllib.ppo``: :func:`train.run.main` with this trainer."""
    from agents.ppo import CheckpointError

    trainer = run.Trainer(Args, __doc__, NOT_RESUMED, saved_args, train, (CheckpointError, ResumeError),
                          saved="saved {0}  (play it: hgin play --opponent rllib:{0})".format)
    return run.main(trainer, argv)


if __name__ == "__main__":
    sys.exit(main())
