"""Single-agent Gymnasium view of the AEC environment, for Stable-Baselines3.

``SingleAgentEnv`` seats a learner against an opponent policy inside the environment:
``step`` applies the learner's action, then plays the opponent until the learner must act
again or the episode ends. The learner's reward is everything it received in between,
including what the opponent's winning move gave it. ``action_masks()`` exposes the legal
actions the way sb3-contrib's ``MaskablePPO`` expects. An illegal action ends the episode
with reward -1 (``illegal_action="terminate"``, as PettingZoo's ``env()`` wrapper does, and
as Gymnasium's checker needs) or raises ``ValueError`` (``illegal_action="raise"``).

An opponent is any callable ``opponent(observation_dict) -> action`` (heuristic agents,
frozen PPO policies); if it has ``reset(seed=None)`` it is called at every episode start
with a seed drawn from the environment's generator, so a seeded ``reset`` fixes the whole
episode. ``reward``, ``shaping`` and ``shaping_gamma`` are those of the AEC environment
(:mod:`hgin_env.rewards`); the learner's shaping terms arrive with its next decision, so
``shaping_gamma`` should be the learner's per-step discount. With several opponents, one
is drawn per episode (``opponent_weights``).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from .env import raw_env
from .rules import Rules

Opponent = Callable[[dict], int]


class UniformRandomOpponent:
    """Uniform over the legal actions (the default opponent)."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def __call__(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(len(legal))])


def _reset_agent(agent: Any, seed: int) -> None:
    reset = getattr(agent, "reset", None)
    if reset is None:
        return
    try:
        params = inspect.signature(reset).parameters
    except (TypeError, ValueError):
        params = {}
    if "seed" in params:
        reset(seed=seed)
    else:
        reset()


class SingleAgentEnv(gymnasium.Env):
    """One seat of Hollywood Gin against ``opponent``; the seat is random per episode.

    Observations are the flat vector of :mod:`hgin_env.observation` (the action mask comes
    from ``action_masks()``), actions the 108 ids of :mod:`hgin_env.actions`.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, opponent: Opponent | Sequence[Opponent] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "match",
                 episode: str = "match", seat: int | None = None,
                 opponent_weights: Sequence[float] | None = None,
                 illegal_action: str = "terminate", render_mode: str | None = None,
                 shaping: float = 0.0, shaping_gamma: float = 1.0):
        super().__init__()
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', not {illegal_action!r}")
        self.illegal_action = illegal_action
        self.aec = raw_env(rules=rules, episode=episode, reward=reward, render_mode=render_mode,
                           shaping=shaping, shaping_gamma=shaping_gamma)
        self.render_mode = render_mode
        self.rules = self.aec.rules
        if self.rules.format != "duel":
            raise ValueError(f"the single-agent adapter plays the duel (one learner, one "
                             f"opponent); format={self.rules.format!r} is served by "
                             f"hollywood_gin_v0.env(rules=...)")
        self.set_opponents(opponent if opponent is not None else UniformRandomOpponent(),
                           opponent_weights)
        if seat not in (None, 0, 1):
            raise ValueError(f"seat must be None (random), 0 or 1, got {seat!r}")
        self.fixed_seat = seat
        self.observation_space = self.aec.observation_space("player_0")["observation"]
        self.action_space = self.aec.action_space("player_0")
        self.learner = "player_0"
        self.opponent: Opponent = self.opponents[0]
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._illegal = False
        self.opponent_index = 0

    # ------------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Opponent | Sequence[Opponent],
                      weights: Sequence[float] | None = None) -> None:
        """Replace the opponent pool (used by self-play training between rollouts)."""
        if callable(opponents):
            opponents = [opponents]
        opponents = list(opponents)
        if not opponents or not all(callable(o) for o in opponents):
            raise ValueError("opponents must be callables observation_dict -> action")
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            if w.shape != (len(opponents),) or (w < 0).any() or w.sum() <= 0:
                raise ValueError("opponent_weights must be non-negative, one per opponent")
            weights = (w / w.sum()).tolist()
        self.opponents = opponents
        self.opponent_weights = weights

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        index = int(rng.choice(len(self.opponents), p=self.opponent_weights))
        self.opponent = self.opponents[index]
        self.opponent_index = index
        seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(2))
        self.learner = self.aec.possible_agents[seat]
        self.aec.reset(seed=int(rng.integers(2**63 - 1)), options=options)
        self._illegal = False
        _reset_agent(self.opponent, int(rng.integers(2**63 - 1)))
        reward, done = self._play_opponent()
        obs = self.aec.observe(self.learner)
        self._mask = obs["action_mask"].astype(bool)
        info = self._info(done)
        return obs["observation"], info

    def step(self, action: int):
        aec = self.aec
        if aec.agent_selection != self.learner or self._done() or self._illegal:
            raise RuntimeError("step() called after the episode ended; call reset()")
        action = int(action)
        if not (0 <= action < len(self._mask) and self._mask[action]):
            if self.illegal_action == "raise":
                aec.step(action)  # raises ValueError naming the legal actions
            # Like PettingZoo's TerminateIllegalWrapper: the episode ends, the learner gets -1.
            self._illegal = True
            obs = aec.observe(self.learner)["observation"]
            info = self._info(False)
            info["illegal_action"] = action
            return obs, -1.0, True, False, info
        aec.step(action)
        reward = aec.rewards[self.learner]
        extra, done = self._play_opponent()
        reward += extra
        obs = aec.observe(self.learner)
        self._mask = obs["action_mask"].astype(bool)
        terminated = aec.terminations[self.learner]
        truncated = aec.truncations[self.learner]
        return obs["observation"], float(reward), terminated, truncated, self._info(done)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool vector), for MaskablePPO."""
        return self._mask

    def render(self):
        return self.aec.render()

    # ------------------------------------------------------------------ helpers
    def _done(self) -> bool:
        return self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _play_opponent(self) -> tuple[float, bool]:
        """Let the opponent act until the learner must act or the episode ends."""
        aec = self.aec
        reward = 0.0
        while not self._done() and aec.agent_selection != self.learner:
            agent = aec.agent_selection
            action = self.opponent(aec.observe(agent))
            aec.step(int(action))
            reward += aec.rewards[self.learner]
        return reward, self._done()

    def _info(self, done: bool) -> dict:
        info = dict(self.aec.infos[self.learner])
        info["learner"] = self.learner
        info["opponent_index"] = self.opponent_index
        if done:
            info["episode_summary"] = episode_summary(self.aec, self.learner)
        return info


def episode_summary(aec: raw_env, learner: str) -> dict:
    """Hollywood outcome of a finished episode from the learner's side (for loggers).

    ``won``/``lost`` refer to the match, or to the hand when an episode is one hand."""
    game = aec.game
    assert game is not None
    me = aec.possible_agents.index(learner)
    board = game.scoreboard
    kinds_me: Counter[str] = Counter()
    kinds_opp: Counter[str] = Counter()
    points = [0, 0]  # hand points scored by the learner, by the opponent
    dead = 0
    for h in game.hand_history:
        if h.winner is None:
            dead += 1
        elif h.winner == me:
            kinds_me[h.kind] += 1
            points[0] += h.points
        else:
            kinds_opp[h.kind] += 1
            points[1] += h.points
    winner = board.match_winner
    if game.single_hand and game.hand_history:  # a one-hand episode is won by the hand's winner
        winner = game.hand_history[-1].winner
    return {
        "won": winner == me,
        "lost": winner == 1 - me,
        "truncated": game.truncated,
        "columns_won": board.columns_won[me],
        "columns_lost": board.columns_won[1 - me],
        "column_totals": board.columns[me].tolist(),
        "opponent_column_totals": board.columns[1 - me].tolist(),
        "hands": len(game.hand_history),
        "dead_hands": dead,
        "hand_kinds": dict(kinds_me),
        "opponent_hand_kinds": dict(kinds_opp),
        "points": points[0],
        "opponent_points": points[1],
    }
