"""The agent protocol and the registry that builds agents from names.

Why a registry: tournaments run agents in worker processes, so an agent must be
describable by a picklable name (plus keyword arguments) and built inside the worker.
Every agent acts only on the observation dict the environment gives a player
(``{"observation": float32 vector, "action_mask": int8[108]}``), never on the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hgin_env.observation import ObservationLayout


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

#: name -> factory(seed=..., **kwargs). Trained policies plug in with ``register_agent``.
_REGISTRY: dict[str, AgentFactory] = {}
#: prefix -> factory(argument, seed=..., **kwargs), for specs such as ``"ppo:runs/x/model.zip"``.
_PREFIX_REGISTRY: dict[str, Callable[..., Agent]] = {}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make ``make_agent(name)`` build agents with ``factory(seed=..., **kwargs)``."""
    _REGISTRY[name] = factory


def register_agent_prefix(prefix: str, factory: Callable[..., Agent]) -> None:
    """Make ``make_agent("prefix:ARG")`` call ``factory("ARG", seed=..., **kwargs)``.

    This is the hook for trained-policy loaders, e.g. ``register_agent_prefix("ppo", load_ppo)``
    so that ``"ppo:runs/x/model.zip"`` names an agent.
    """
    _PREFIX_REGISTRY[prefix] = factory


def known_agents() -> list[str]:
    """Registered names, and prefixes as ``"prefix:ARG"``."""
    return sorted(_REGISTRY) + sorted(f"{p}:ARG" for p in _PREFIX_REGISTRY)


def make_agent(name: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent from its name: ``"random"``, ``"simple"``, ``"expert"``, ``"search"`` or
    ``"prefix:ARG"``.

    Unknown names raise ``ValueError`` listing the known ones.
    """
    if name in _REGISTRY:
        return _REGISTRY[name](seed=seed, **kwargs)
    prefix, sep, arg = name.partition(":")
    if sep and prefix in _PREFIX_REGISTRY:
        return _PREFIX_REGISTRY[prefix](arg, seed=seed, **kwargs)
    if sep and prefix in _LOADER_MODULES:
        _try_load_hook(prefix)
        if prefix in _PREFIX_REGISTRY:
            return _PREFIX_REGISTRY[prefix](arg, seed=seed, **kwargs)
    raise ValueError(f"unknown agent {name!r}; known: {known_agents()}")


#: Modules that register a prefix when imported (imported on first use: they are heavy).
_LOADER_MODULES = {"ppo": "agents.ppo", "rllib": "agents.rllib_agent", "openspiel": "agents.openspiel"}


def _try_load_hook(prefix: str) -> None:
    """Import the loader module of ``prefix`` so that it registers itself."""
    try:
        import importlib

        importlib.import_module(_LOADER_MODULES[prefix])
    except ImportError:
        pass
