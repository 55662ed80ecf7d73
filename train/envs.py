"""Training environments: the single-agent adapter with opponents built from agent specs.

Opponents are given as specs (``"simple"``, ``"expert"``, ``"ppo:runs/x/snapshots/s1.zip"``)
so that ``SubprocVecEnv`` workers build them locally: a self-play snapshot travels as a
path, not as a pickled torch model.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.base import make_agent
from hgin_env.adapters import SingleAgentEnv
from hgin_env.rules import Rules


class TrainingEnv(SingleAgentEnv):
    """``SingleAgentEnv`` + opponents by spec + an optional match bonus on top of hand points.

    With ``reward="points"`` and ``match_bonus=b`` the learner gets hand points / 100 as
    they are scored and ±b when the match is won or lost, so it learns hand play from a
    dense signal while the match outcome still counts.
    """

    def __init__(self, opponent_specs: Sequence[str], opponent_weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "points",
                 match_bonus: float = 0.0, episode: str = "match", seed: int = 0):
        self.opponent_specs: list[str] = []
        self._agent_cache: dict[str, object] = {}
        self._seed = seed
        super().__init__(opponent=self._build(opponent_specs), rules=rules, reward=reward,
                         episode=episode, opponent_weights=opponent_weights)
        self.opponent_specs = list(opponent_specs)
        self.match_bonus = match_bonus

    def _build(self, specs: Sequence[str]) -> list:
        columns = self.aec.rules.columns if hasattr(self, "aec") else Rules().columns
        out = []
        for i, spec in enumerate(specs):
            if spec not in self._agent_cache:
                kwargs = {} if spec.startswith("ppo") else {"columns": columns}
                self._agent_cache[spec] = make_agent(spec, seed=self._seed * 1000 + i, **kwargs)
            out.append(self._agent_cache[spec])
        return out

    def set_opponent_specs(self, specs: Sequence[str], weights: Sequence[float] | None = None) -> None:
        """Swap the opponent pool (called through ``VecEnv.env_method`` between rollouts)."""
        self.set_opponents(self._build(specs), weights)
        self.opponent_specs = list(specs)

    def step(self, action: int):
        obs, reward, terminated, truncated, info = super().step(action)
        summary = info.get("episode_summary")
        if summary is not None and self.match_bonus and self.aec.reward_mode != "match":
            reward += self.match_bonus * (float(summary["won"]) - float(summary["lost"]))
        if summary is not None:
            info["opponent_spec"] = self.opponent_specs[self.opponent_index] if self.opponent_specs else ""
        return obs, reward, terminated, truncated, info
