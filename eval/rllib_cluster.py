"""A local multi-node Ray cluster (``ray.cluster_utils.Cluster``) running ``train.rllib.ppo``'s
config: env runners spread over the nodes, and the run going on after a worker node is
killed mid-run (RLlib's ``restart_failed_env_runners``).

    python -m eval.rllib_cluster --out docs/runs/rllib_cluster

The cluster: a head and ``--workers`` worker nodes of one CPU each (the driver, with the
Learner in it, reserves none). ``--runners`` env runners of one CPU each therefore land on
different nodes. After ``--kill-after`` iterations the worker node of a runner is removed
(its raylet and its actors die, as when a machine is lost); RLlib marks the runner
unhealthy, samples from the others, and restarts it on a node with a free CPU. Each
iteration logs which node every runner is on, how many are healthy and the steps sampled.
Then ``train.rllib.ppo`` runs as its own process on the same cluster through ``RAY_ADDRESS``,
as a driver on a real cluster does. Writes ``log.txt`` and ``README.md`` in ``--out``.
``--pipelined`` runs the same with :mod:`train.rllib.pipeline`'s overlapped sampling.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The CLI check's run: two env runners, 2 x 1,024 steps.
CLI = ["--run-name", "cli", "--num-env-runners", "2", "--n-envs", "32", "--n-steps", "32", "--batch-size", "512",
       "--n-epochs", "1", "--total-timesteps", "2048", "--checkpoint-every", "0", "--opponents", "simple,expert"]


#: What a pipelined run (``--pipelined``) does differently when a node is lost.
PIPELINED_NOTE = (
    "\nThis run is `--pipelined` (`train/rllib/pipeline.py`): each runner samples the next batch "
    "while the learner updates. When the node goes, the batch its runner had in flight goes with it, "
    "and no more is lost. While that runner is away, each iteration learns the other runner's 512-step "
    "share (`+512`; a synchronous run has the runner left sample the whole batch instead). The batch is "
    "whole again (`+1024`) once the restarted runner is back.\n")


def write_report(out: Path, flags: str, lines: list[str], load: float, pipelined: bool = False) -> None:
    """``README.md``: the command, the log and what to read in it."""
    (out / "README.md").write_text(
        "# RLlib on a local multi-node cluster, a worker node killed mid-run\n\n"
        f"`python -m eval.rllib_cluster {flags}`, on a {os.cpu_count()}-core machine (load average {load:.1f} "
        "before the run). "
        "`ray.cluster_utils.Cluster` runs every node as a raylet on this machine, 1 CPU each. The "
        "config is `train.rllib.ppo`'s, with 32 matches x 32 steps per iteration. The log:\n\n"
        "```\n" + "\n".join(lines) + "\n```\n\n"
        "What to read in it:\n\n"
        "- The two env runners, 1 CPU each, sit on two different nodes.\n"
        "- Removing a worker node kills its raylet and the runner on it, as losing a machine would. "
        "RLlib takes that runner out of service (`restart_failed_env_runners=True`). The iterations go "
        + ("on with the runner left (below).\n" if pipelined else
           "on at full batch size, sampled by the runner left, which steps more often.\n")
        + "- Ray restarts the lost actor on the node with a free CPU. Once it is healthy again, RLlib "
        "gives it the current weights and both runners sample again.\n"
        "- Last, `train.rllib.ppo` runs as a separate driver process, pointed at the cluster by "
        "`RAY_ADDRESS` alone, as on a real cluster.\n\n"
        "A restarted runner keeps its worker index, so it deals its seed's matches from the start "
        "again, and it has the runner's initial opponents until the driver's next league push "
        "(`train.rllib.ppo` pushes every iteration, and sends the snapshots it lacks).\n"
        + (PIPELINED_NOTE if pipelined else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="worker nodes besides the head (1 CPU each)")
    parser.add_argument("--runners", type=int, default=2, help="env runners (1 CPU each)")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--kill-after", type=int, default=3, help="remove a runner's worker node after this iteration")
    parser.add_argument("--out", default="docs/runs/rllib_cluster")
    parser.add_argument("--pipelined", action="store_true",
                        help="train.rllib.ppo --pipelined: runners sample during the update")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]

    import ray
    from ray.cluster_utils import Cluster
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    from train.rllib.config import Args, build_config, run_rules
    from train.run import resolved

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    nodes = {cluster.head_node.node_id: "head"}
    workers = []
    for i in range(args.workers):
        node = cluster.add_node(num_cpus=1)
        nodes[node.node_id] = f"worker{i + 1}"
        workers.append(node)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address)
    log(f"cluster: {len(nodes)} nodes ({', '.join(nodes.values())}), "
        f"{int(ray.cluster_resources().get('CPU', 0))} CPUs")
    # Small batches (32 matches x 32 steps) so that an iteration is a few seconds.
    run_args = resolved(Args(num_env_runners=args.runners, n_envs=32, n_steps=32, batch_size=512, n_epochs=1,
                             opponents="simple,expert", sample_timeout_s=120.0, restart_failed_env_runners=True,
                             pipelined=args.pipelined))
    config = build_config(run_args, run_rules(run_args), ["simple", "expert"], [0.5, 0.5])
    algo = config.build_algo()
    by_id = {n.node_id: n for n in workers}
    began = time.perf_counter()
    steps = 0
    try:
        for it in range(1, args.iterations + 1):
            result = algo.train()
            added = int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0))
            steps += added
            group = algo.env_runner_group
            where = group.foreach_env_runner(
                lambda r: (r.worker_index, ray.get_runtime_context().get_node_id()), local_env_runner=False)
            placed = ", ".join(f"runner {i} on {nodes.get(n, n[:8])}" for i, n in sorted(where))
            log(f"iter {it}: steps {steps:6d} (+{added}), healthy runners {group.num_healthy_remote_workers()}/"
                f"{group.num_remote_workers()}, {placed}  ({time.perf_counter() - began:.0f} s)")
            if it == args.kill_after:
                # The first runner on a worker node (the head holds the driver: not removed).
                victim = next(((i, n) for i, n in sorted(where) if n in by_id), None)
                if victim is not None:
                    cluster.remove_node(by_id.pop(victim[1]))
                    log(f"-- removed node {nodes[victim[1]]} (runner {victim[0]}'s) --")
                else:
                    log("-- no runner on a worker node: nothing removed --")
        algo.stop()
        ray.shutdown()
        # The command a real cluster takes: train.rllib.ppo in its own process, pointed at
        # the cluster by RAY_ADDRESS (what `ray start` / `ray up` / KubeRay give a driver).
        log(f"-- RAY_ADDRESS={cluster.address} python -m train.rllib.ppo {' '.join(CLI)} --")
        root = Path(__file__).resolve().parent.parent
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, "-m", "train.rllib.ppo", *CLI, "--out-dir", tmp],
                                  cwd=root, capture_output=True, text=True, timeout=300,
                                  env=dict(os.environ, RAY_ADDRESS=cluster.address, PYTHONPATH=str(root)))
        for line in proc.stdout.splitlines():
            if line.startswith(("iter", "saved")):
                log("   " + line.replace(tmp, "<out>"))
        log(f"   exit code {proc.returncode}")
    finally:
        if ray.is_initialized():
            algo.stop()
            ray.shutdown()
        cluster.shutdown()
    (out / "log.txt").write_text("\n".join(lines) + "\n")
    write_report(out, f"--workers {args.workers} --runners {args.runners} --iterations {args.iterations} "
                      f"--kill-after {args.kill_after}" + (" --pipelined" if args.pipelined else ""), lines, load,
                 args.pipelined)
    return 0


if __name__ == "__main__":
    sys.exit(main())
