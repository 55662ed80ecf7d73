"""Side by side: this checkout's step speed against another checkout's (another commit), in
one run. ``python -m eval.bench.commits --other /path/to/checkout``

Each round runs every contender once in each checkout, alternating which goes first, in a
fresh interpreter whose ``hgin_env`` is that checkout's (``PYTHONPATH``), so both see the
same machine load; the report gives each side's median decisions/s and their ratio. The
timed code uses only public paths both commits have (``hgin_env.batch.BatchGame``,
``hgin_env.hollywood_gin_v0``), so it measures the engines, not this file.

    git worktree add /tmp/base <commit>     # the commit to compare with
    python -m eval.bench.commits --other /tmp/base --rounds 7

The batched rows are a sweep: ``--tables`` the batch sizes (a step's fixed cost shows at a
few tables, the per-table cost at many), ``--profiles`` the formats (three-hand and
partnership add their seating and hand ends), ``--no-aec`` leaves the AEC rows out. The
engine's table-state record against 7542a53 (the kernels' 22 separate arrays); ``--train``
adds ``train.ppo``'s default recipe on given profiles (the formats against the duel):

    python -m eval.bench.commits --other /tmp/7542a53 --tables 8 64 512 --no-aec \
        --profiles hollywood hollywood_three_hand hollywood_partnership --steps 200000
    python -m eval.bench.commits --other /tmp/before --no-aec --tables 256 --rounds 3 \
        --profiles hollywood hollywood_three_hand hollywood_partnership \
        --train hollywood hollywood_three_hand hollywood_partnership
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

#: The batched engine's contender: random legal play that builds what a learner reads every
#: decision (observation and mask), TABLES matches of PROFILE; a short untimed warm-up first,
#: so that no kernel compiles (or loads from numba's cache) inside the timed loop; CPU time of
#: the process (one thread), steadier than wall time on a shared machine.
BATCHED = """
import json, time, numpy as np
from hgin_env.batch import BatchGame
batch = BatchGame(TABLES, rules="PROFILE", seed=SEED)
rng = np.random.default_rng(SEED)
def play(calls):
    for _ in range(calls):
        batch.observations()
        masks = batch.legal_action_masks()
        scores = rng.random(masks.shape) * masks
        batch.step(scores.argmax(axis=1))
play(20)
calls = max(1, STEPS // TABLES)
t0 = time.process_time()
play(calls)
print(json.dumps({"seconds": time.process_time() - t0, "decisions": calls * TABLES}))
"""
#: A training contender: ``train.ppo`` with the default recipe on PROFILE for STEPS environment
#: steps (no evaluation, no checkpoints), after an untimed short run that pays the one-off
#: costs (imports, torch's first calls, loading the kernels); wall time: the default trainer
#: runs in two processes on two cores (train/split_update.py), whose speed this process's CPU
#: time would not show (it did while the trainer was one process, before 86d861c).
TRAIN = """
import json, tempfile, time
from train.ppo import Args, train
def run(steps):
    with tempfile.TemporaryDirectory() as tmp:
        train(Args(run_name="bench", out_dir=tmp, seed=SEED, total_timesteps=steps, rules="PROFILE",
                   eval_every=0, checkpoint_every=0, progress_bar=False))
run(4096)
t0 = time.perf_counter()
run(STEPS)
print(json.dumps({"seconds": time.perf_counter() - t0, "decisions": STEPS}))
"""
#: The AEC env's contenders (STEPS / 20 decisions: it is that much slower).
AEC: dict[str, str] = {
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
AEC["raw_env() (AEC, obs + mask + step)"] = AEC["env() (AEC, obs + mask + step)"].replace(
    "hollywood_gin_v0.env()", "hollywood_gin_v0.raw_env()")


def batched_name(profile: str, tables: int) -> str:
    return f"batched {profile}, N={tables} (obs + mask + step)"


def train_name(profile: str) -> str:
    return f"train.ppo --rules {profile} (env steps, wall time)"


def contenders(tables: list[int], profiles: list[str], aec: bool = True,
               train_profiles: tuple[str, ...] = ()) -> dict[str, str]:
    """The snippets timed: the batched engine at every batch size of every profile, then
    (``aec``) the AEC env's, then ``train.ppo`` on each of ``train_profiles``."""
    out = {batched_name(p, n): BATCHED.replace("TABLES", str(n)).replace("PROFILE", p)
           for p in profiles for n in tables}
    out |= AEC if aec else {}
    return out | {train_name(p): TRAIN.replace("PROFILE", p) for p in train_profiles}


#: The default run's contenders.
CONTENDERS = contenders([1024], ["hollywood"])


def time_in(checkout: Path, snippet: str, steps: int, seed: int) -> dict:
    code = snippet.replace("STEPS", str(steps)).replace("SEED", str(seed))
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", type=Path, required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=400_000, help="batched decisions per run (AEC: 1/20 of it)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", type=int, nargs="+", default=[1024], help="batch sizes of the batched rows")
    parser.add_argument("--profiles", nargs="+", default=["hollywood"], help="rules profiles of the batched rows")
    parser.add_argument("--no-aec", action="store_true", help="leave out the AEC env's rows")
    parser.add_argument("--train", nargs="+", default=[], metavar="PROFILE",
                        help="also time train.ppo's default recipe on these rules profiles")
    parser.add_argument("--train-steps", type=int, default=65536, help="environment steps per training run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if min(args.tables) < 1:
        parser.error(f"--tables must be >= 1, got {args.tables}")
    timed = contenders(args.tables, args.profiles, aec=not args.no_aec, train_profiles=tuple(args.train))
    train_rows = {train_name(p) for p in args.train}
    sides = {"this": HERE, "other": args.other.resolve()}
    rates: dict[str, dict[str, list[float]]] = {name: {s: [] for s in sides} for name in timed}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for name, snippet in timed.items():
            for side in order:
                steps = args.train_steps if name in train_rows else args.steps
                got = time_in(sides[side], snippet, steps, args.seed + r)
                rates[name][side].append(got["decisions"] / got["seconds"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"this: {sides['this']}\nother: {sides['other']}\n")
    width = max(len(name) for name in timed)
    print(f"{'contender':{width}s} {'this dec/s':>12s} {'other dec/s':>12s} {'this/other':>11s}")
    report = {}
    for name, by in rates.items():
        a, b = statistics.median(by["this"]), statistics.median(by["other"])
        ratios = [x / y for x, y in zip(by["this"], by["other"], strict=True)]
        report[name] = {"this": a, "other": b, "ratio_of_medians": a / b, "round_ratios": ratios}
        print(f"{name:{width}s} {a:12,.0f} {b:12,.0f} {a / b:10.3f}x   (rounds: "
              + " ".join(f"{x:.2f}" for x in ratios) + ")")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
