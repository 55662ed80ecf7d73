"""Uniformly random legal play: the floor every other agent must beat."""

from __future__ import annotations

import numpy as np

from .base import SeededAgent


class RandomAgent(SeededAgent):
    """Uniform over the legal actions of the action mask."""

    name = "random"

    def __call__(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the observation's action mask")
        return int(legal[self.rng.integers(legal.size)])
