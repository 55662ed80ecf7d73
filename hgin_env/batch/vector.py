"""Vectorised single-learner environments over the batched engine.

:class:`LearnerBatch` seats one learner in each of N matches of a
:class:`hgin_env.batch.BatchGame` against opponents that act on whole batches
(``opponent.act(obs[k, 394], masks[k, 108]) -> actions[k]``, see :mod:`agents.batched`),
and plays the opponents' moves inside ``step`` until the learner must act again in every
match, as :class:`hgin_env.envs.single_agent.SingleAgentEnv` does for one match. Each match draws
the learner's seat and its opponent (by weight) from the batch's seeded generator, so one
seed fixes everything. An opponent may be the learner itself (a live policy object that
the trainer keeps up to date): then the learner plays both seats.

:class:`HollywoodVectorEnv` is the Gymnasium ``VectorEnv`` face of it (same-step
autoreset: a finished match's last learner observation is in ``infos["final_obs"]``);
``train.envs.BatchedVecEnv`` is the Stable-Baselines3 ``VecEnv`` face, with
``action_masks()`` for sb3-contrib's MaskablePPO. No RL framework is imported here
beyond Gymnasium's spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..actions import NUM_ACTIONS, as_actions
from ..observation import ObservationLayout, observation_bounds
from ..rewards import PotentialShaping
from ..rules import Rules
from ..summary import episode_summary
from .core import BatchGame


class LearnerBatch:
    """N matches, one learner seat each, opponents played inside ``step``.

    ``reward`` is the engine's reward mode (``"match"``, ``"columns"``, ``"points"``);
    with a dense mode ``match_bonus`` adds ±bonus to the learner when a match is won or
    lost (the engine pays both, through :func:`hgin_env.rewards.step_rewards`, as the AEC
    environment does). ``shaping=w > 0`` adds the learner's
    potential-based deadwood shaping (:class:`hgin_env.rewards.PotentialShaping`, one slot
    per match, the same terms as ``raw_env(shaping=w, shaping_gamma=γ)``); set
    ``shaping_gamma`` to the learner's discount.
    """

    def __init__(self, n: int, opponents: Sequence[Any], weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "match",
                 match_bonus: float = 0.0, seed: int | None = None, names: Sequence[str] | None = None,
                 shaping: float = 0.0, shaping_gamma: float = 1.0, shaping_potential: str = "deadwood"):
        self.n = n
        self.seed_value = seed
        self.reward_mode = reward
        self.match_bonus = match_bonus
        # The engine pays the reward mode and the match bonus (hgin_env.rewards.step_rewards).
        self.batch = BatchGame(n, rules=rules, seed=seed, reward=reward, match_bonus=match_bonus)
        self.rules = self.batch.rules
        self.shaping = PotentialShaping(ObservationLayout.for_rules(self.rules), shaping, shaping_gamma,
                                        potential=shaping_potential, num_players=n) if shaping else None
        self.rng = np.random.default_rng(None if seed is None else [seed, 1])
        self.set_opponents(opponents, weights, names)
        self.seat = self.rng.integers(2, size=n)
        self.opponent_index = self._draw_opponents(n)
        self.episode_return = np.zeros(n, dtype=np.float64)
        self.episode_length = np.zeros(n, dtype=np.int64)
        # Rewards from the opponents' moves before the first learner move go to its first step.
        self._pending_rewards = np.zeros(n, dtype=np.float32)
        self._pending_done: dict[int, dict] = {}
        self._started = False  # the opponents' first moves wait for the first query (a live
        # policy opponent gets its model after the environment is built)

    def _start(self) -> None:
        if not self._started:
            self._started = True
            self._play_opponents()
            self._shape()

    # ------------------------------------------------------------------ opponents
    def set_opponents(self, opponents: Sequence[Any], weights: Sequence[float] | None = None,
                      names: Sequence[str] | None = None) -> None:
        """Replace the opponent pool (takes effect as new matches start)."""
        opponents = list(opponents)
        if not opponents or not all(hasattr(o, "act") for o in opponents):
            raise ValueError("opponents must have act(observations, masks) -> actions")
        w = np.ones(len(opponents)) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (len(opponents),) or (w < 0).any() or w.sum() <= 0:
            raise ValueError("opponent weights must be non-negative, one per opponent")
        old_names = getattr(self, "names", None)
        self.opponents = opponents
        self.weights = w / w.sum()
        self.names = list(names) if names is not None else [getattr(o, "name", str(i))
                                                              for i, o in enumerate(opponents)]
        if hasattr(self, "opponent_index"):
            # Matches under way keep their opponent where it is still in the pool (found by
            # name: a league drops old snapshots, which moves the others); the rest draw anew.
            position = {name: k for k, name in enumerate(self.names)}
            old = [position.get(name, -1) for name in old_names]
            index = np.array(old, dtype=np.int64)[self.opponent_index]
            gone = np.flatnonzero(index < 0)
            if gone.size:
                index[gone] = self._draw_opponents(gone.size)
            self.opponent_index = index

    def _draw_opponents(self, k: int) -> np.ndarray:
        return self.rng.choice(len(self.opponents), size=k, p=self.weights)

    # ------------------------------------------------------------------ resuming
    def generator_state(self) -> dict:
        """The state of the generators that deal matches and draw seats and opponents
        (JSON-serialisable), to be saved beside a training checkpoint."""
        return {"batch": self.batch.rng.bit_generator.state, "learner": self.rng.bit_generator.state}

    def continue_from(self, state: dict) -> None:
        """Restore :meth:`generator_state` and start fresh matches from it: the deal stream
        continues where it was saved instead of dealing the run's first matches again (the
        matches running when it was saved are not in a checkpoint; they are not replayed)."""
        self.batch.rng.bit_generator.state = state["batch"]
        self.rng.bit_generator.state = state["learner"]
        self.batch.restart_all()
        self.seat = self.rng.integers(2, size=self.n)
        self.opponent_index = self._draw_opponents(self.n)
        self.episode_return[:] = 0.0
        self.episode_length[:] = 0
        self._pending_rewards[:] = 0.0
        self._pending_done = {}
        if self.shaping is not None:
            self.shaping.reset()
        self._started = False

    # ------------------------------------------------------------------ stepping
    def observations(self) -> np.ndarray:
        """The learners' observations (every match waits for its learner)."""
        self._start()
        return self.batch.observations()

    def action_masks(self) -> np.ndarray:
        self._start()
        return self.batch.legal_action_masks()

    def privileged_observations(self) -> np.ndarray:
        """What each learner cannot see (:meth:`hgin_env.batch.BatchGame.privileged_observations`),
        for a privileged training critic."""
        self._start()
        return self.batch.privileged_observations()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, dict]]:
        """Apply the learners' actions and the opponents' replies.

        Returns (rewards float32[N], terminated bool[N], truncated bool[N], finished) where
        ``finished`` maps each match that ended to its summary from the learner's side
        (``episode_summary``, as :func:`hgin_env.summary.match_summary` gives it,
        ``opponent``, and ``episode`` = return, length).
        """
        self._start()
        # Checked before anything counts: a refused step changes nothing (not even lengths).
        actions = as_actions(actions, self.n, self.batch.legal_action_masks())
        self.episode_length += 1
        self._apply(actions)
        self._play_opponents()
        self._shape()
        rewards = self._pending_rewards.copy()
        finished = self._pending_done
        self._pending_rewards[:] = 0.0
        self._pending_done = {}
        terminated = np.zeros(self.n, dtype=bool)
        truncated = np.zeros(self.n, dtype=bool)
        for i, info in finished.items():
            truncated[i] = info["episode_summary"]["truncated"]
            terminated[i] = not truncated[i]
        return rewards, terminated, truncated, finished

    def _apply(self, actions: np.ndarray) -> None:
        """Step the engine with actions already checked here (learners' in ``step``, the
        opponents' in ``_play_opponents``): the engine trusts them."""
        result = self.batch.step(actions, checked=True)
        rewards = result.rewards[np.arange(self.n), self.seat]
        # Games where a match ended get their reward on the old seat before reseating.
        self._pending_rewards += rewards
        self.episode_return += rewards
        for i, fin in result.finished.items():
            self._finish(i, fin)

    def _finish(self, i: int, fin: dict) -> None:
        me = int(self.seat[i])
        if self.shaping is not None:  # Φ = 0 at the end: pay −Φ(last) (module rewards)
            end = self.shaping.at_end(i)
            self._pending_rewards[i] += end
            self.episode_return[i] += end
        winner = fin["match_winner"]
        summary = episode_summary(
            seat=me, row=me, winner=winner, truncated=fin["truncated"], columns=fin["columns"],
            columns_won=fin["columns_won"], hands=fin["hands"], dead_hands=fin["dead_hands"],
            hand_kinds=fin["hand_kinds"][me], opponent_hand_kinds=fin["hand_kinds"][1 - me],
            points=fin["points"][me], opponent_points=fin["points"][1 - me], match_hands=fin["hands"])
        k = int(self.opponent_index[i])
        self._pending_done[i] = {
            "episode_summary": summary, "opponent_spec": self.names[k], "opponent_index": k,
            "learner": f"player_{me}", "seed": fin["seed"],
            "episode": {"r": float(self.episode_return[i]), "l": int(self.episode_length[i])},
        }
        self.episode_return[i] = 0.0
        self.episode_length[i] = 0
        # The next match (already dealt by the engine): a new seat and opponent.
        self.seat[i] = self.rng.integers(2)
        self.opponent_index[i] = self._draw_opponents(1)[0]

    def _shape(self) -> None:
        """Every learner is about to act: pay each its shaping term γΦ(o) − Φ(o_prev)."""
        if self.shaping is None:
            return
        terms = self.shaping.at_decisions(np.arange(self.n), self.batch.observations())
        self._pending_rewards += terms.astype(np.float32)
        self.episode_return += terms

    def _play_opponents(self) -> None:
        """Let the opponents act until every match waits for its learner."""
        batch = self.batch
        while True:
            waiting = batch.current_player != self.seat
            if not waiting.any():
                return
            obs, masks = batch.observations(), batch.legal_action_masks()
            actions = np.full(self.n, -1, dtype=np.int64)
            for k, opponent in enumerate(self.opponents):
                idx = np.flatnonzero(waiting & (self.opponent_index == k))
                if idx.size:
                    # Checked as the learner's are (an int64 buffer would truncate floats).
                    actions[idx] = as_actions(opponent.act(obs[idx], masks[idx]), idx.size, masks[idx])
            self._apply(actions)


class HollywoodVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium ``VectorEnv`` over :class:`LearnerBatch` (same-step autoreset).

    ``infos`` holds ``action_mask`` (bool [N, 108]) every step, and for the matches that
    ended: ``final_obs``, ``episode_summary`` and ``opponent_spec`` (object arrays with
    ``_``-prefixed presence masks, Gymnasium's convention). The engine deals the next
    match at once, so ``final_obs`` is the learner's last observation before its final
    move (the terminal state itself is never observed by the learner; a match ends by a
    move, and only a ``max_hands`` truncation would bootstrap from it).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, opponents: Sequence[Any], weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "match", match_bonus: float = 0.0,
                 seed: int | None = None, shaping: float = 0.0, shaping_gamma: float = 1.0,
                 shaping_potential: str = "deadwood"):
        # What a reseeding reset() builds the batch with again.
        self._batch_kwargs = {"opponents": opponents, "weights": weights, "rules": rules, "reward": reward,
                              "match_bonus": match_bonus, "shaping": shaping, "shaping_gamma": shaping_gamma,
                             "shaping_potential": shaping_potential}
        self.core = LearnerBatch(num_envs, seed=seed, **self._batch_kwargs)
        self.num_envs = num_envs
        low, high = observation_bounds(self.core.rules.columns)
        self.single_observation_space = gymnasium.spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise RuntimeError(f"{call}() on a closed HollywoodVectorEnv; make a new one")

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._check_open("reset")
        if seed is not None:
            self.core = LearnerBatch(self.num_envs, seed=seed, **self._batch_kwargs)
        return self.core.observations().copy(), {"action_mask": self.core.action_masks().copy()}

    def step(self, actions):
        """One action per match (integer array of shape (num_envs,), each legal; anything
        else is refused before any match moves, see :func:`hgin_env.actions.as_actions`)."""
        self._check_open("step")
        last = self.core.observations().copy()
        rewards, terminated, truncated, finished = self.core.step(actions)
        infos: dict[str, Any] = {"action_mask": self.core.action_masks().copy()}
        if finished:
            present = np.zeros(self.num_envs, dtype=bool)
            present[list(finished)] = True
            for key in ("final_obs", "episode_summary", "opponent_spec"):
                values = np.full(self.num_envs, None, dtype=object)
                for i, info in finished.items():
                    values[i] = last[i] if key == "final_obs" else info[key]
                infos[key] = values
                infos["_" + key] = present
        return self.core.observations().copy(), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        return self.core.action_masks().copy()
