"""Side by side: this checkout's step speed against another checkout's (another commit), in
one run. ``python -m eval.bench.commits --other /path/to/checkout``

Each round runs every contender once in each checkout, alternating which goes first, in a
fresh interpreter whose ``hgin_env`` is that checkout's (``PYTHONPATH``), so both see the
same machine load; the report gives each side's median decisions/s and their ratio. The
timed code uses only public paths both commits have (``hgin_env.batch.BatchGame``,
``hgin_env.hollywood_gin_v0``), so it measures the engines, not this file.

    git worktree add /tmp/base <commit>     # the commit to compare with
    python -m eval.bench.commits --other /tmp/base --rounds 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

#: Each contender: a snippet that prints {"seconds", "decisions"} as JSON. Random legal play
#: that builds what a learner reads every decision (observation and mask).
CONTENDERS: dict[str, str] = {
    "batched duel, N=1024 (obs + mask + step)": """
import json, time, numpy as np
from hgin_env.batch import BatchGame
batch = BatchGame(1024, seed=SEED)
rng = np.random.default_rng(SEED)
t0 = time.perf_counter()
for _ in range(STEPS // 1024):
    batch.observations()
    masks = batch.legal_action_masks()
    scores = rng.random(masks.shape) * masks
    batch.step(scores.argmax(axis=1))
print(json.dumps({"seconds": time.perf_counter() - t0, "decisions": (STEPS // 1024) * 1024}))
""",
    "env() (AEC, obs + mask + step)": """
import json, time, numpy as np
from hgin_env import hollywood_gin_v0
env = hollywood_gin_v0.env()
env.reset(seed=SEED)
rng = np.random.default_rng(SEED)
n = 0
t0 = time.perf_counter()
while n < STEPS // 20:
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        n += 1
        if n >= STEPS // 20:
            break
    else:
        env.reset()
print(json.dumps({"seconds": time.perf_counter() - t0, "decisions": n}))
""",
}
CONTENDERS["raw_env() (AEC, obs + mask + step)"] = CONTENDERS["env() (AEC, obs + mask + step)"].replace(
    "hollywood_gin_v0.env()", "hollywood_gin_v0.raw_env()")


def time_in(checkout: Path, snippet: str, steps: int, seed: int) -> dict:
    code = snippet.replace("STEPS", str(steps)).replace("SEED", str(seed))
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", type=Path, required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=400_000, help="batched decisions per run (AEC: 1/20 of it)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sides = {"this": HERE, "other": args.other.resolve()}
    rates: dict[str, dict[str, list[float]]] = {name: {s: [] for s in sides} for name in CONTENDERS}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for name, snippet in CONTENDERS.items():
            for side in order:
                got = time_in(sides[side], snippet, args.steps, args.seed + r)
                rates[name][side].append(got["decisions"] / got["seconds"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"this: {sides['this']}\nother: {sides['other']}\n")
    print(f"{'contender':44s} {'this dec/s':>12s} {'other dec/s':>12s} {'this/other':>11s}")
    report = {}
    for name, by in rates.items():
        a, b = statistics.median(by["this"]), statistics.median(by["other"])
        ratios = [x / y for x, y in zip(by["this"], by["other"], strict=True)]
        report[name] = {"this": a, "other": b, "ratio_of_medians": a / b, "round_ratios": ratios}
        print(f"{name:44s} {a:12,.0f} {b:12,.0f} {a / b:10.3f}x   (rounds: "
              + " ".join(f"{x:.2f}" for x in ratios) + ")")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
