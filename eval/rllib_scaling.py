"""Env steps/s of ``train.ppo`` (SB3) and ``train.rllib.ppo`` with 0, 1 and 2 env runners
(synchronous, and ``--pipelined`` with 1 and 2),
the same recipe (128 matches x 32 steps per update, 4 epochs of 1,024, the card network,
Simple and the Expert as opponents), one after the other in one invocation so the ratios
are measured under the same load.

    python -m eval.rllib_scaling --steps 100000 --out docs/runs/rllib_scaling

Each trainer runs with one torch thread (``train.ppo``'s default) and with two (the
update on both cores: while RLlib's learner updates, its env runners wait, so the driver
may use both; pipelined, the runners sample during the update, so the learner keeps one
thread). Writes ``README.md`` (the table, the machine's load average before the
runs) and ``results.json`` in ``--out``; ``--step-costs`` instead measures the throughput
model's engine cost per step by batch size (``step_costs.json``); the runs themselves go to a temporary folder.
Each figure is the trainer's own steps/s (sampling and updates, not Ray's start-up) and
the wall time of the whole command; RLlib's rows add its split of an iteration into
sampling and the update (the runners' own figures), and for a pipelined run the time the
driver waited for the batch (what sampling did not hide behind the update).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _last(path: Path, column: str) -> float:
    with path.open() as f:
        rows = [r for r in csv.DictReader(f) if r.get(column)]
    return float(rows[-1][column])


def _late_mean(path: Path, column: str) -> float:
    """The column's mean over the run's second half (past start-up and warm-up)."""
    with path.open() as f:
        values = [float(r[column]) for r in csv.DictReader(f) if r.get(column)]
    late = values[len(values) // 2:]
    return sum(late) / len(late)


def run(steps: int, out: Path) -> list[dict]:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    results = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        configs = [(f"train.ppo (SB3), {t} torch thread(s)",
                    ["-m", "train.ppo", "--eval-every", "0", "--checkpoint-every", "0", "--no-progress-bar",
                     "--torch-threads", str(t)], "time/fps") for t in (1, 2)]
        for runners, threads, pipelined in ((0, 1, False), (0, 2, False), (1, 2, False), (2, 2, False),
                                            (1, 1, True), (2, 1, True)):
            configs.append((f"train.rllib.ppo, {runners} env runner(s), {threads} torch thread(s)"
                            + (", pipelined" if pipelined else ""),
                            ["-m", "train.rllib.ppo", "--num-env-runners", str(runners), "--checkpoint-every", "0",
                             "--num-cpus", "2", "--torch-threads", str(threads), *(["--pipelined"] * pipelined)],
                            "perf/env_steps_per_s"))
        for i, (name, argv, column) in enumerate(configs):
            began = time.perf_counter()
            cmd = [sys.executable, *argv, "--run-name", f"r{i}", "--out-dir", tmp, "--total-timesteps", str(steps)]
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - began
            if proc.returncode != 0:
                raise RuntimeError(f"{name} failed: {proc.stderr[-2000:]}")
            progress = Path(tmp) / f"r{i}" / "progress.csv"
            rate = _last(progress, column)
            entry = {"trainer": name, "command": " ".join(["python", *argv, "--total-timesteps", str(steps)]),
                     "steps_per_s": rate, "wall_s": wall}
            if column.startswith("perf/"):  # RLlib's split of an iteration: sampling and the update
                entry["sample_s"] = _late_mean(progress, "perf/sample_s")
                entry["learn_s"] = _late_mean(progress, "perf/learn_s")
                if "--pipelined" in argv:  # sampling overlaps the update: the driver's wait for it
                    entry["wait_s"] = _late_mean(progress, "perf/wait_s")
            results.append(entry)
            print(f"{name}: {rate:.0f} steps/s, {wall:.0f} s wall", flush=True)
    base = max(r["steps_per_s"] for r in results if r["trainer"].startswith("train.ppo"))
    lines = [f"# RLlib vs SB3 throughput, {steps:,} steps each", "",
             f"Measured {time.strftime('%Y-%m-%d')} on a {os.cpu_count()}-core machine (load average {load:.1f} "
             f"before the runs) by `python -m eval.rllib_scaling --steps {steps}`; ratios are to the faster "
             "`train.ppo` row.", "",
             "| trainer | env steps/s | vs train.ppo | wall (s, with start-up) | sampling s/iter | update s/iter "
             "| wait for the batch s/iter |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        split = (f"{r['sample_s']:.2f} | {r['learn_s']:.2f} | " + (f"{r['wait_s']:.2f}" if "wait_s" in r else "")
                 if "sample_s" in r else "| | ")
        lines.append(f"| {r['trainer']} | {r['steps_per_s']:.0f} | {r['steps_per_s'] / base:.2f} | "
                     f"{r['wall_s']:.0f} | {split} |")
    lines += ["", "Commands (each with `--run-name`, `--out-dir` and `--total-timesteps` added):", ""]
    lines += [f"- `{r['command']}`" for r in results]
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=2))
    return results


def step_costs(out: Path, sizes: tuple[int, ...] = (32, 64, 128, 256, 512), steps: int = 300) -> dict[int, float]:
    """The throughput model's ``c(m)``: median ms per step of ``m`` matches of the RLlib env (the
    engine and Simple/Expert opponents; the learner's moves drawn uniformly, outside the
    timing), written to ``step_costs.json``."""
    import numpy as np

    from hgin_env.rules import get_rules
    from train.rllib.env import RLlibBatchedEnv

    rng = np.random.default_rng(0)
    costs: dict[int, float] = {}
    for m in sizes:
        env = RLlibBatchedEnv({"num_envs": m, "rules": get_rules("hollywood").to_dict(), "seed": 0,
                               "opponents": ["simple", "expert"], "weights": [0.5, 0.5], "reward": "points",
                               "match_bonus": 1.0})
        obs, _ = env.reset()
        times = []
        for i in range(steps + 20):
            masks = obs["action_mask"] > 0
            actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
            began = time.perf_counter()
            obs, *_ = env.step_batch(actions)
            if i >= 20:  # past the first deals
                times.append(time.perf_counter() - began)
        costs[m] = 1000 * float(np.median(times))  # the median: this machine's hiccups aside
        print(f"{m:4d} matches: {costs[m]:.1f} ms per step (median)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "step_costs.json").write_text(json.dumps({"ms_per_step": costs, "steps": steps,
                                                     "load_average": os.getloadavg()[0]}, indent=2))
    return costs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--out", default="docs/runs/rllib_scaling")
    parser.add_argument("--step-costs", action="store_true",
                        help="only measure the engine's ms per step by batch size (step_costs.json)")
    args = parser.parse_args(argv)
    if args.step_costs:
        step_costs(Path(args.out))
        return 0
    run(args.steps, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
