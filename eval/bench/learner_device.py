"""Training steps/s on the machine at hand, CPU against GPU and one rollout worker against
several: the figures issue 53 asks of a lent GPU machine (an H200 with 16 cores here).

    python -m eval.bench.learner_device --workers 1 4 8 16 --out runs/device   # about 6 minutes on an H200
    python -m eval.bench.learner_device --steps 8192 --cpu-steps 8192 --device cpu --workers 2   # anywhere

On a lent machine, ``eval/bench/on_lent_gpu.sh`` runs it after installing what that
machine's image lacks (docs/learning.md, "The GPU where there is one").

Each configuration is one ``python -m train.ppo`` process against Simple (the default
recipe's opponents are Simple and the Expert; Simple alone is what the training group of
``eval.bench`` times), no evaluations or checkpoints, in a folder of its own; its steps/s is
SB3's ``time/fps`` of the last iteration (the learning loop alone: the start-up, spawning
workers and compiling kernels, is reported beside it as the process's wall time). The
configurations, in this order:

- ``cpu``: the default recipe as ``python -m train.ppo`` runs it on this machine's CPU (the
  synchronous loop, ``--device cpu``): the anchor the others are divided by;
- ``<device> sync``: the same on ``--device`` (the learner and the rollout's forward on the GPU);
- ``<device> workers=K``: ``--pipeline on --rollout-workers K`` (the learner on the GPU, K
  worker processes sampling on the CPU cores, each 128 / K of the matches);
- ``wide``: the same three with a 4x wider network (trunks 512, summary 256, card scorer
  128: ``--hidden 512 --summary 256 --card-hidden 128``), CPU then device.

``--device cpu`` leaves out the device rows (a machine without a GPU: the workers' rows
still run, on the CPU). The report names the machine (CPU count, ``torch.cuda``'s device).
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
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A run of a few seconds (8 matches, 16 steps each).
TOY = ("--device", "cpu", "--n-envs", "8", "--n-steps", "16", "--batch-size", "64")
#: The 4x wider network of the issue's figure (the default: 128, 64, 32).
WIDE = ("--hidden", "512", "--summary", "256", "--card-hidden", "128")


def machine() -> dict:
    """What the figures were measured on."""
    import platform

    import torch

    from train.run import available_cores

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"cpu_cores": available_cores(), "processor": platform.processor() or platform.machine(),
            "gpu": gpu, "torch": torch.__version__}


def configurations(device: str, workers: Sequence[int]) -> list[tuple[str, list[str]]]:
    """(label, train.ppo flags) of each row, in the order they run (module docstring)."""
    rows = [("cpu", ["--device", "cpu"])]
    if device != "cpu":
        rows.append((f"{device} sync", ["--device", device]))
    rows += [(f"{device} workers={k}", ["--device", device, "--pipeline", "on", "--rollout-workers", str(k)])
             for k in workers]
    best = max(workers) if workers else None
    rows.append(("wide cpu", ["--device", "cpu", *WIDE]))
    if device != "cpu":
        rows.append((f"wide {device} sync", ["--device", device, *WIDE]))
    if best is not None:
        rows.append((f"wide {device} workers={best}",
                     ["--device", device, "--pipeline", "on", "--rollout-workers", str(best), *WIDE]))
    return rows


def run_one(flags: Sequence[str], steps: int, seed: int, folder: Path, timeout: float) -> dict:
    """One ``train.ppo`` process; its last iteration's steps/s and its wall time."""
    command = [sys.executable, "-m", "train.ppo", "--run-name", "run", "--out-dir", str(folder),
               "--total-timesteps", str(steps), "--opponents", "simple", "--eval-every", "0",
               "--checkpoint-every", "0", "--no-progress-bar", "--seed", str(seed), *flags]
    # The processes import this checkout's code, wherever the command was started.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    wall = time.perf_counter() - began
    if done.returncode:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:], "wall_s": wall}
    with open(folder / "run" / "progress.csv", newline="") as f:
        last = list(csv.DictReader(f))[-1]
    return {"steps_per_s": float(last["time/fps"]), "steps": int(last["time/total_timesteps"]), "wall_s": wall}


def report(rows: list[dict], where: dict) -> str:
    """The rows as a markdown table, each divided by the ``cpu`` row."""
    anchor = next((r["steps_per_s"] for r in rows if r["label"] == "cpu" and "steps_per_s" in r), None)
    out = [f"machine: {where['cpu_cores']} CPU cores ({where['processor']}), GPU: {where['gpu'] or 'none'}, "
           f"torch {where['torch']}", "",
           "| configuration | steps/s (learning loop) | against cpu | process wall s |", "|---|---:|---:|---:|"]
    for r in rows:
        if "steps_per_s" not in r:
            out.append(f"| {r['label']} | failed: {' '.join(r['error'])} | | {r['wall_s']:.0f} |")
            continue
        ratio = f"{r['steps_per_s'] / anchor:.2f}x" if anchor else ""
        out.append(f"| {r['label']} | {r['steps_per_s']:,.0f} | {ratio} | {r['wall_s']:.0f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=524_288, help="environment steps per device configuration")
    parser.add_argument("--cpu-steps", type=int, default=131_072,
                        help="environment steps of the rows whose learner is on the CPU (slower: fewer)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="the learner's device to measure")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 4, 8, 16],
                        help="rollout worker counts (each divides the 128 matches)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600, help="seconds allowed per configuration")
    parser.add_argument("--out", default="", help="folder for learner_device.json and .md (default: print only)")
    args = parser.parse_args(argv)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error("--device cuda: torch sees no GPU here (--device cpu measures the CPU rows alone)")
    where = machine()
    # A toy run first: on a fresh machine it compiles the kernels into numba's cache, which
    # every process after it (the runs, their rollout workers) then loads in a moment.
    with tempfile.TemporaryDirectory() as tmp:
        warm = run_one(TOY, 256, args.seed, Path(tmp), args.timeout)
    print(f"warm-up (kernels compiled or loaded): {warm['wall_s']:.0f} s", flush=True)
    rows = []
    for label, flags in configurations(args.device, args.workers):
        with tempfile.TemporaryDirectory() as tmp:
            steps = args.cpu_steps if flags[1] == "cpu" else args.steps
            row = {"label": label, "flags": flags, **run_one(flags, steps, args.seed, Path(tmp), args.timeout)}
        rows.append(row)
        print(f"{label}: {row.get('steps_per_s', row.get('error'))}", flush=True)
    table = report(rows, where)
    print(table)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "learner_device.json").write_text(json.dumps({"machine": where, "steps": args.steps,
                                                             "warm_up_s": warm["wall_s"], "rows": rows}, indent=1))
        (out / "learner_device.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
