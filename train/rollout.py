"""A rollout sampled apart from SB3's ``collect_rollouts``, in parts: what it holds, how
a part is sampled, how parts join, and how a joined rollout reaches SB3's callbacks and
rollout buffer. Shared by the pipelined learner (train/pipeline.py: parts sampled by
worker processes one update ahead) and the split learner (train/split_rollout.py: two
parts sampled at the same time, here and in the update's helper process).

A run sampled in K parts deals K streams of matches: part k owns ``n_envs / K`` of the
environments, seeded with :func:`worker_seed` (part 0 with the run's seed), and its deal
state is saved under :data:`ROLLOUT_WORKERS_KEY`, so a run resumes with the same K.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch as th

#: The key of a K-part run's deal state: one generator state per part.
ROLLOUT_WORKERS_KEY = "rollout_workers"


def worker_seed(seed: int, k: int) -> int:
    """The seed of part (rollout worker) ``k`` of a run seeded ``seed``: the run's own for
    part 0 (one part is the run as it always was), another stream of the seed for each other."""
    return seed if k == 0 else int(np.random.SeedSequence([seed, k]).generate_state(1)[0])


@dataclass
class Rollout:
    """``n_steps`` steps of ``n_envs`` environments, shaped as SB3's rollout buffer holds
    them, and what the callbacks are replayed."""

    observations: np.ndarray  # [n_steps, n_envs, obs]
    actions: np.ndarray  # [n_steps, n_envs]
    rewards: np.ndarray  # [n_steps, n_envs], without a truncated match's bootstrap
    episode_starts: np.ndarray  # [n_steps, n_envs]
    log_probs: np.ndarray  # [n_steps, n_envs]: the sampling (behaviour) policy's
    action_masks: np.ndarray  # [n_steps, n_envs, actions]
    dones: np.ndarray  # [n_steps, n_envs]
    infos: list[list[dict]]  # per step, per environment
    last_observations: np.ndarray  # after the last step (the bootstrap's)
    #: (step, env, terminal observation) of each match cut off by a time limit.
    truncations: list[tuple[int, int, np.ndarray]]
    #: The environments' deal state at the start of the rollout (None if they have none).
    generator_state: dict | None
    #: Sampled with the critic (:func:`sample` with ``gamma``): its values [n_steps, n_envs],
    #: of the last observations [n_envs], and each truncation's bootstrap (gamma x the
    #: terminal observation's value, as SB3 adds it to the reward).
    values: np.ndarray | None = None
    last_values: np.ndarray | None = None
    bootstraps: list[Any] | None = None


def join_rollouts(parts: list[Rollout]) -> Rollout:
    """The parts of one rollout as one rollout of all their environments, in the parts'
    order (part k's environments after part k-1's)."""
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + [p.actions.shape[1] for p in parts])

    def joined(name: str, axis: int = 1) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        return None if arrays[0] is None else np.concatenate(arrays, axis=axis)

    return Rollout(
        observations=joined("observations"), actions=joined("actions"), rewards=joined("rewards"),
        episode_starts=joined("episode_starts"), log_probs=joined("log_probs"),
        action_masks=joined("action_masks"), dones=joined("dones"),
        infos=[[info for p in parts for info in p.infos[t]] for t in range(len(parts[0].infos))],
        last_observations=joined("last_observations", axis=0),
        truncations=[(t, i + int(offset), obs) for p, offset in zip(parts, offsets, strict=False)
                     for t, i, obs in p.truncations],
        generator_state={ROLLOUT_WORKERS_KEY: [p.generator_state for p in parts]},
        values=joined("values"), last_values=joined("last_values", axis=0),
        bootstraps=None if parts[0].bootstraps is None else [b for p in parts for b in p.bootstraps])


def large_array_shapes(env: Any, n_steps: int) -> dict[str, tuple[int, ...]]:
    """The shapes of a rollout's two large arrays, which :func:`sample` may write into given
    ones (``out``): ``n_steps`` steps of ``env``'s observations and action masks."""
    return {"observations": (n_steps, env.num_envs, *env.observation_space.shape),
            "action_masks": (n_steps, env.num_envs, int(env.action_space.n))}


def sample(policy: Any, env: Any, observations: np.ndarray, episode_starts: np.ndarray, n_steps: int,
           gamma: float | None = None, out: dict[str, np.ndarray] | None = None) -> Rollout:
    """``n_steps`` steps of ``env`` from ``observations``, the actions sampled by ``policy``
    (masked, with torch's global generator) as SB3's ``collect_rollouts`` samples them. With
    ``gamma``, also the critic's values and each truncated match's bootstrap, computed as
    SB3 computes them (a synchronous rollout, the update's own values); without, the
    behaviour policy's log-probabilities alone (the pipelined learner scores the rollout
    itself). The rollout's ``last_observations`` are where the next one starts. ``out``: arrays
    to hold the large arrays (:func:`large_array_shapes`, float32), such as another
    process's shared memory, instead of new ones."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    n = env.num_envs
    generator_state = env.generator_state() if hasattr(env, "generator_state") else None
    shapes = large_array_shapes(env, n_steps)
    large = {name: np.zeros(shape, dtype=np.float32) if out is None or name not in out else out[name]
             for name, shape in shapes.items()}
    for name, array in large.items():
        if array.shape != shapes[name] or array.dtype != np.float32:
            raise ValueError(f"the rollout's {name} go into a {array.dtype} array of shape {array.shape}, "
                             f"not float32 of {shapes[name]}")
    stored, masks = large["observations"], large["action_masks"]
    actions = np.zeros((n_steps, n), dtype=np.int64)
    rewards = np.zeros((n_steps, n), dtype=np.float32)
    starts = np.zeros((n_steps, n), dtype=np.float32)
    log_probs = np.zeros((n_steps, n), dtype=np.float32)
    values = None if gamma is None else np.zeros((n_steps, n), dtype=np.float32)
    dones_all = np.zeros((n_steps, n), dtype=bool)
    infos_all: list[list[dict]] = []
    truncations, bootstraps = [], []
    # The batched engine's masks directly (SB3's helper asks for them row by row and stacks).
    masks_of = env.action_masks if hasattr(env, "action_masks") else lambda: get_action_masks(env)
    for t in range(n_steps):
        mask = masks_of()
        with th.no_grad():
            action, value, log_prob = policy(th.as_tensor(observations), action_masks=mask)
        action = action.numpy()
        stored[t], actions[t], starts[t], log_probs[t], masks[t] = \
            observations, action, episode_starts, log_prob.numpy(), mask
        if values is not None:
            values[t] = value.numpy().flatten()
        observations, rewards[t], dones, infos = env.step(action)
        dones_all[t] = dones
        infos_all.append(infos)
        for i in np.flatnonzero(dones):
            if infos[i].get("terminal_observation") is not None and infos[i].get("TimeLimit.truncated", False):
                terminal = np.asarray(infos[i]["terminal_observation"])
                truncations.append((t, int(i), terminal))
                if gamma is not None:  # SB3's bootstrap of a time limit (its issue #633), to the same bits
                    with th.no_grad():
                        bootstraps.append(gamma * policy.predict_values(policy.obs_to_tensor(terminal)[0])[0])
        episode_starts = dones
    last_values = None
    if gamma is not None:
        with th.no_grad():
            last_values = policy.predict_values(th.as_tensor(observations)).numpy().flatten()
    return Rollout(stored, actions, rewards, starts, log_probs, masks, dones_all, infos_all,
                   np.asarray(observations).copy(), truncations, generator_state, values, last_values,
                   None if gamma is None else bootstraps)


def replay(model: Any, rollout: Rollout, callback: Any) -> bool:
    """The rollout's steps to the callbacks, as ``collect_rollouts`` calls them
    (``num_timesteps``, ``infos``, ``dones``, ``rewards``, ``actions``, ``n_steps``), and to
    the model's episode-info buffer; False when a callback stops training. The environment's
    ``generator_state()`` is then the one at the rollout's start (a checkpoint saved during
    the replay deals on from there)."""
    env = model.env
    env.replayed_generator_state = rollout.generator_state
    model.policy.set_training_mode(False)
    callback.on_rollout_start()
    for t in range(len(rollout.infos)):
        infos, dones, rewards = rollout.infos[t], rollout.dones[t], rollout.rewards[t]
        model.num_timesteps += env.num_envs
        callback.update_locals({"infos": infos, "dones": dones, "rewards": rewards,
                                "actions": rollout.actions[t], "n_steps": t})
        if not callback.on_step():
            return False
        model._update_info_buffer(infos, dones)
    return True


def fill_buffer(buffer: Any, rollout: Rollout, rewards: np.ndarray, values: np.ndarray, log_probs: np.ndarray,
                last_values: th.Tensor) -> None:
    """The rollout into SB3's rollout buffer (reset before) with these rewards (any
    bootstraps added), values and log-probabilities, then its advantages and returns."""
    buffer.observations[:] = rollout.observations.reshape(buffer.observations.shape)
    buffer.actions[:] = rollout.actions.reshape(buffer.actions.shape)
    buffer.rewards[:] = rewards
    buffer.episode_starts[:] = rollout.episode_starts
    buffer.values[:] = values
    buffer.log_probs[:] = log_probs
    buffer.action_masks[:] = rollout.action_masks.reshape(buffer.action_masks.shape)
    buffer.pos, buffer.full = rollout.actions.shape[0], True
    buffer.compute_returns_and_advantage(last_values=last_values, dones=rollout.dones[-1])


def fill_sampled(model: Any, rollout: Rollout) -> None:
    """A rollout sampled with the critic (:func:`sample` with ``gamma``) into SB3's rollout
    buffer, as ``collect_rollouts`` fills it, with its advantages and returns."""
    model.rollout_buffer.reset()
    rewards = rollout.rewards.copy()
    for (t, i, _), bootstrap in zip(rollout.truncations, rollout.bootstraps, strict=True):
        rewards[t][i] += bootstrap
    fill_buffer(model.rollout_buffer, rollout, rewards, rollout.values, rollout.log_probs,
                th.as_tensor(rollout.last_values))


def live_policy_model(policy: Any) -> SimpleNamespace:
    """What a sampling process's ``self`` opponents read as the model: its own policy."""
    return SimpleNamespace(policy=policy)
