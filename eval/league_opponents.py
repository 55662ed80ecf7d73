"""The league's policy opponents, one forward each against one stacked forward
(:mod:`agents.policy_stack`), side by side in one process.

    python -m eval.league_opponents --snapshots 8 --steps 200 --rounds 3

A league-like batch (``train.ppo``'s 128 matches; opponents: ``--snapshots`` frozen
policies of the default recipe's network, sampling, as the league's snapshots, and Simple
and the Expert) is stepped ``--steps`` times with a learner that plays Simple's moves, once
with the snapshots asked one by one (``BatchedPolicy.act_together`` off) and once together,
alternating for ``--rounds`` rounds from the same seed. Printed: the CPU time per step of
each (thread CPU time: other jobs on a shared machine count less than in wall time), the
best and the median of the rounds, and whether both paths played the same moves (their
observations equal at every step).
"""

from __future__ import annotations

import argparse
import statistics
import time


def snapshots(k: int, seed: int = 0) -> list:
    """``k`` MaskablePPO models of the default recipe's card network with different random
    weights (a league's snapshots share the architecture and differ in their weights)."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from train.envs import BatchedVecEnv
    from train.ppo import Args

    args = Args()
    env = BatchedVecEnv(8, ["random"])
    kwargs = {"columns": 3, "hidden": args.hidden, "summary": args.summary, "card_hidden": args.card_hidden}
    models = []
    for i in range(k):
        torch.manual_seed(seed + i)
        models.append(MaskablePPO(CardAwarePolicy, env, policy_kwargs=kwargs, n_steps=8, batch_size=8, device="cpu",
                                  seed=seed + i))
    return models


def play(models: list, steps: int, stacked: bool, seed: int = 0) -> tuple[float, list]:
    """Thread CPU seconds per step of a league-like batch, and its observations."""
    from agents.batched import BatchedExpert, BatchedPolicy, BatchedSimple
    from hgin_env.batch.vector import LearnerBatch

    saved = BatchedPolicy.__dict__["act_together"]
    if not stacked:
        BatchedPolicy.act_together = None
    try:
        opponents = [BatchedPolicy(m, deterministic=False, seed=seed + i) for i, m in enumerate(models)]
        opponents += [BatchedSimple(seed=seed + 100), BatchedExpert(seed=seed + 101)]
        batch = LearnerBatch(128, opponents, None, "hollywood", "points", 1.0, seed)
        learner = BatchedSimple(seed=seed + 200)
        seen = []
        began = time.thread_time()
        for _ in range(steps):
            obs, masks = batch.observations(), batch.action_masks()
            seen.append(obs.copy())
            batch.step(learner.act(obs, masks))
        return (time.thread_time() - began) / steps, seen
    finally:
        BatchedPolicy.act_together = saved


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshots", type=int, default=8, help="policy opponents (the league's pool: 8)")
    parser.add_argument("--steps", type=int, default=200, help="learner steps per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of both paths")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    models = snapshots(args.snapshots)
    play(models, 5, True)  # warm: the compiled kernels, the stack
    times: dict[str, list[float]] = {"one forward each": [], "stacked": []}
    same = True
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        runs = {}
        for stacked in order:
            per_step, seen = play(models, args.steps, stacked)
            times["stacked" if stacked else "one forward each"].append(per_step)
            runs[stacked] = seen
        same &= all(np.array_equal(a, b) for a, b in zip(runs[False], runs[True], strict=True))
    for name, values in times.items():
        print(f"{name:>17}: {min(values) * 1e3:7.2f} ms per step best, {statistics.median(values) * 1e3:7.2f} median "
              f"({args.snapshots} snapshots, 128 matches)")
    print(f"stacked / one each (best): {min(times['one forward each']) / min(times['stacked']):.2f}x faster; "
          f"same moves: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
