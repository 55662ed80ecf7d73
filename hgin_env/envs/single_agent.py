"""Single-agent Gymnasium view of the AEC environment, for Stable-Baselines3.

``SingleAgentEnv`` seats a learner against an opponent policy inside the environment:
``step`` applies the learner's action, then plays the opponent until the learner must act
again or the episode ends. It serves every format (``rules=`` a duel, three-hand or
partnership profile): one seat is the learner's, every other seat is played by the
opponent agent drawn for the episode (one agent may sit at several seats, as in
``run_match``); in a partnership the learner's partner is that same opponent agent unless
``partner=`` gives it its own agent. The learner's reward is everything it received in between,
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

Formats (``Rules.format``):

* observations are the format's vector (``ObservationLayout.for_rules(rules)``: 434 floats
  in three-hand, 402 in partnership with 3 columns), the seat's own view;
* the learner's seat is ``seat=`` or drawn from the seeded generator each episode, like the
  duel's; ``step`` returns only when the learner acts (a three-hand learner sitting a hand
  out waits while the other two play it) or the episode ends; should a match end before
  the learner's first decision (possible with a tiny target), ``reset`` deals another one;
* the reward is the learner's seat's reward of the AEC environment (three-hand: the
  seat's own; partnership: the team's, identical for both partners; shaping per seat);
  what the seat earns before the learner's first decision (a three-hand learner sitting
  the first hand out, in ``"columns"`` mode) comes with its first step, so an episode's
  rewards add up to the seat's return;
* ``episode="hand"`` is refused (``ValueError``): a format's match is the episode (a
  three-hand learner sits out some hands, a partnership round is two hands at once);
* ``info["episode_summary"]`` (:func:`hgin_env.summary.match_summary`, the one summary of
  every path) reports the learner's seat (or team) against the others.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from ..actions import as_action
from ..rules import Rules, get_rules
from ..summary import match_summary
from .aec import raw_env

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

    Every format: ``seat`` is None (drawn per episode) or a seat ``0..n-1``; the opponent
    drawn for the episode plays every other seat. ``partner`` (partnership only) is an
    agent for the learner's partner (seat + 2 mod 4); without it the partner is played by
    the episode's opponent agent too, like the two opponents. ``render_mode="rgb_array"``
    returns the AEC environment's picture (in a format, the whole match).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(self, opponent: Opponent | Sequence[Opponent] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "match",
                 episode: str = "match", seat: int | None = None,
                 opponent_weights: Sequence[float] | None = None,
                 illegal_action: str = "terminate", render_mode: str | None = None,
                 shaping: float = 0.0, shaping_gamma: float = 1.0, shaping_potential: str = "deadwood",
                 partner: Opponent | None = None, match_bonus: float = 0.0):
        super().__init__()
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', not {illegal_action!r}")
        self.illegal_action = illegal_action
        fmt = get_rules(rules).format
        if episode == "hand" and fmt != "duel":
            raise ValueError(f"episode='hand' with format={fmt!r} is not served: a "
                             f"{fmt} match is one episode (episode='match'); one-hand "
                             f"episodes are for the duel")
        self.aec = raw_env(rules=rules, episode=episode, reward=reward, render_mode=render_mode,
                           shaping=shaping, shaping_gamma=shaping_gamma,
                           shaping_potential=shaping_potential, match_bonus=match_bonus)
        self.render_mode = render_mode
        self.rules = self.aec.rules
        self.num_seats = self.rules.num_players
        self.set_opponents(opponent if opponent is not None else UniformRandomOpponent(),
                           opponent_weights)
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int | np.integer)
                                 or not 0 <= seat < self.num_seats):
            raise ValueError(f"seat must be None (random) or a seat in 0..{self.num_seats - 1} "
                             f"(format={self.rules.format!r}), got {seat!r}")
        self.fixed_seat = None if seat is None else int(seat)
        if partner is not None and (self.rules.format != "partnership" or not callable(partner)):
            raise ValueError(f"partner must be a callable observation_dict -> action, and only "
                             f"format='partnership' has partners (format={self.rules.format!r})")
        self.partner: Opponent | None = partner
        self.observation_space = self.aec.observation_space("player_0")["observation"]
        self.action_space = self.aec.action_space("player_0")
        self.learner = "player_0"
        self.seat = 0
        self.opponent: Opponent = self.opponents[0]
        #: The agent at each seat this episode (None: the learner's seat).
        self.seat_agents: list[Opponent | None] = [None] + [self.opponent] * (self.num_seats - 1)
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._illegal = False
        self._pending = 0.0
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
        seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.num_seats))
        self.seat = seat
        self.learner = self.aec.possible_agents[seat]
        agents: list[Opponent | None] = [self.opponent] * self.num_seats
        agents[seat] = None
        if self.partner is not None:
            agents[(seat + 2) % 4] = self.partner
        self.seat_agents = agents
        self.aec.reset(seed=int(rng.integers(2**63 - 1)), options=options)
        self._illegal = False
        _reset_agent(self.opponent, int(rng.integers(2**63 - 1)))
        if self.partner is not None:
            _reset_agent(self.partner, int(rng.integers(2**63 - 1)))
        reward, done = self._play_opponent()
        while done and self.rules.format != "duel":
            # A format's match ended before the learner's first decision: deal another.
            self.aec.reset(seed=int(rng.integers(2**63 - 1)), options=options)
            reward, done = self._play_opponent()
        # A format pays what the learner earned before its first decision (a three-hand
        # learner sitting the first hand out) with its first step; the duel pays nothing then.
        self._pending = reward if self.rules.format != "duel" else 0.0
        obs = self.aec.observe(self.learner)
        self._mask = obs["action_mask"].astype(bool)
        info = self._info(done)
        return obs["observation"], info

    def step(self, action: int):
        """The learner's action: an integer id (``hgin_env.actions.as_action``: no floats,
        strings or bools; out of range raises ``ValueError``); a legal one is played, an
        illegal one ends the episode (or raises, ``illegal_action="raise"``)."""
        aec = self.aec
        if aec.game is None:
            raise RuntimeError("step() before reset(): call reset() first")
        if aec.agent_selection != self.learner or self._done() or self._illegal:
            raise RuntimeError("step() called after the episode ended; call reset()")
        action = as_action(action)
        if not (0 <= action < len(self._mask) and self._mask[action]):
            if self.illegal_action == "raise":
                aec.step(action)  # raises ValueError naming the legal actions
            # Like PettingZoo's TerminateIllegalWrapper: the episode ends, the learner gets -1.
            self._illegal = True
            obs = aec.observe(self.learner)["observation"]
            info = self._info(False)
            info["illegal_action"] = action
            return obs, -1.0, True, False, info
        aec.play_checked(action)  # type, range and legality checked above, once
        reward = aec.rewards[self.learner]
        if self._pending:
            reward += self._pending
            self._pending = 0.0
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
        agents = self.seat_agents
        index = aec._agent_index
        while not self._done() and aec.agent_selection != self.learner:
            agent = aec.agent_selection
            # An opponent's answer is checked once, by the environment's step (type, range,
            # legality); no int() here, which would turn 3.7 into 3.
            aec.step(agents[index[agent]](aec.observe(agent)))  # type: ignore[misc]
            reward += aec.rewards[self.learner]
        return reward, self._done()

    def _info(self, done: bool) -> dict:
        info = dict(self.aec.infos[self.learner])
        info["learner"] = self.learner
        info["opponent_index"] = self.opponent_index
        if done:
            assert self.aec.match is not None
            info["episode_summary"] = match_summary(self.aec.match, self.seat)
        return info
