"""The lean update step against the step before it, in one process, alternating (issue 53):
this code's split learner with ``train.split_update.LEAN_STEP`` on (the flat gradient's norm
clipped at once, Adam's step fused) and off (torch's ``clip_grad_norm_`` and SB3's Adam
step weight by weight: the bits of 6508919), each a fresh model of the default recipe,
timed over ``learn``. Run from the repository root:

    python docs/runs/step53/lean_ab.py 131072 4
"""

import os
import sys
import time
from pathlib import Path

import torch as th

sys.path.insert(0, os.getcwd())
from agents.spec import parse_mixture  # noqa: E402
from hgin_env.rules import get_rules  # noqa: E402
from train import ppo, run, split_update  # noqa: E402


def steps_per_second(lean: bool, steps: int) -> float:
    split_update.LEAN_STEP = lean
    args = run.resolved(ppo.Args(total_timesteps=steps, eval_every=0, checkpoint_every=0, progress_bar=False))
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=Path("/tmp/lean_ab")))
    envs.set_live_model(model)
    began = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - began)


def main() -> None:
    th.set_num_threads(1)  # as train.ppo runs the split learner on 2 cores
    th.distributions.Distribution.set_default_validate_args(False)
    steps, rounds = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for _ in range(rounds):
        lean, plain = steps_per_second(True, steps), steps_per_second(False, steps)
        print(f"lean step {lean:,.0f}  step before {plain:,.0f}  ratio {lean / plain:.3f}", flush=True)


if __name__ == "__main__":
    main()
