"""The opponents' passes of a learner batch, the compiled loop against the Python loop
(:mod:`agents.opponent_loop`), side by side in one process.

    python -m eval.opponent_loop --steps 200 --rounds 3

Each format at its training batch size (``train.ppo``'s defaults: 128 matches, three-hand
256) against the default recipe's opponents (Simple and the Expert), the learner playing
the first legal move: ``LearnerBatch.step`` timed with ``compiled_opponents`` on and off,
alternating for ``--rounds`` rounds from the same seed. Printed: the CPU time per 1,000
learner decisions of each (the median of the rounds; ``LearnerBatch.step`` alone, not the
copies kept to compare), and whether both played the same game (equal observations at
every step). The policy's forward and the PPO update, the
same per step in every format, are not in it.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

#: The formats' rules profiles (each timed at ``train.ppo``'s batch size for it, :func:`batch_size`).
PROFILES = ("hollywood", "hollywood_three_hand", "hollywood_partnership")


def batch_size(rules: str) -> int:
    """``train.ppo``'s default ``n_envs`` for these rules (``train.run.BATCHED_DEFAULTS``)."""
    from hgin_env.rules import get_rules
    from train.run import BATCHED_DEFAULTS

    return BATCHED_DEFAULTS[get_rules(rules).format][0]


def run(rules: str, n: int, steps: int, compiled: bool, seed: int = 0) -> tuple[float, list[np.ndarray]]:
    """CPU seconds per learner decision over ``steps`` vector steps, and the observations."""
    from agents.batched import BatchedExpert, BatchedSimple
    from hgin_env.batch.vector import LearnerBatch
    from hgin_env.observation import ObservationLayout
    from hgin_env.rules import get_rules

    layout = ObservationLayout.for_rules(get_rules(rules))
    batch = LearnerBatch(n, [BatchedSimple(seed=seed, layout=layout), BatchedExpert(seed=seed, layout=layout)],
                         rules=rules, seed=seed, compiled_opponents=compiled)
    seen = [batch.observations().copy()]
    seconds = 0.0
    for _ in range(steps):
        moves = batch.action_masks().argmax(axis=1)
        t0 = time.process_time()  # the step alone: the copy kept for the equality check is not timed
        batch.step(moves)
        seconds += time.process_time() - t0
        seen.append(batch.observations().copy())
    return seconds / (steps * n), seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from agents.opponent_loop import warm_opponent_loop
    from hgin_env.batch.engines import warm_kernels

    warm_kernels()
    warm_opponent_loop()
    for rules in PROFILES:
        n = batch_size(rules)
        times: dict[bool, list[float]] = {True: [], False: []}
        same = True
        for k in range(args.rounds):
            order = (True, False) if k % 2 == 0 else (False, True)
            seen = {}
            for compiled in order:
                seconds, seen[compiled] = run(rules, n, args.steps, compiled)
                times[compiled].append(seconds * 1e6)
            same &= all(np.array_equal(a, b) for a, b in zip(seen[True], seen[False], strict=True))
        fast, slow = statistics.median(times[True]), statistics.median(times[False])
        print(f"{rules:24s} N={n:4d}  compiled {fast:6.1f} ms  Python loop {slow:6.1f} ms  per 1,000 learner "
              f"decisions  ({slow / fast:.2f}x)  same game: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
