"""The environment as Ray RLlib's multi-agent PPO with action masking expects it.

RLlib's action-masking RLModule (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``)
reads observation dicts with the keys ``"observations"`` and ``"action_mask"``; the
environment gives ``{"observation", "action_mask"}``. :class:`RLlibObservationWrapper` is a
PettingZoo AEC wrapper that only renames the key (the vector and its layout stay those of
:mod:`hgin_env.observation`) and gives the mask as float32 (the module takes its log), and
at the end of a match it adds each player's :func:`hgin_env.summary.match_summary` to
its info, so that RLlib callbacks log the same three-column outcomes as ``train/ppo.py``.

:func:`make_rllib_env` wraps that in RLlib's ``PettingZooEnv`` (Ray is imported only there,
so this module imports without Ray). :func:`to_rllib_obs` / :func:`from_rllib_obs` convert
one observation dict each way, for agents that feed RLlib modules or heuristics fed by them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from ..observation import observation_dict
from ..summary import match_summary
from .aec import raw_env

#: Keys of the observation dict RLlib's action-masking RLModule reads.
OBS_KEY = "observations"
MASK_KEY = "action_mask"
#: Key of the info entry holding a finished match's summary (from the player's side).
SUMMARY_KEY = "episode_summary"


def to_rllib_obs(observation: dict) -> dict[str, np.ndarray]:
    """``{"observation", "action_mask"}`` -> ``{"observations", "action_mask"}`` (mask as float32)."""
    return {OBS_KEY: observation["observation"],
            MASK_KEY: np.asarray(observation["action_mask"], dtype=np.float32)}


def from_rllib_obs(observation: dict) -> dict[str, np.ndarray]:
    """The inverse of :func:`to_rllib_obs`: the dict the project's agents act on."""
    return observation_dict(np.asarray(observation[OBS_KEY], dtype=np.float32),
                            np.asarray(observation[MASK_KEY]).astype(np.int8))


def rllib_observation_space(space: spaces.Dict) -> spaces.Dict:
    """The environment's observation space with the keys and mask dtype of :func:`to_rllib_obs`."""
    mask = space["action_mask"]
    return spaces.Dict({OBS_KEY: space["observation"],
                        MASK_KEY: spaces.Box(0.0, 1.0, shape=mask.shape, dtype=np.float32)})


class RLlibObservationWrapper(BaseWrapper):
    """Renames the observation keys for RLlib and puts the match summary into the infos.

    Everything else (turn order, rewards, the action space) is the wrapped environment's.
    """

    def __init__(self, env: Any):
        super().__init__(env)
        self._spaces = {a: rllib_observation_space(env.observation_space(a)) for a in env.possible_agents}

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return to_rllib_obs(self.env.observe(agent))

    def step(self, action: int | None) -> None:
        finished = all(self.terminations[a] or self.truncations[a] for a in self.agents)
        self.env.step(action)
        if not finished and self.agents and all(self.terminations[a] or self.truncations[a] for a in self.agents):
            base = self.unwrapped
            for agent in self.agents:
                self.infos[agent][SUMMARY_KEY] = match_summary(base.match, base.possible_agents.index(agent))


def make_rllib_env(config: dict | None = None) -> Any:
    """RLlib env creator: ``PettingZooEnv(RLlibObservationWrapper(raw_env(**config)))``.

    ``config`` holds ``raw_env`` arguments (``rules``, ``episode``, ``reward``). Register it
    with ``ray.tune.registry.register_env("hollywood_gin_v0", make_rllib_env)``.
    """
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    config = dict(config or {})
    return PettingZooEnv(RLlibObservationWrapper(raw_env(**config)))
