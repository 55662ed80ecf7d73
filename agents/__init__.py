"""Agents that play Hollywood Gin from observation dicts: random, simple (Neller), expert,
search. The built-in agents register here, once the modules they live in are loaded, so
``agents.base`` never imports an agent module (no import circle); ``search:key=value,...``
names a search variant; trained-policy loaders
(``ppo:PATH``, ``rllib:PATH``) register themselves when first used."""

from .base import Agent, known_agents, make_agent, register_agent, register_agent_prefix
from .expert import ExpertAgent, ExpertParams
from .random_agent import RandomAgent
from .search import SearchAgent, search_from_spec
from .simple import SimpleAgent

for _name, _factory in (("random", RandomAgent), ("simple", SimpleAgent), ("expert", ExpertAgent),
                        ("search", SearchAgent)):
    register_agent(_name, _factory)
register_agent_prefix("search", search_from_spec)  # "search:temperature=1,prior_k=2"

__all__ = ["Agent", "ExpertAgent", "ExpertParams", "RandomAgent", "SearchAgent", "SimpleAgent", "known_agents",
           "make_agent", "register_agent", "register_agent_prefix"]
