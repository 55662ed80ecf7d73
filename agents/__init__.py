"""Agents that play Hollywood Gin from observation dicts: random, simple (Neller), expert,
search. The built-in agents register with :mod:`agents.spec` here, once the modules they
live in are loaded, so the registry never imports an agent module (no import circle);
``search:key=value,...`` names a search variant; trained-policy loaders (``ppo:PATH``,
``rllib:PATH``) register both their forms when first named."""

from . import batched  # noqa: F401  (registers the batched forms of the built-in agents)
from .base import Agent
from .expert import ExpertAgent, ExpertParams
from .random_agent import RandomAgent
from .search import SearchAgent, search_from_spec
from .simple import SimpleAgent
from .spec import known_agents, make_agent, register_agent, register_agent_prefix

for _name, _factory in (("random", RandomAgent), ("simple", SimpleAgent), ("expert", ExpertAgent),
                        ("search", SearchAgent)):
    register_agent(_name, _factory)
register_agent_prefix("search", search_from_spec)  # "search:temperature=1,prior_k=2"

__all__ = ["Agent", "ExpertAgent", "ExpertParams", "RandomAgent", "SearchAgent", "SimpleAgent", "known_agents",
           "make_agent", "register_agent", "register_agent_prefix"]
