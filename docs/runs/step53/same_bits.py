"""With the lean step off, this code trains as the code before it (6508919) to the bit: a
65,536-step run of the default recipe (seed 3) in another checkout and here with
``train.split_update.LEAN_STEP = False``, their weights compared (and, for scale, with the
lean step on). Run from the repository root with the other checkout's path:

    python docs/runs/step53/same_bits.py /work/base650
"""

import os
import subprocess
import sys
from pathlib import Path

import torch as th

sys.path.insert(0, os.getcwd())
from sb3_contrib import MaskablePPO  # noqa: E402

OUT = Path("/tmp/step53_bits")
FLAGS = ["--total-timesteps", "65536", "--eval-every", "0", "--checkpoint-every", "0", "--no-progress-bar",
         "--out-dir", str(OUT), "--seed", "3"]
RUN_HERE = ("import sys; import train.split_update as split; split.LEAN_STEP = {lean}; "
            "sys.argv = ['train.ppo', *{flags!r}, '--run-name', {name!r}]; from train import ppo; ppo.main()")


def train(tree: str, name: str, lean: bool | None = None) -> dict[str, th.Tensor]:
    if lean is None:  # the other checkout's own train.ppo
        command = [sys.executable, "-m", "train.ppo", *FLAGS, "--run-name", name]
    else:
        command = [sys.executable, "-c", RUN_HERE.format(lean=lean, flags=FLAGS, name=name)]
    subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": "."}, check=True, capture_output=True)
    return MaskablePPO.load(OUT / name / "model.zip").policy.state_dict()


def main() -> None:
    before = train(sys.argv[1], "before")
    for name, lean in (("lean_off", False), ("lean_on", True)):
        weights = train(os.getcwd(), name, lean)
        same = all(th.equal(weights[k], before[k]) for k in before)
        largest = max(float((weights[k] - before[k]).abs().max()) for k in before)
        print(f"LEAN_STEP = {lean}: the same weights as {sys.argv[1]}'s: {same} (largest difference {largest:.3g})")


if __name__ == "__main__":
    main()
