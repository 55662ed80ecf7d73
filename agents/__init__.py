"""Agents that play Hollywood Gin from observation dicts: random, simple (Neller), expert."""

from .base import Agent, known_agents, make_agent, register_agent, register_agent_prefix
from .expert import ExpertAgent, ExpertParams
from .random_agent import RandomAgent
from .simple import SimpleAgent

__all__ = ["Agent", "ExpertAgent", "ExpertParams", "RandomAgent", "SimpleAgent", "known_agents",
           "make_agent", "register_agent", "register_agent_prefix"]
