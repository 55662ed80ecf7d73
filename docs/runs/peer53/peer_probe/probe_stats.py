"""Numpy-only helpers shared by the probe scripts (no JAX, no peer code)."""

import numpy as np


def normal_ci(p, n):
    """95% normal-approximation interval of a proportion p over n trials."""
    se = (p * (1 - p) / max(n, 1)) ** 0.5
    return (p - 1.96 * se, p + 1.96 * se)


def per_hand_sums(arr, keys):
    """Per finished hand: each key's (T, B) array summed over the hand's steps, and its reward.

    `arr` holds (T, B) arrays `done`, `reward` and `keys` from fused_env_probe.py; hands are
    listed in the order they finish (by step, then by env)."""
    done = arr["done"]
    envs = done.shape[1]
    running = {k: np.zeros(envs, int) for k in keys}
    sums = {k: [] for k in keys}
    rewards = []
    for t in range(done.shape[0]):
        for k in keys:
            running[k] += arr[k][t]
        for b in np.nonzero(done[t])[0]:
            for k in keys:
                sums[k].append(running[k][b])
            rewards.append(arr["reward"][t, b])
        for k in keys:
            running[k][done[t]] = 0
    return {k: np.array(v) for k, v in sums.items()}, np.array(rewards)
