"""The PPO update's speed in two source trees, side by side: the default recipe's update
(``train.ppo``'s network and minibatches) timed in each tree on the same rollout, from the
same weights, and the updated weights compared bit for bit.

    git archive b19731e | tar -x -C /tmp/base      # a tree before the change
    python -m eval.update_speed --before /tmp/base --after .

Each measurement is its own process (``PYTHONPATH`` = its tree, one torch thread), because
what is measured includes process-wide state (the heap's settings,
:mod:`agents.nets.heap`); the trees alternate, round after round, and each reports the CPU
time of its best and median update (thread CPU time, so that other jobs on a busy machine
count less than in wall time), its page faults per update, and its updated weights. The
rollout is the same in both (same seed and, as long as the network computes the same
function, the same actions): one update of 4,096 decisions, 4 epochs of 1,024.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def worker(updates: int, out: Path | str) -> None:
    """In the tree on ``PYTHONPATH``: build the default recipe's model, collect one rollout
    (one ``learn`` of 4,096 steps), then time ``updates`` updates, each from the same
    weights and optimizer state on that rollout. Writes the timings (JSON) and the last
    update's weights next to ``out``."""
    import copy
    import resource
    import time

    import numpy as np
    import torch

    from agents.spec import parse_mixture
    from hgin_env.rules import get_rules
    from train import ppo, run

    out = Path(out)
    run.configure_torch(1)
    args = run.resolved(ppo.Args(eval_every=0, checkpoint_every=0, progress_bar=False))
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=out.parent))
    model.learn(total_timesteps=args.n_steps * args.n_envs)  # the rollout (and one update)
    policy = model.policy
    weights, optimizer = copy.deepcopy(policy.state_dict()), copy.deepcopy(policy.optimizer.state_dict())
    cpu, faults = [], []
    for _ in range(updates):
        policy.load_state_dict(weights)
        policy.optimizer.load_state_dict(optimizer)
        np.random.seed(0)  # the minibatches' order
        torch.manual_seed(0)
        before, began = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.thread_time()
        model.train()
        cpu.append(time.thread_time() - began)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    torch.save(policy.state_dict(), out.with_suffix(".pt"))
    out.write_text(json.dumps({"cpu": cpu, "faults": faults}))
    envs.close()


def measure(tree: Path, updates: int, out: Path) -> dict:
    """Run :func:`worker` in ``tree`` (its own process); its timings."""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    # The worker is this file's function, run inside the measured tree: ``-c`` puts the
    # tree (the working directory), not this file's folder, first on the path.
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r})['worker']({updates}, {str(out)!r})"
    cmd = [sys.executable, "-c", code]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} in {tree} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(out.read_text())


def compare_weights(before: Path, after: Path) -> str:
    """'bit-identical', or the largest absolute difference and the tensors that differ."""
    import torch

    a, b = torch.load(before, weights_only=True), torch.load(after, weights_only=True)
    if a.keys() != b.keys():
        return f"different parameters: {sorted(a.keys() ^ b.keys())}"
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    if not differ:
        return "bit-identical"
    worst = max(float((a[k] - b[k]).abs().max()) for k in differ)
    return f"{len(differ)} tensors differ (max abs diff {worst:.3g}): {', '.join(differ[:4])}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree before the change")
    parser.add_argument("--after", type=Path, default=Path("."), help="source tree after it (default: .)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per tree, alternating")
    parser.add_argument("--updates", type=int, default=8, help="updates timed per process")
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    faults: dict[str, list[int]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                result = measure(trees[name], args.updates, Path(tmp) / f"{name}.json")
                cpu[name] += result["cpu"]
                faults[name] += result["faults"]
                print(f"round {round_ + 1} {name}: best {min(result['cpu']):.3f} s", flush=True)
        weights = compare_weights(Path(tmp) / "before.pt", Path(tmp) / "after.pt")
    print(f"\nCPU seconds per update (4,096 decisions, 4 epochs of 1,024; "
          f"{args.rounds} processes x {args.updates} updates per tree):")
    print("| tree | best | median | page faults per update (median) |")
    print("|---|---|---|---|")
    for name in trees:
        times, flts = sorted(cpu[name]), sorted(faults[name])
        print(f"| {name} ({trees[name]}) | {times[0]:.3f} | {times[len(times) // 2]:.3f} | {flts[len(flts) // 2]} |")
    best = min(cpu["before"]) / min(cpu["after"])
    median = sorted(cpu["before"])[len(cpu["before"]) // 2] / sorted(cpu["after"])[len(cpu["after"]) // 2]
    print(f"\nafter is {best:.2f}x as fast (best), {median:.2f}x (median); updated weights: {weights}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
