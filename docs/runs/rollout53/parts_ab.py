"""The rollout in two parts against one, in one process, alternating (issue 53): this code's
split learner with its rollouts sampled in two parts at once (train/split_rollout.py) and
in one part (SB3's collect_rollouts; the update split all the same), each pair a fresh
model on the default recipe's opponents (no self-play snapshots), timed over ``learn``.
Run from the repository root:

    python docs/runs/rollout53/parts_ab.py 131072 hollywood 4
    python docs/runs/rollout53/parts_ab.py 131072 hollywood_three_hand 3
"""

import os
import sys
import time
from pathlib import Path

import torch as th

sys.path.insert(0, os.getcwd())
from agents.spec import parse_mixture  # noqa: E402
from hgin_env.rules import get_rules  # noqa: E402
from train import ppo, run  # noqa: E402


def steps_per_second(parts: int, steps: int, rules_name: str) -> float:
    args = run.resolved(ppo.Args(total_timesteps=steps, eval_every=0, checkpoint_every=0, progress_bar=False,
                                 update_processes=2, rules=rules_name, opponents="simple:0.5,expert:0.5"))
    default = ppo.rollout_parts
    ppo.rollout_parts = lambda _: parts
    try:
        rules = get_rules(args.rules)
        envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    finally:
        ppo.rollout_parts = default
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=Path("/tmp/parts_ab")))
    envs.set_live_model(model)
    began = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - began)


def main() -> None:
    th.set_num_threads(1)  # as train.ppo runs the split learner on 2 cores
    th.distributions.Distribution.set_default_validate_args(False)
    steps, rules_name = int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "hollywood"
    for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 3):
        two, one = steps_per_second(2, steps, rules_name), steps_per_second(1, steps, rules_name)
        print(f"{rules_name} two parts {two:,.0f}  one part {one:,.0f}  ratio {two / one:.3f}", flush=True)


if __name__ == "__main__":
    main()
