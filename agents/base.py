"""The agent protocol and the built-in agents' shared plumbing. Agents are built from
specs by :mod:`agents.spec` (re-exported here: ``make_agent``, ``register_agent``...).

Every agent acts only on the observation dict the environment gives a player
(``{"observation": float32 vector, "action_mask": int8[108]}``), never on the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from hgin_env.observation import ObservationLayout

# The registry and the spec grammar are agents.spec's; these names stay importable from here.
from .spec import known_agents, make_agent, register_agent, register_agent_prefix  # noqa: F401


@runtime_checkable
class Agent(Protocol):
    """A policy on observation dicts: ``agent(obs) -> action id``; ``reset`` once per match."""

    def __call__(self, observation: dict) -> int: ...

    def reset(self, seed: int | None = None) -> None: ...


AgentFactory = Callable[..., Agent]


class SeededAgent:
    """Shared plumbing of the built-in agents: a seeded generator (re-seeded by ``reset``)
    and the observation layout they read (``ObservationLayout.for_rules(rules)``: any
    format, any seat). ``columns`` is the older way to name a duel layout."""

    name = "agent"

    def __init__(self, seed: int | None = None, columns: int | None = None,
                 layout: ObservationLayout | None = None):
        if layout is None:
            layout = ObservationLayout(3 if columns is None else columns)
        elif columns is not None and columns != layout.columns:
            raise ValueError(f"columns={columns} disagrees with the layout ({layout.columns} columns)")
        self.layout = layout
        self.columns = layout.columns
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
