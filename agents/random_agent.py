"""Uniformly random legal play: the floor every other agent must beat."""

from __future__ import annotations

import numpy as np


class RandomAgent:
    """Uniform over the legal actions of the action mask."""

    name = "random"

    def __init__(self, seed: int | None = None, columns: int = 3):
        self.columns = columns
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def __call__(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the observation's action mask")
        return int(legal[self.rng.integers(legal.size)])
