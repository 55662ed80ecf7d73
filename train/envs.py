"""Training environments: the single-agent adapter with opponents built from agent specs,
and :class:`BatchedVecEnv`, the batched engine as one SB3 ``VecEnv`` (the default of
``train.ppo``).

Opponents are given as specs (``"simple"``, ``"expert"``, ``"ppo:runs/x/snapshots/s1.zip"``)
so that ``SubprocVecEnv`` workers build them locally: a self-play snapshot travels as a
path, not as a pickled torch model.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from agents.batched import BatchedPolicy
from agents.spec import make_agent, split_kind
from hgin_env.envs.single_agent import SingleAgentEnv
from hgin_env.observation import ObservationLayout
from hgin_env.rules import Rules, get_rules


class TrainingEnv(SingleAgentEnv):
    """``SingleAgentEnv`` + opponents by spec (+ the environment's optional match bonus).

    With ``reward="points"`` and ``match_bonus=b`` the learner gets hand points / 100 as
    they are scored and ±b when the match is won or lost (:func:`hgin_env.rewards.step_rewards`),
    so it learns hand play from a dense signal while the match outcome still counts.

    Every format (``rules``): an opponent spec's agent reads the format's observation
    layout and plays every seat but the learner's (the partner's too, unless
    ``partner_spec`` names an agent for it); a ``ppo:PATH`` spec trained for another layout
    is refused in one line (``agents.ppo.check_layout``).
    """

    def __init__(self, opponent_specs: Sequence[str], opponent_weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "points",
                 match_bonus: float = 0.0, episode: str = "match", seed: int = 0,
                 shaping: float = 0.0, shaping_gamma: float = 1.0, partner_spec: str | None = None,
                 shaping_potential: str = "deadwood"):
        self.opponent_specs: list[str] = []
        self._agent_cache: dict[str, object] = {}
        self._seed = seed
        self._rules = get_rules(rules)
        partner = None if partner_spec is None else self._build([partner_spec], offset=999)[0]
        super().__init__(opponent=self._build(opponent_specs), rules=rules, reward=reward,
                         episode=episode, opponent_weights=opponent_weights, shaping=shaping,
                         shaping_gamma=shaping_gamma, shaping_potential=shaping_potential,
                         partner=partner, match_bonus=match_bonus)  # type: ignore[arg-type]
        self.opponent_specs = list(opponent_specs)
        self.partner_spec = partner_spec
        self.match_bonus = match_bonus

    def _build(self, specs: Sequence[str], offset: int = 0) -> list:
        layout = ObservationLayout.for_rules(self._rules)
        out = []
        for i, spec in enumerate(specs):
            if spec not in self._agent_cache:
                # The duel's agents as before (columns); a format's read its layout.
                if split_kind(spec)[0] == "ppo":
                    kwargs: dict = {} if layout.format == "duel" else {"layout": layout}
                else:
                    kwargs = {"columns": layout.columns} if layout.format == "duel" else {"layout": layout}
                self._agent_cache[spec] = make_agent(spec, seed=self._seed * 1000 + offset + i, **kwargs)
            out.append(self._agent_cache[spec])
        return out

    def set_opponent_specs(self, specs: Sequence[str], weights: Sequence[float] | None = None) -> None:
        """Swap the opponent pool (called through ``VecEnv.env_method`` between rollouts)."""
        self.set_opponents(self._build(specs), weights)
        self.opponent_specs = list(specs)

    def step(self, action: int):
        obs, reward, terminated, truncated, info = super().step(action)
        if "episode_summary" in info:
            info["opponent_spec"] = self.opponent_specs[self.opponent_index] if self.opponent_specs else ""
        return obs, reward, terminated, truncated, info


def batched_opponent(spec: str, seed: int, columns: int | None = None,
                     layout: ObservationLayout | None = None) -> object:
    """A batched opponent from a spec: ``random``, ``simple``, ``expert`` (numpy over the
    batch), ``ppo:PATH`` (one torch call per batch, most likely move), ``snapshot:PATH``
    (the same, sampling its policy), ``self`` (the live learner, see :class:`LivePolicy`),
    or any other registered name (``search``...) row by row. It reads ``layout`` (any
    format's), or the duel layout of ``columns``."""
    from agents.spec import make_batched_agent

    if layout is None:
        layout = ObservationLayout(3 if columns is None else columns)
    if spec == "self":
        return LivePolicy(seed=seed)
    if spec.startswith("snapshot:"):
        # A frozen copy of the learner that samples its policy (league opponents: a
        # deterministic snapshot would be an easier, exploitable target than the policy).
        from agents.ppo import PPOAgent

        agent = PPOAgent.load(spec[len("snapshot:"):], seed=seed, layout=layout)
        return BatchedPolicy(agent.model, deterministic=False, seed=seed)
    return make_batched_agent(spec, seed=seed, layout=layout)


class LivePolicy(BatchedPolicy):
    """The learner as its own opponent (self-play on both seats): samples the current
    policy (:class:`agents.batched.BatchedPolicy`, not deterministic), whose model the
    trainer sets with ``BatchedVecEnv.set_live_model``."""

    name = "self"
    #: Not stacked with the snapshots (agents.policy_stack caches stacked weights; the
    #: learner's change every update): one forward of its own.
    act_together = None

    def __init__(self, seed: int | None = None):
        super().__init__(model=None, deterministic=False, seed=seed)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("self-play opponent has no model yet (call set_live_model)")
        return super().act(observations, masks)


class BatchedVecEnv(VecEnv):
    """Stable-Baselines3 ``VecEnv`` over the batched engine (:class:`hgin_env.batch.vector.LearnerBatch`).

    One process, N matches stepped by numpy; opponents (specs as in :class:`TrainingEnv`,
    plus ``self``) act on whole batches inside ``step_wait``. ``action_masks()`` (and
    ``env_method("action_masks")``) give the learners' legal actions as MaskablePPO reads
    them. Finished matches report ``episode_summary``, ``opponent_spec`` and SB3's
    ``episode`` (return, length) in their info, like ``Monitor(TrainingEnv)``.

    ``privileged=True`` appends :func:`hgin_env.batch.privileged_size` columns of hidden
    facts (the opponent's hand, the next stock card, the opponent's deadwood; in a
    partnership also the partner's and its opponent's hands and deadwoods) to every
    observation the learner's *training* batch holds, for a privileged critic
    (:class:`agents.nets.policy.CardAwarePolicy` with ``privileged=...``): the actor reads only the
    first ``ObservationLayout.size`` columns, so the saved policy plays from the ordinary
    observation. Opponents always get the ordinary observation.

    Every format (``rules``): the learner takes one seat, the opponent drawn for the match
    every other one; in a partnership the learner plays its partner's seat too, unless
    ``partner_spec`` names an agent for it (any spec above; ``self`` = the live policy,
    sampled, its moves not trained on).

    ``episode="hand"`` (the duel): one hand per episode, as ``TrainingEnv(episode="hand")``
    plays it (the batched engine's ``single_hand``).
    """

    def __init__(self, n_envs: int, opponent_specs: Sequence[str], opponent_weights: Sequence[float] | None = None,
                 rules: Rules | str | dict | None = None, reward: str = "points", match_bonus: float = 0.0,
                 seed: int = 0, shaping: float = 0.0, shaping_gamma: float = 1.0,
                 shaping_potential: str = "deadwood", privileged: bool = False, partner_spec: str | None = None,
                 agents: dict[str, object] | None = None, episode: str = "match"):
        from hgin_env.batch import privileged_size
        from hgin_env.batch.vector import LearnerBatch
        from hgin_env.observation import observation_bounds
        from hgin_env.rules import get_rules

        self.rules = get_rules(rules)
        self.layout = ObservationLayout.for_rules(self.rules)
        self._seed = seed
        # ``agents``: batched agents already built for some specs (an RLlib env runner's live
        # module as ``self``, frozen snapshots whose weights came through Ray, train.rllib.env).
        self._cache: dict[str, object] = dict(agents or {})
        self.opponent_specs = list(opponent_specs)
        self.partner_spec = partner_spec
        partner = None if partner_spec is None else self._build([partner_spec], offset=999)[0]
        self.core = LearnerBatch(n_envs, self._build(opponent_specs), opponent_weights, self.rules, reward,
                                 match_bonus, seed, names=self.opponent_specs, shaping=shaping,
                                 shaping_gamma=shaping_gamma, shaping_potential=shaping_potential,
                                 partner=partner, single_hand=episode == "hand")
        low, high = observation_bounds(self.rules.columns, self.rules.format)
        self.privileged = privileged
        if privileged:  # the privileged columns are 0/1 bits and deadwood fractions
            width = privileged_size(self.rules.format)
            low = np.concatenate([low, np.zeros(width, dtype=low.dtype)])
            high = np.concatenate([high, np.ones(width, dtype=high.dtype)])
        self.render_mode = None
        super().__init__(n_envs, gymnasium.spaces.Box(low, high, dtype=np.float32), gymnasium.spaces.Discrete(108))
        self._actions: np.ndarray | None = None

    def _build(self, specs: Sequence[str], offset: int = 0) -> list:
        out = []
        for i, spec in enumerate(specs):
            if spec not in self._cache:
                self._cache[spec] = batched_opponent(spec, seed=self._seed * 1000 + offset + i, layout=self.layout)
            out.append(self._cache[spec])
        # Forget opponents that left the pool (a league drops old snapshots: their models
        # would otherwise stay in memory for the whole run); the partner's agent stays.
        for spec in set(self._cache) - set(specs):
            if spec != "self" and spec != self.partner_spec:
                del self._cache[spec]
        return out

    def _learner_observations(self) -> np.ndarray:
        obs = self.core.observations()
        if not self.privileged:
            return obs.copy()
        return np.concatenate([obs, self.core.privileged_observations()], axis=1)

    # ------------------------------------------------------------------ training hooks
    def set_opponent_specs(self, specs: Sequence[str], weights: Sequence[float] | None = None,
                           agents: dict[str, object] | None = None) -> None:
        """Swap the opponent pool (self-play snapshots); new matches draw from it. ``agents``
        gives batched agents already built for some of the specs (as in the constructor)."""
        self._cache.update(agents or {})
        self.core.set_opponents(self._build(specs), weights, names=list(specs))
        self.opponent_specs = list(specs)

    def set_live_model(self, model: object) -> None:
        """Give ``self`` opponents the learner's model (called once before training)."""
        for agent in self._cache.values():
            if isinstance(agent, LivePolicy):
                agent.model = model

    def action_masks(self) -> np.ndarray:
        return self.core.action_masks().copy()

    def generator_state(self) -> dict:
        """Saved beside each checkpoint (``train.callbacks.Checkpoints``)."""
        return self.core.generator_state()

    def continue_from(self, state: dict) -> None:
        """``train.ppo --resume``: deal on from the checkpoint's generator state."""
        self.core.continue_from(state)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        return self._learner_observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        assert self._actions is not None, "step_async first"
        last = self._learner_observations()
        rewards, terminated, truncated, finished = self.core.step(self._actions)
        self._actions = None
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        for i, info in finished.items():
            info = dict(info)
            info["terminal_observation"] = last[i]
            info["TimeLimit.truncated"] = bool(truncated[i])
            infos[i] = info
        return self._learner_observations(), rewards, terminated | truncated, infos

    def close(self) -> None:
        return None

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name == "action_masks":
            return list(self.action_masks()[self._get_indices(indices)])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices) -> list[int]:
        return env_indices(self.num_envs, indices)


def env_indices(num_envs: int, indices) -> list[int]:
    """SB3's ``indices`` argument of a VecEnv method (None: every environment; an int; or a
    sequence) as a list."""
    if indices is None:
        return list(range(num_envs))
    if isinstance(indices, int):
        return [indices]
    return list(indices)
