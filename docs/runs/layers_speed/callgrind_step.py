"""``python callgrind_step.py KIND DECISIONS``: random legal play for callgrind.sh (KIND: env,
raw_env or batch; every decision builds the observation and the mask, then steps)."""

import sys

import numpy as np

from hgin_env import hollywood_gin_v0


def batch(decisions: int) -> None:
    from hgin_env.batch import BatchGame

    games = BatchGame(256, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(decisions // 256):
        games.observations()
        masks = games.legal_action_masks()
        games.step((rng.random(masks.shape) * masks).argmax(axis=1))


def aec(kind: str, decisions: int) -> None:
    env = getattr(hollywood_gin_v0, kind)()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    n = 0
    while n < decisions:
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            n += 1
            if n >= decisions:
                break
        else:
            env.reset()


if __name__ == "__main__":
    kind, count = sys.argv[1], int(sys.argv[2])
    batch(count) if kind == "batch" else aec(kind, count)
