"""Vectorised single-learner environments over the batched engine.

:class:`LearnerBatch` seats one learner in each of N matches of a
:class:`hgin_env.batch.BatchGame` (any format) against opponents that act on whole batches
(``opponent.act(obs[k, D], masks[k, 108]) -> actions[k]``, D the size of the format's
layout, see :mod:`agents.batched`),
and plays the opponents' moves inside ``step`` until the learner must act again in every
match, as :class:`hgin_env.envs.single_agent.SingleAgentEnv` does for one match. Each match draws
the learner's seat and its opponent (by weight) from the batch's seeded generator, so one
seed fixes everything. An opponent may be the learner itself (a live policy object that
the trainer keeps up to date): then the learner plays every seat. In a partnership the
learner's partner is the learner too unless ``partner`` names an agent for it.

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
from .core import BatchGame, StepResult


def seat_summary(fin: dict, seat: int) -> dict:
    """A finished match's summary (``StepResult.finished[i]``) from ``seat``'s side: THE
    episode summary (:func:`hgin_env.summary.episode_summary`, what the AEC env's
    :func:`~hgin_env.summary.match_summary` gives for that seat) from the engine's counts:
    the seat's sheet row (its team's in a partnership) against the others, the hands the
    seat itself played."""
    row = seat % 2 if fin["format"] == "partnership" else seat
    out = episode_summary(
        seat=seat, row=row, winner=fin["match_winner"], truncated=fin["truncated"], columns=fin["columns"],
        columns_won=fin["columns_won"], hands=fin["seat_hands"][seat], dead_hands=fin["seat_dead_hands"][seat],
        hand_kinds=fin["hand_kinds"][seat], opponent_hand_kinds=fin["opponent_hand_kinds"][seat],
        points=fin["points"][seat], opponent_points=fin["opponent_points"][seat], match_hands=fin["hands"])
    if fin["format"] == "partnership":
        out["team_points"] = fin["team_points"][row]
        out["opponent_team_points"] = fin["team_points"][1 - row]
        out["rounds"] = fin["rounds"]
    return out


class LearnerBatch:
    """N matches, one learner seat each, opponents played inside ``step``.

    ``reward`` is the engine's reward mode (``"match"``, ``"columns"``, ``"points"``);
    with a dense mode ``match_bonus`` adds ±bonus to the learner when a match is won or
    lost (the engine pays both, through :func:`hgin_env.rewards.step_rewards`, as the AEC
    environment does). ``shaping=w > 0`` adds the learner's
    potential-based deadwood shaping (:class:`hgin_env.rewards.PotentialShaping`, one slot
    per match, the same terms as ``raw_env(shaping=w, shaping_gamma=γ)``); set
    ``shaping_gamma`` to the learner's discount.

    Every format (``rules``): the learner's seat is drawn among the match's seats; the
    opponent drawn for the match plays every other seat (both opponents in three-hand, the
    other team in a partnership), like ``SingleAgentEnv``. In a partnership the learner's
    partner (seat + 2 mod 4) is the learner too by default (``partner=None``: the learner
    acts at both seats of its team, in one trajectory per match, on the team's shared
    reward), or ``partner`` (a batched agent, e.g. ``"expert"``'s, or the live policy)
    plays it.

    ``single_hand=True`` (the duel): every episode is one hand (``BatchGame(single_hand=True)``,
    OpenSpiel's game: ``train.ppo --episode hand``), won by the hand's winner.
    """

    def __init__(self, n: int, opponents: Sequence[Any], weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "match",
                 match_bonus: float = 0.0, seed: int | None = None, names: Sequence[str] | None = None,
                 shaping: float = 0.0, shaping_gamma: float = 1.0, shaping_potential: str = "deadwood",
                 partner: Any | None = None, single_hand: bool = False, compiled_opponents: bool = True):
        self.n = n
        #: Play the opponents' passes in one compiled call where the pool allows it
        #: (:meth:`_compiled_loop`); False: always the Python loop (the tests compare both).
        self.compiled_opponents = compiled_opponents
        self.seed_value = seed
        self.reward_mode = reward
        self.match_bonus = match_bonus
        # The engine pays the reward mode and the match bonus (hgin_env.rewards.step_rewards).
        self.batch = BatchGame(n, rules=rules, seed=seed, reward=reward, match_bonus=match_bonus,
                               single_hand=single_hand)
        self.rules = self.batch.rules
        self.num_seats = self.rules.num_players
        if partner is not None and (self.rules.format != "partnership" or not hasattr(partner, "act")):
            raise ValueError(f"partner must be a batched agent (act(observations, masks) -> actions), and only "
                             f"format='partnership' has partners (format={self.rules.format!r})")
        #: The partner's agent (partnership), None: the learner plays its partner's seat too.
        self.partner = partner
        self.shaping = PotentialShaping(ObservationLayout.for_rules(self.rules), shaping, shaping_gamma,
                                        potential=shaping_potential, num_players=n) if shaping else None
        self.rng = np.random.default_rng(None if seed is None else [seed, 1])
        self.set_opponents(opponents, weights, names)
        self.seat = self.rng.integers(self.num_seats, size=n)
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
        self._loop: Any = None  # the compiled loop of this pool, built at its first use
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
        self.seat = self.rng.integers(self.num_seats, size=self.n)
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

    def step(self, actions: np.ndarray, allow_no_move: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, dict]]:
        """Apply the learners' actions and the opponents' replies.

        Returns (rewards float32[N], terminated bool[N], truncated bool[N], finished) where
        ``finished`` maps each match that ended to its summary from the learner's side
        (``episode_summary``, as :func:`hgin_env.summary.match_summary` gives it,
        ``opponent``, and ``episode`` = return, length).

        ``allow_no_move=True`` lets a learner wait: its match stays as it is at
        ``NO_MOVE`` (-1), with no step counted and no shaping term (RLlib's next-step
        autoreset spends one step on a finished match's reset, ``train.rllib.env``).
        """
        self._start()
        # Checked before anything counts: a refused step changes nothing (not even lengths).
        actions = as_actions(actions, self.n, self.batch.legal_action_masks(), allow_no_move=allow_no_move)
        moved = actions >= 0
        self.episode_length += moved
        if moved.any():
            self._apply(actions)
        self._play_opponents()
        self._shape(None if moved.all() else np.flatnonzero(moved))
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
        self._account(self.batch.step(actions, checked=True))

    def _account(self, result: StepResult) -> None:
        """The learners' share of a step: rewards at their seats, the matches that ended."""
        rewards = result.rewards[np.arange(self.n), self.seat]
        # Games where a match ended get their reward on the old seat before reseating.
        self._pending_rewards += rewards
        self.episode_return += rewards
        for i, fin in result.finished.items():
            self._finish(i, fin)

    def _finish(self, i: int, fin: dict) -> None:
        me = int(self.seat[i])
        if self.episode_length[i] == 0:
            # A match that ended before the learner's first decision in it (a tiny target,
            # a three-hand learner sitting out): no episode of the learner's; its rewards
            # are dropped and the next match starts, as SingleAgentEnv deals another.
            self._pending_rewards[i] -= self.episode_return[i]
            self.episode_return[i] = 0.0
            self.seat[i] = self.rng.integers(self.num_seats)
            self.opponent_index[i] = self._draw_opponents(1)[0]
            return
        if self.shaping is not None:  # Φ = 0 at the end: pay −Φ(last) (module rewards)
            end = self.shaping.at_end(i)
            self._pending_rewards[i] += end
            self.episode_return[i] += end
        summary = seat_summary(fin, me)
        k = int(self.opponent_index[i])
        self._pending_done[i] = {
            "episode_summary": summary, "opponent_spec": self.names[k], "opponent_index": k,
            "learner": f"player_{me}", "seed": fin["seed"],
            "episode": {"r": float(self.episode_return[i]), "l": int(self.episode_length[i])},
        }
        self.episode_return[i] = 0.0
        self.episode_length[i] = 0
        # The next match (already dealt by the engine): a new seat and opponent.
        self.seat[i] = self.rng.integers(self.num_seats)
        self.opponent_index[i] = self._draw_opponents(1)[0]

    def _shape(self, rows: np.ndarray | None = None) -> None:
        """Every learner (of ``rows``, default all) is about to act: pay each its shaping
        term γΦ(o) − Φ(o_prev). A learner that waited is not paid again for the same state."""
        if self.shaping is None:
            return
        rows = np.arange(self.n) if rows is None else rows
        terms = self.shaping.at_decisions(rows, self.batch.observations()[rows])
        self._pending_rewards[rows] += terms.astype(np.float32)
        self.episode_return[rows] += terms

    def learner_acts(self) -> np.ndarray:
        """bool [N]: the learner acts in the match now (at its seat, or at its partner's
        when the learner plays both)."""
        seat = self.batch.current_seat
        mine = seat == self.seat
        if self.rules.format == "partnership" and self.partner is None:
            mine |= seat == (self.seat + 2) % 4
        return mine

    def _compiled_loop(self) -> Any:
        """The compiled opponent loop (``agents.opponent_loop``) for this pool, or None: it
        needs the compiled engine and a compiled form (``compiled_form()``) of every
        opponent and of the partner agent, reading this format's observations. The loop
        comes from the agents' forms: the environment imports no agent."""
        if not self.compiled_opponents or self.batch.engine != "numba":
            return None
        agents = ([self.partner] if self.partner is not None else []) + list(self.opponents)
        key = [id(a) for a in agents]
        if self._loop is None or self._loop[0] != key:
            forms = [getattr(a, "compiled_form", lambda: None)() for a in agents]
            usable = all(f is not None and type(f) is type(forms[0]) and f.size == self.batch.layout.size
                         for f in forms)
            loop = forms[0].make_loop(forms, self.n, self.batch.table_range.size, self.partner is not None,
                                      self.rules.format == "partnership" and self.partner is None) if usable else None
            self._loop = (key, loop)
        return self._loop[1]

    def _play_opponents(self) -> None:
        """Let the opponents (and a partner agent) act until every match waits for its learner:
        in one compiled call per hand that ends where the pool has a compiled form
        (:meth:`_compiled_loop`), else, or from a pass the kernel leaves to Python, here
        pass by pass. Both make the same moves, draws and results."""
        loop = self._compiled_loop()
        while loop is not None:
            status, played, ended = loop.run(self.batch, self.seat, self.opponent_index)
            if played:  # the hands that ended are Python's: settle, sheets, deals, summaries
                self._account(self.batch.close_step(ended, loop.table_actions))
            if status == loop.WAITING:
                return
            if status == loop.TO_PYTHON:
                break
        batch = self.batch
        partnership = self.rules.format == "partnership"
        while True:
            rows = np.flatnonzero(~self.learner_acts())
            if not rows.size:
                return
            # Only the waiting matches' rows: after the first pass they are few (matches
            # whose learner sits a hand out, or waits for the other table), for many passes.
            obs, masks = batch.observations_of(rows)
            actions = np.full(self.n, -1, dtype=np.int64)
            todo = np.ones(rows.size, dtype=bool)
            groups: list[tuple[np.ndarray, Any]] = []
            if partnership and self.partner is not None:
                at_partner = batch.current_seat[rows] == (self.seat[rows] + 2) % 4
                groups.append((at_partner, self.partner))
                todo &= ~at_partner
            index = self.opponent_index[rows]
            groups += [(todo & (index == k), opponent) for k, opponent in enumerate(self.opponents)]
            jobs = [(np.flatnonzero(sel), agent) for sel, agent in groups]
            jobs = [(idx, agent) for idx, agent in jobs if idx.size]
            chosen = act_together([(agent, obs[idx], masks[idx]) for idx, agent in jobs])
            for (idx, _), moves in zip(jobs, chosen, strict=True):
                # Checked as the learner's are (an int64 buffer would truncate floats).
                actions[rows[idx]] = as_actions(moves, idx.size, masks[idx])
            self._apply(actions)


def act_together(jobs: Sequence[tuple[Any, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Each ``(agent, observations, masks)`` job's moves, in the jobs' order. Agents whose
    class gives the same ``act_together`` function (``agents.batched.BatchedPolicy``'s: the
    policies of one architecture in one stacked torch forward) are asked once for all their
    jobs; any other agent acts alone (``agent.act``). Each agent draws from its own
    generator, so the order in which the agents are asked changes no move."""
    out: list[Any] = [None] * len(jobs)
    together: dict[Any, list[int]] = {}
    for i, (agent, obs, masks) in enumerate(jobs):
        method = getattr(agent, "act_together", None)
        if method is None:
            out[i] = agent.act(obs, masks)
        else:
            together.setdefault(method, []).append(i)
    for method, members in together.items():
        for i, moves in zip(members, method([jobs[i] for i in members]), strict=True):
            out[i] = moves
    return out


class HollywoodVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium ``VectorEnv`` over :class:`LearnerBatch` (same-step autoreset), any format
    (observations in ``ObservationLayout.for_rules(rules)``; ``partner`` as there).

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
                 shaping_potential: str = "deadwood", partner: Any | None = None):
        # What a reseeding reset() builds the batch with again.
        self._batch_kwargs = {"opponents": opponents, "weights": weights, "rules": rules, "reward": reward,
                              "match_bonus": match_bonus, "shaping": shaping, "shaping_gamma": shaping_gamma,
                              "shaping_potential": shaping_potential, "partner": partner}
        self.core = LearnerBatch(num_envs, seed=seed, **self._batch_kwargs)
        self.num_envs = num_envs
        low, high = observation_bounds(self.core.rules.columns, self.core.rules.format)
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
