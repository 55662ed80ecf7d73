"""Do two source trees train the same network? A short SB3 run (``train.ppo``) and a short
RLlib run (``train.rllib.ppo``, ``train.rllib_ppo`` in trees before the package) in each
tree, same flags and seed, then every weight compared bit for bit.

    python -m eval.trainer_parity --before /tmp/base --after .

``--after-args`` adds flags to the after tree's runs only: a flag the before tree does not
have that selects its unchanged recipe (``--after-args="--pipeline off --update-processes 1"``
for ``train.ppo``'s synchronous loop in one process: SB3's own update and rollouts).

A refactor of the trainers that changes nothing they compute leaves every tensor equal
(same dtype, shape and bytes); the report names any that differ. Each run is its own
process (``cwd`` and ``PYTHONPATH`` = its tree), one at a time, with one torch thread.
Both runs use the league with self-play snapshots and a mid-run checkpoint, so the league,
the checkpoint and the run-folder paths are exercised, not only PPO's update.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

#: The same short run for both trees (small network, few steps: about a minute each on 2 cores).
NET = ["--hidden", "32", "--summary", "16", "--card-hidden", "8", "--seed", "3"]
LEAGUE = ["--league", "--opponents", "simple,expert,self"]
SB3 = ["--total-timesteps", "3072", "--n-envs", "16", "--n-steps", "64", "--batch-size", "256",
       "--n-epochs", "2", "--eval-every", "0", "--checkpoint-every", "2048", "--self-play-every", "1024",
       "--no-progress-bar", *LEAGUE, *NET]
RLLIB = ["--total-timesteps", "640", "--n-envs", "8", "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1",
         "--max-hands", "1", "--num-cpus", "1", "--checkpoint-every", "256", "--self-play-every", "256",
         *LEAGUE, *NET]


def rllib_module_name(tree: Path) -> str:
    """The RLlib trainer's module in ``tree``: the package's, or the single file's before it."""
    return "train.rllib.ppo" if (tree / "train" / "rllib" / "ppo.py").is_file() else "train.rllib_ppo"


def run_in_tree(tree: Path, args: list[str]) -> None:
    """Run ``python ARGS`` with ``tree``'s code (its own process: ``cwd`` and ``PYTHONPATH``
    = the tree, one torch thread); a failure exits with the command's output."""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    cmd = [sys.executable, *args]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} in {tree} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def train(tree: Path, module: str, flags: list[str], out: Path) -> Path:
    """Run ``python -m module flags`` in ``tree`` into ``out/run``; returns the run folder."""
    run_in_tree(tree, ["-m", module, *flags, "--out-dir", str(out), "--run-name", "run"])
    return out / "run"


def sb3_weights(run_dir: Path) -> dict[str, np.ndarray]:
    """The final policy's state dict (``policy.pth`` inside ``model.zip``)."""
    import io

    import torch

    with zipfile.ZipFile(run_dir / "model.zip") as z:
        state = torch.load(io.BytesIO(z.read("policy.pth")), map_location="cpu", weights_only=True)
    return {k: v.numpy() for k, v in state.items()}


def rllib_weights(run_dir: Path) -> dict[str, np.ndarray]:
    """The final checkpoint's module state (numpy arrays, as RLlib pickles them)."""
    path = run_dir / "checkpoint" / "learner_group" / "learner" / "rl_module" / "default_policy" / "module_state.pkl"
    with path.open("rb") as f:
        return {k: np.asarray(v) for k, v in pickle.load(f).items()}


def differences(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[str]:
    """What is not bit-identical between two state dicts (names, dtypes, shapes, bytes)."""
    out = [f"only in one: {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            out.append(f"{key}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the source tree before the change")
    parser.add_argument("--after", default=".", help="the source tree after it (default: here)")
    parser.add_argument("--only", choices=("sb3", "rllib"), help="one trainer only")
    parser.add_argument("--after-args", default="", help="flags added to the after tree's runs "
                        "(space-separated, e.g. '--pipeline off')")
    args = parser.parse_args(argv)
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    trainers = {"sb3": (lambda tree: "train.ppo", SB3, sb3_weights),
                "rllib": (rllib_module_name, RLLIB, rllib_weights)}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, (module_of, flags, weights_of) in trainers.items():
            if args.only and name != args.only:
                continue
            weights = {}
            for label, tree in trees.items():
                extra = args.after_args.split() if label == "after" else []
                run_dir = train(tree, module_of(tree), flags + extra, Path(tmp) / name / label)
                weights[label] = weights_of(run_dir)
            diff = differences(weights["before"], weights["after"])
            total = sum(v.size for v in weights["after"].values())
            verdict = "bit-identical" if not diff else f"DIFFERENT ({len(diff)} tensors)"
            print(f"{name}: {len(weights['after'])} tensors, {total} weights: {verdict}", flush=True)
            for line in diff:
                print(f"  {line}")
            failed |= bool(diff)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
