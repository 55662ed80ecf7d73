"""The opponent agent of ``hgin play`` from its spec (every format's front-end builds it here)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from hgin_env.observation import ObservationLayout
from hgin_env.rules import Rules

from .common import BUILTIN_OPPONENTS, OPPONENT_KINDS, CliError


def make_opponent(spec: str, seed: int, rules: Rules) -> tuple[Any, str]:
    """Build the opponent agent from ``random|simple|expert|search``, ``ppo``, a spec with
    options (``ppo:PATH``, ``search:rollouts=16``) or a PATH."""
    from agents.spec import known_agents, make_agent

    if spec in BUILTIN_OPPONENTS or (":" in spec and not Path(spec).exists()):
        name, label = spec, spec
    elif spec == "ppo":
        name, label = "ppo:", "ppo"
    else:
        path = Path(spec)
        if not path.exists():
            specs = ", ".join(k for k in known_agents() if k.endswith(":ARG"))
            raise CliError(f"unknown opponent {spec!r}: not one of {', '.join(OPPONENT_KINDS)}, nor a spec "
                           f"({specs}, e.g. ppo:PATH or search:rollouts=16), nor a checkpoint file")
        name, label = f"ppo:{path}", f"ppo {path.name}"
    try:
        agent = make_agent(name, seed=seed, layout=ObservationLayout.for_rules(rules))
    except ImportError as exc:
        raise CliError(f"cannot load {spec!r}: {exc}; learned-policy opponents (ppo, search) need the training extras "
                       "(pip install 'hgin_env[train]')") from None
    except ValueError as exc:
        if name.startswith("ppo:") or "unknown agent" not in str(exc):
            raise CliError(f"cannot load opponent {spec!r}: {exc}") from None
        raise CliError(f"unknown opponent {spec!r}; known: {', '.join(known_agents())} or a PATH") from None
    reset = getattr(agent, "reset", None)
    if reset is not None:
        with contextlib.suppress(TypeError):
            reset(seed=seed)
    return agent, label
