"""The batched engine as the vector env of an RLlib env runner (new API stack).

Each ``SingleAgentEnvRunner`` steps one :class:`RLlibBatchedEnv`: N matches of a
:class:`hgin_env.batch.BatchGame` (``num_envs_per_env_runner``), the learner at one seat
of each, the opponents acting inside ``step`` on whole batches (the machinery of
:class:`train.envs.BatchedVecEnv`, which this wraps: opponent specs, PFSP weights, the
saved deal stream; the privileged columns come from its engine). RLlib builds it through its
``gym_env_vectorize_mode="vector_entry_point"`` hook: the env creator returns this
``gymnasium.vector.VectorEnv`` itself, so no row is ever stepped on its own.

Two things differ from :class:`hgin_env.batch.vector.HollywoodVectorEnv` (same-step
autoreset) because RLlib's runner expects Gymnasium's *next-step* autoreset: the step that
ends a match returns the learner's last observation of it (with the reward and
``terminated``), and the next step returns the new match's first observation for that
row while its action is ignored (the row waits: ``LearnerBatch.step(allow_no_move=True)``).
``train.rllib.ppo`` samples it with :class:`train.rllib.runner.BatchedEnvRunner` instead,
which steps :meth:`RLlibBatchedEnv.step_batch` (same-step autoreset, every row acting at
every step); the next-step API is what RLlib's own runner, and any other RLlib user, gets.

The observation is a dict: ``observations`` (the player's view), ``action_mask`` (float
0/1, read by the module's masking) and, with ``privileged=True``, ``privileged`` (the
hidden facts of :meth:`hgin_env.batch.BatchGame.privileged_observations`). The
privileged columns therefore reach the training batch (the critic reads them,
:class:`agents.nets.rllib_module.CardRLModule`) but never the actor's input.

Opponents are agent specs as for ``train.ppo`` (``random``, ``simple``, ``expert``,
``ppo:PATH``) plus ``self`` (the env runner's own module, sampled: :class:`LiveModule`)
and league snapshots whose weights arrive through Ray (:meth:`RLlibBatchedEnv.set_league`,
built as :class:`CardNetAgent`), so a multi-node cluster needs no shared file system.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

from agents.batched import BatchedPolicy
from agents.nets.rllib_module import NET_KEYS, PRIVILEGED_KEY, build_net  # noqa: F401  (NET_KEYS: old imports)
from hgin_env.actions import NO_MOVE, NUM_ACTIONS
from hgin_env.envs.rllib import MASK_KEY, OBS_KEY, SUMMARY_KEY
from hgin_env.observation import ObservationLayout, observation_bounds
from hgin_env.rules import get_rules

#: The env's name in RLlib's registry (``register``).
ENV_NAME = "hgin_batched"


class CardNetAgent(BatchedPolicy):
    """A :class:`agents.nets.card_net.CardNet` as a batched agent: one torch call per batch,
    sampling its masked policy (league snapshots sample, as ``train.envs`` has them)."""

    name = "card_net"

    def __init__(self, net: Any, deterministic: bool = False, seed: int | None = None):
        super().__init__(model=None, deterministic=deterministic, seed=seed)
        self.net = net

    def _net(self) -> Any:
        return self.net

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        net = self._net()
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
            logits = net.logits(obs, torch.as_tensor(np.asarray(masks, dtype=bool)))
            return torch.softmax(logits.double(), dim=-1).cpu().numpy()


class LiveModule(CardNetAgent):
    """``self``: the env runner's current module (its weights are synced from the learner
    every iteration), sampled. ``source`` returns the module; it is set when the runner
    has built it (:func:`attach_to_runner`)."""

    name = "self"

    def __init__(self, seed: int | None = None):
        super().__init__(net=None, seed=seed)
        self.source: Callable[[], Any] | None = None

    def _net(self) -> Any:
        module = self.source() if self.source is not None else None
        if module is None:
            raise RuntimeError("the 'self' opponent has no module yet (attach_to_runner)")
        return module.net


class RLlibBatchedEnv(gymnasium.vector.VectorEnv):
    """N matches of the batched engine as one RLlib vector env (see the module docstring).

    ``config`` (RLlib's ``env_config`` plus ``num_envs``): ``rules``, ``reward``,
    ``match_bonus``, ``shaping``, ``gamma`` (the shaping discount), ``shaping_potential``,
    ``opponents`` (specs), ``weights``, ``privileged`` (bool), ``partner``, ``seed``,
    ``net_config`` (the module's ``model_config``, to build snapshots).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, config: dict):
        self.config = dict(config)
        self.num_envs = int(self.config["num_envs"])
        self.rules = get_rules(self.config.get("rules"))
        self.layout = ObservationLayout.for_rules(self.rules)
        self.privileged = bool(self.config.get("privileged", False))
        low, high = observation_bounds(self.rules.columns, self.rules.format)
        spaces = {OBS_KEY: gymnasium.spaces.Box(low, high, dtype=np.float32),
                  MASK_KEY: gymnasium.spaces.Box(0.0, 1.0, shape=(NUM_ACTIONS,), dtype=np.float32)}
        if self.privileged:
            from hgin_env.batch import privileged_size

            spaces[PRIVILEGED_KEY] = gymnasium.spaces.Box(0.0, 1.0, shape=(privileged_size(self.rules.format),),
                                                          dtype=np.float32)
        self.single_observation_space = gymnasium.spaces.Dict(spaces)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.live = LiveModule()
        self.worker_index = 0
        self._build(0)

    def _build(self, worker_index: int) -> None:
        """The engine for env runner ``worker_index``: each runner deals its own stream."""
        from train.envs import BatchedVecEnv

        cfg = self.config
        seed = int(cfg.get("seed", 0)) + 7919 * worker_index
        self.worker_index = worker_index
        self.live.reset(seed * 1000 + 555)
        self.vec = BatchedVecEnv(self.num_envs, list(cfg.get("opponents", ["random"])), cfg.get("weights"),
                                 rules=self.rules, reward=cfg.get("reward", "points"),
                                 match_bonus=float(cfg.get("match_bonus", 0.0)), seed=seed,
                                 shaping=float(cfg.get("shaping", 0.0)), shaping_gamma=float(cfg.get("gamma", 1.0)),
                                 shaping_potential=cfg.get("shaping_potential", "deadwood"),
                                 privileged=False, partner_spec=cfg.get("partner") or None,
                                 agents={"self": self.live})
        self.core = self.vec.core
        # Rows whose match ended on the last step: this step shows their new match.
        self._waiting = np.zeros(self.num_envs, dtype=bool)

    # ------------------------------------------------------------------ runner hooks
    def attach_to_runner(self, env_runner: Any) -> None:
        """Called by the callbacks' ``on_environment_created``: the runner's own deal
        stream (seeded by its worker index) and its module as the ``self`` opponent."""
        index = int(getattr(env_runner, "worker_index", 0) or 0)
        if index != self.worker_index:
            self._build(index)
        self.live.source = lambda: getattr(env_runner, "module", None)

    def set_league(self, specs: list[str], weights: list[float], states: dict[str, dict] | None = None) -> None:
        """The opponent pool and its PFSP weights (new matches draw from them); ``states``
        holds the weights of snapshot specs (CardNet state dicts), built once per runner."""
        agents = {}
        for spec, state in (states or {}).items():
            if spec in specs and spec not in self.vec._cache:
                agents[spec] = CardNetAgent(build_net(self.config["net_config"], state),
                                            seed=self.worker_index * 1000 + len(self.vec._cache))
        self.vec.set_opponent_specs(specs, weights, agents)

    def missing_snapshots(self, specs: list[str]) -> list[str]:
        """Specs not yet built here (a restarted runner has none of the league's)."""
        return [s for s in specs if s not in self.vec._cache and s.startswith("snapshot:")]

    def generator_state(self) -> dict:
        return self.vec.generator_state()

    def continue_from(self, state: dict) -> None:
        """Deal on from a checkpoint's generator state (``--resume``)."""
        self.vec.continue_from(state)
        self._waiting[:] = False

    # ------------------------------------------------------------------ VectorEnv API
    def _observations(self) -> dict[str, np.ndarray]:
        out = {OBS_KEY: self.core.observations().copy(),
               MASK_KEY: self.core.action_masks().astype(np.float32)}
        if self.privileged:
            out[PRIVILEGED_KEY] = self.core.privileged_observations().astype(np.float32)
        return out

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """The matches as they stand. ``seed`` is not used: the engine is seeded from
        ``env_config`` and the runner's index, and RLlib resets with its seed after
        ``--resume`` has restored the deal stream, which must not be dealt again."""
        self._waiting[:] = False
        return self._observations(), {}

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.int64).copy()
        actions[self._waiting] = NO_MOVE  # RLlib's action for a reset row is not a move
        last = self._observations()
        rewards, terminated, truncated, finished = self.core.step(actions, allow_no_move=True)
        obs = self._observations()
        rewards = rewards.astype(np.float32)
        infos: dict[str, Any] = {}
        done = np.zeros(self.num_envs, dtype=bool)
        if finished:
            rows = np.fromiter(finished, dtype=np.int64)
            done[rows] = True
            for key in obs:
                obs[key][rows] = last[key][rows]  # the episode's last observation (next-step autoreset)
            for key in (SUMMARY_KEY, "opponent_spec"):
                values = np.full(self.num_envs, None, dtype=object)
                for i, info in finished.items():
                    values[i] = info[key]
                infos[key] = values
                infos["_" + key] = done.copy()
        rewards[self._waiting] = 0.0
        terminated[self._waiting] = False
        truncated[self._waiting] = False
        self._waiting = done
        return obs, rewards, terminated, truncated, infos

    def step_batch(self, actions: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict[int, dict]]:
        """One step of every row with *same-step* autoreset, for
        :class:`train.rllib.runner.BatchedEnvRunner`: returns (observations, rewards,
        terminated, truncated, finished), where a finished row already shows its next match
        and ``finished`` maps it to its info (``episode_summary``, ``opponent_spec``...)."""
        self._waiting[:] = False
        rewards, terminated, truncated, finished = self.core.step(actions)
        return self._observations(), rewards.astype(np.float32), terminated, truncated, finished

    def close(self, **kwargs: Any) -> None:
        return None


def make_env(config: dict) -> RLlibBatchedEnv:
    """RLlib's env creator (``config`` is its ``EnvContext`` with ``num_envs`` added)."""
    return RLlibBatchedEnv(dict(config))


def register() -> str:
    """Register the env with Ray's registry (on the driver; RLlib ships it to the runners)."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    return ENV_NAME
