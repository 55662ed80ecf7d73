"""The rollout on both cores (``train.ppo --update-processes 2``, with the split update of
train/split_update.py): the batched environments in two parts, each sampled by its own
process at the same time, this one and the update's helper.

Why: with the update split, sampling is about two fifths of an iteration of the default
recipe, on one core: the policy's forward and the engine's step cost per call as much as
per row at 128 matches (docs/learning.md), and the helper sleeps meanwhile. Two parts of
64 matches, sampled at once, take about the time of one.

**The numbers.** A run of two parts deals two streams of matches (part k: ``n_envs / 2``
matches seeded :func:`train.rollout.worker_seed`, as a pipelined run's two rollout workers;
its deal state saved as theirs), and each part samples its actions with its own torch
generator (:class:`RolloutPart` carries its state), so a part's rollout is the same
whichever process samples it: the helper, or this process when there is none (a daemonic
process, a helper still starting). The rollout is synchronous, the policy's own, with the
values and bootstraps SB3's ``collect_rollouts`` computes, so the update is PPO's as before;
what changes from a one-part run is which matches are dealt.

**What differs from SB3's loop.** The steps reach the callbacks after the rollout is sampled
(:func:`train.rollout.replay`, as in the pipelined learner), so what a callback asks of
the environments mid-rollout (``set_opponent_specs``: a new snapshot, the league's weights)
takes effect from the next rollout, and a checkpoint saved mid-rollout deals on from the
rollout's start.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.vec_env import VecEnv

from train.envs import env_indices
from train.rollout import ROLLOUT_WORKERS_KEY, Rollout, large_array_shapes, sample, worker_seed


class RolloutPart:
    """One part's environments and where its sampling stands: the last observations, the
    episode starts and its torch generator's state. Pickled whole when it moves between
    this process and the helper."""

    def __init__(self, env: Any, seed: int):
        self.env = env
        self.observations: np.ndarray | None = None
        self.episode_starts = np.ones(env.num_envs, dtype=bool)
        self.generator = th.Generator().manual_seed(seed).get_state()

    def collect(self, policy: Any, n_steps: int, gamma: float, out: dict[str, np.ndarray] | None = None
                ) -> Rollout:
        """``n_steps`` steps sampled by ``policy`` (in evaluation mode meanwhile) with this
        part's generator as torch's global one (``out``: :func:`train.rollout.sample`'s)."""
        if self.observations is None:
            self.observations = self.env.reset()
        outside, training = th.get_rng_state(), policy.training
        th.set_rng_state(self.generator)
        policy.set_training_mode(False)
        try:
            rollout = sample(policy, self.env, self.observations, self.episode_starts, n_steps, gamma, out)
        finally:
            self.generator = th.get_rng_state()
            th.set_rng_state(outside)
            policy.set_training_mode(training)
        self.observations, self.episode_starts = rollout.last_observations.copy(), rollout.dones[-1]
        return rollout

    def __getstate__(self) -> dict:
        # The 'self' opponent plays the process's own policy: set again where the part lands.
        self.env.set_live_model(None)
        return self.__dict__.copy()


def split_parts(make_part: Any, n_envs: int, seed: int, parts: int = 2) -> list[RolloutPart]:
    """``parts`` parts of ``n_envs`` matches: ``make_part(n, seed)`` builds part k's
    environments of ``n_envs / parts`` matches from its seed (:func:`worker_seed`)."""
    if n_envs % parts:
        raise ValueError(f"{n_envs} matches do not split into {parts} equal parts")
    return [RolloutPart(make_part(n_envs // parts, worker_seed(seed, k)), worker_seed(seed, k))
            for k in range(parts)]


class SplitEnv(VecEnv):
    """The learner's view of a two-part run's environments (module docstring): part 0 in
    this process, part 1 here or, while the model learns, in the update's helper
    (``helper``: :class:`train.split_update.UpdateHelper`). ``env_method`` runs on both
    parts; ``generator_state`` is both parts' deal state (at the start of the rollout being
    replayed, while one is); ``set_live_model`` gives ``self`` opponents this process's
    model (the helper's part plays the helper's policy, on the same shared weights).

    Stepped as a ``VecEnv`` (both parts here, one after the other) outside learning;
    :class:`train.split_update.SplitUpdatePPO` samples it in whole rollouts."""

    def __init__(self, parts: list[RolloutPart]):
        if len(parts) != 2:
            raise ValueError(f"a split rollout has two parts, not {len(parts)}")
        self.parts = parts
        self.helper: Any = None
        #: Shared memory for part 1's large arrays while the helper samples it (made by
        #: ``collect``, handed to each new helper before its first rollout).
        self.transfer: dict[str, th.Tensor] | None = None
        self.replayed_generator_state: dict | None = None
        self._live_model: Any = None
        self._actions: np.ndarray | None = None
        first = parts[0].env
        self.render_mode = None
        super().__init__(sum(p.env.num_envs for p in parts), first.observation_space, first.action_space)

    # ------------------------------------------------------------------ the helper
    def attach(self, helper: Any) -> None:
        """Hand part 1 to the helper, which samples it from now on."""
        helper.request(("take_part", self.parts[1]))
        self.helper, self.transfer = helper, None  # a new helper: shared memory handed at its first rollout
        # This process's copy, stale from now on: playable again should the helper die before
        # handing the part back (pickling it cleared its 'self' opponents' model).
        self.parts[1].env.set_live_model(self._live_model)

    def detach(self) -> None:
        """Take part 1 back from the helper (before it closes)."""
        if self.helper is not None:
            helper, self.helper = self.helper, None
            self.parts[1] = helper.request(("give_part",))
            self.parts[1].env.set_live_model(self._live_model)

    def collect(self, policy: Any, n_steps: int, gamma: float) -> tuple[Rollout, Rollout]:
        """Both parts' rollouts: part 1's in the helper while part 0's is sampled here, or
        both here one after the other."""
        if self.helper is not None:
            shapes = large_array_shapes(self.parts[1].env, n_steps)
            if self.transfer is None or {k: tuple(v.shape) for k, v in self.transfer.items()} != shapes:
                self.transfer = {name: th.zeros(shape).share_memory_() for name, shape in shapes.items()}
                self.helper.request(("transfer", self.transfer))
            self.helper.send(("collect", n_steps, gamma))
            first = self.parts[0].collect(policy, n_steps, gamma)
            second = self.helper.receive()
            # Its large arrays came through shared memory (joined, copied, before the next rollout).
            for name, tensor in self.transfer.items():
                setattr(second, name, tensor.numpy())
            return first, second
        return tuple(part.collect(policy, n_steps, gamma) for part in self.parts)  # type: ignore[return-value]

    def _on_parts(self, name: str, *args, **kwargs) -> list:
        """``name(*args, **kwargs)`` on each part's environments, wherever they are."""
        results = [getattr(self.parts[0].env, name)(*args, **kwargs)]
        if self.helper is not None:
            results.append(self.helper.request(("call", name, args, kwargs)))
        else:
            results.append(getattr(self.parts[1].env, name)(*args, **kwargs))
        return results

    # ------------------------------------------------------------------ training hooks
    def set_opponent_specs(self, specs: list[str], weights: list[float] | None = None) -> None:
        self._on_parts("set_opponent_specs", list(specs), weights)

    def set_live_model(self, model: Any) -> None:
        self._live_model = model
        self.parts[0].env.set_live_model(model)
        if self.helper is None:
            self.parts[1].env.set_live_model(model)

    def generator_state(self) -> dict:
        if self.replayed_generator_state is not None:
            return self.replayed_generator_state
        return {ROLLOUT_WORKERS_KEY: self._on_parts("generator_state")}

    def continue_from(self, state: dict) -> None:
        """Each part deals on from its own saved state (``train.ppo`` checks the count)."""
        for part, saved in zip(self.parts, state[ROLLOUT_WORKERS_KEY], strict=True):
            if self.helper is not None and part is self.parts[1]:
                self.helper.request(("call", "continue_from", (saved,), {}))
            else:
                part.env.continue_from(saved)
            part.observations = None  # fresh matches: read again at the next rollout

    def action_masks(self) -> np.ndarray:
        return np.concatenate(self._on_parts("action_masks"))

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        return np.concatenate(self._on_parts("reset"))

    def step_async(self, actions: np.ndarray) -> None:
        if self.helper is not None:
            raise RuntimeError("the split environments are sampled in whole rollouts while the model learns")
        self._actions = np.asarray(actions)

    def step_wait(self):
        assert self._actions is not None, "step_async first"
        cut = self.parts[0].env.num_envs
        results = [part.env.step(actions) for part, actions in
                   zip(self.parts, (self._actions[:cut], self._actions[cut:]), strict=True)]
        self._actions = None
        for part in self.parts:
            part.observations = None  # stepped outside a rollout: read again at the next one
        observations, rewards, dones, infos = zip(*results, strict=True)
        return (np.concatenate(observations), np.concatenate(rewards), np.concatenate(dones),
                [*infos[0], *infos[1]])

    def close(self) -> None:
        for part in self.parts:
            part.env.close()

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        raise NotImplementedError("set_attr on the split environments: use env_method")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name == "action_masks":
            return list(self.action_masks()[self._indices(indices)])
        results = self._on_parts(method_name, *method_args, **method_kwargs)
        cut = self.parts[0].env.num_envs
        return [results[0] if i < cut else results[1] for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        return env_indices(self.num_envs, indices)

