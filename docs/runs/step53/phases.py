"""Where an iteration of the default recipe goes, with the lean step and with the step
before it (``train.split_update.LEAN_STEP`` off), alternating in one process: milliseconds
per rollout-and-update of the learner process, each phase timed by wrapping its function
(the wrappers' own cost is microseconds). Run from the repository root:

    python docs/runs/step53/phases.py 131072 2
"""

import collections
import os
import sys
import time
from pathlib import Path

import torch as th

sys.path.insert(0, os.getcwd())
from agents.spec import parse_mixture  # noqa: E402
from hgin_env.rules import get_rules  # noqa: E402
from train import ppo, run, split_rollout, split_update  # noqa: E402

TIMES: dict[str, float] = collections.defaultdict(float)
PHASES = {  # label: (owner, function name)
    "rollout (both parts, joined, replayed, filled)": (split_update.SplitUpdatePPO, "collect_rollouts"),
    "  part 0, sampled here": (split_rollout.RolloutPart, "collect"),
    "update": (split_update.SplitUpdatePPO, "train"),
    "  minibatch gradients (this half, then the helper's)": (split_update.SplitUpdatePPO, "_minibatch_gradient"),
    "    waiting for the helper's half": (split_update.UpdateHelper, "finish_half"),
    "  clip": (split_update, "clip_norm"),
}


def timed(owner, name: str, label: str) -> None:
    function = getattr(owner, name)

    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            TIMES[label] += time.perf_counter() - began

    setattr(owner, name, wrapper)


def one_run(lean: bool, steps: int) -> dict[str, float]:
    split_update.LEAN_STEP = lean
    TIMES.clear()
    args = run.resolved(ppo.Args(total_timesteps=steps, eval_every=0, checkpoint_every=0, progress_bar=False))
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=Path("/tmp/step53_phases")))
    envs.set_live_model(model)
    timed(model.policy.optimizer, "step", "  Adam's steps")
    began = time.perf_counter()
    model.learn(total_timesteps=steps)
    iterations = steps // (args.n_steps * args.n_envs)
    return {"steps/s": steps / (time.perf_counter() - began),
            **{label: 1e3 * TIMES[label] / iterations for label in [*PHASES, "  Adam's steps"]}}


def main() -> None:
    th.set_num_threads(1)  # as train.ppo runs the split learner on 2 cores
    th.distributions.Distribution.set_default_validate_args(False)
    for label, (owner, name) in PHASES.items():
        timed(owner, name, label)
    steps, rounds = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2
    results = {"lean step": [], "step before": []}
    for _ in range(rounds):
        results["lean step"].append(one_run(True, steps))
        results["step before"].append(one_run(False, steps))
    labels = list(results["lean step"][0])
    print(f"{'ms per iteration (mean of ' + str(rounds) + ' runs)':58s}" + "".join(f"{k:>14s}" for k in results))
    for label in labels:
        cells = [sum(r[label] for r in runs) / len(runs) for runs in results.values()]
        print(f"{label:58s}" + "".join(f"{c:14,.1f}" for c in cells))


if __name__ == "__main__":
    main()
