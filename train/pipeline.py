"""Pipelined PPO for ``train.ppo`` (``--pipeline on``, the default on the batched engine):
rollouts and the PPO update run at the same time, on the two cores of a small machine.

A synchronous PPO iteration samples a rollout (the engine, the opponents, the policy's
forward), then updates on it while nothing samples: one process, one busy core at a time.
Here a rollout worker process owns the environments (the batched engine and its opponents,
built by ``train.ppo.make_envs`` inside it) and a CPU copy of the policy, and samples
rollout k+1 while the learner (this process, on ``--device``) updates on rollout k:

    learner:  receive rollout k -> ask for rollout k+1 -> replay rollout k's steps to the
              callbacks -> update on rollout k -> send the new weights
    worker:   sample rollout k+1 with the weights it has -> send it -> apply the weights
              that came during it -> wait for the next request

The worker runs its messages in order, so rollout k+1 is sampled with the weights from
before update k: every rollout is one update old when it is learned from (the first is
not), as in RLlib's pipelined mode (:mod:`train.rllib.pipeline`), whose design this is.

**The loss.** Clipping PPO's ratio against the policy that sampled a rollout one update
earlier learned about half as fast from scratch in RLlib's runs: the last update had
already used part of the clip range. So the update is decoupled PPO's (Hilton et al. 2022,
as :class:`train.rllib.learner.ProximalPolicy`): before the update, the learner's own
policy (the proximal policy) scores the rollout without autograd; the ratio is clipped
against it, and each row is weighted by the proximal over the sampling probability,
truncated at 1 (V-trace's rho-bar):

    loss = -mean( min(w, 1) * min(r * A, clip(r, 1 - e, 1 + e) * A) ),
    r = pi(a|s) / pi_prox(a|s),   w = pi_prox(a|s) / pi_behaviour(a|s)

SB3's ``train`` is used unchanged: the rollout buffer holds the proximal log-probabilities
as the "old" ones and hands out each minibatch's advantages already normalised (as SB3
normalises them) and multiplied by ``w`` (:class:`DecoupledRolloutBuffer`); since
``w >= 0``, ``min(r wA, clip(r) wA) = w min(rA, clip(r) A)``. The values behind the
advantages (GAE), the bootstrap of a truncated match and of the rollout's last step are
the learner's critic's, as RLlib's learner computes them. A synchronous rollout has
``pi_prox == pi_behaviour``: ``w == 1`` and the loss is PPO's.

**The callbacks** (outcome logs, evaluations, checkpoints, snapshots, the league, the
distillation log) run in this process, with the learner's model: each step of a rollout
is replayed to them in order (``num_timesteps``, ``infos``, ``dones``, ``rewards`` as SB3's
``collect_rollouts`` gives them) before the update on it, so they see the steps and infos
of a synchronous run at the same step counts, and a checkpoint at step T still holds
everything learnt from the first T steps (its saved deal state is the one the worker had
at the start of that rollout). What a callback asks of the environments
(``env_method("set_opponent_specs", ...)``: new snapshots, the league's weights) is sent to
the worker, which applies it after the rollout it is sampling: opponent changes take effect
one rollout later than in a synchronous run. The ``self`` opponent plays the worker's copy
of the policy (the weights the rollout is sampled with).

**Several workers** (``--rollout-workers K``, for a machine with many cores and a GPU):
K worker processes, each owning ``n_envs / K`` of the environments (worker 0 with the
run's seed, worker k with :func:`worker_seed`), sample their parts of each rollout at the
same time; the learner joins the parts along the environments' axis (worker 0's first),
so the rollout, its callbacks and the update are those of one ``n_envs``-wide rollout.
Weights and environment calls go to every worker; a checkpoint's deal state holds each
worker's (``{"rollout_workers": [...]}``), so a run resumes with the same K. With one
worker (the default) nothing changes: same seeds, same messages, same numbers.

Rollouts and weights travel as numpy arrays through a pipe (about 8 MB a rollout of 4,096
decisions: milliseconds against an iteration of about 0.6 s). Every random choice flows from
the seed: the worker seeds its generators from the run's seed and step, and the order of
its messages does not depend on timing, so a pipelined run is repeatable.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import threading
import traceback
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer, MaskableRolloutBufferSamples
from stable_baselines3.common.vec_env import VecEnv

from train.envs import env_indices
from train.rollout import (
    ROLLOUT_WORKERS_KEY,
    Rollout,
    fill_buffer,
    join_rollouts,
    live_policy_model,
    replay,
    sample,
    worker_seed,
)

__all__ = ["BEHAVIOUR_WEIGHT_MAX", "ROLLOUT_WORKERS_KEY", "DecoupledRolloutBuffer", "PipelinedEnv", "PipelinedPPO",
           "Rollout", "WorkerError", "join_rollouts", "worker_seed"]

#: Truncation of the importance weight pi_prox / pi_behaviour (V-trace's rho-bar), as
#: RLlib's pipelined learner (:data:`train.rllib.learner.BEHAVIOUR_WEIGHT_MAX`).
BEHAVIOUR_WEIGHT_MAX = 1.0


def _no_learning_rate(_: float) -> float:
    return 0.0  # the worker's copy never steps its optimizer


def _cpu_state(policy: th.nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in policy.state_dict().items()}


# ---------------------------------------------------------------------- the worker process
class _Worker:
    """The rollout worker's state (inside its process): the environments, a CPU copy of the
    policy, the last observations."""

    def __init__(self, make_env: Callable[[], VecEnv], threads: int):
        from train.run import configure_torch

        configure_torch(threads)
        self.env = make_env()
        self.policy: Any = None
        self.observations: np.ndarray | None = None
        self.episode_starts = np.ones(self.env.num_envs, dtype=bool)

    def build_policy(self, policy_class: type, policy_kwargs: dict, observation_space: Any,
                     action_space: Any, seed: int) -> None:
        from stable_baselines3.common.utils import set_random_seed

        set_random_seed(seed)  # the sampling noise (torch) and numpy's global generator
        self.policy = policy_class(observation_space, action_space, _no_learning_rate, **policy_kwargs)
        self.policy.set_training_mode(False)
        if hasattr(self.env, "set_live_model"):  # 'self' opponents play this copy
            self.env.set_live_model(live_policy_model(self.policy))
        self.observations = self.env.reset()

    def load_weights(self, state: dict[str, np.ndarray]) -> None:
        self.policy.load_state_dict({k: th.as_tensor(v) for k, v in state.items()})

    def collect(self, n_steps: int) -> Rollout:
        rollout = sample(self.policy, self.env, self.observations, self.episode_starts, n_steps)
        self.observations, self.episode_starts = rollout.last_observations.copy(), rollout.dones[-1]
        return rollout


def _read_into(conn: Any, inbox: queue.Queue) -> None:
    """The worker's reader thread: every message as it arrives, so that the learner's sends
    (weights, environment calls) never wait on a worker that is itself sending a rollout
    (two full pipe buffers would wait on each other)."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            message = ("close", None)
        inbox.put(message)
        if message[0] == "close":
            return


def _worker_main(conn: Any, make_env: Callable[[], VecEnv], threads: int) -> None:
    """The worker's loop: one message at a time, in order (module docstring). Replies only
    to ``collect`` (and once, ``ready``); a failure is sent back as its traceback."""
    try:
        worker = _Worker(make_env, threads)
        conn.send(("ready", (worker.env.num_envs, worker.env.observation_space, worker.env.action_space)))
        inbox: queue.Queue = queue.Queue()
        threading.Thread(target=_read_into, args=(conn, inbox), name="hgin-worker-inbox", daemon=True).start()
        while True:
            kind, payload = inbox.get()
            if kind == "policy":
                worker.build_policy(*payload)
            elif kind == "weights":
                worker.load_weights(payload)
            elif kind == "collect":
                conn.send(("rollout", worker.collect(payload)))
            elif kind == "call":
                name, args, kwargs = payload
                getattr(worker.env, name)(*args, **kwargs)
            elif kind == "close":
                worker.env.close()
                return
            else:
                raise ValueError(f"rollout worker: unknown message {kind!r}")
    except (EOFError, KeyboardInterrupt):  # the learner is gone
        return
    except BaseException:
        try:
            conn.send(("error", traceback.format_exc()))
        except OSError:
            pass


class WorkerError(RuntimeError):
    """The rollout worker failed (its traceback in the message) or died."""


class _WorkerProcess:
    """One rollout worker process and the learner's end of its pipe."""

    def __init__(self, make_env: Callable[[], VecEnv], threads: int, name: str):
        context = mp.get_context("spawn")  # torch's threads do not survive a fork
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, make_env, threads), name=name, daemon=True)
        self.process.start()
        child.close()

    def send(self, kind: str, payload: Any = None) -> None:
        if not self.process.is_alive():
            self.receive(kind)  # says why it stopped
        self.conn.send((kind, payload))

    def receive(self, expected: str) -> Any:
        try:
            kind, payload = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=5)
            raise WorkerError(f"the rollout worker process died (exit code {self.process.exitcode})") from None
        if kind == "error":
            raise WorkerError(f"the rollout worker failed:\n{payload}")
        if kind != expected:
            raise WorkerError(f"rollout worker: expected {expected!r}, got {kind!r}")
        return payload

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(("close", None))
            except OSError:
                pass
            self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.conn.close()


class PipelinedEnv(VecEnv):
    """The learner's view of the environments that live in the rollout worker processes.

    Built with the factory that makes them there (``train.ppo.make_envs`` bound to the run's
    flags), or a list of factories, one per worker (``--rollout-workers``: their
    environments side by side, worker 0's first). ``env_method``/``set_opponent_specs``/``continue_from``
    go to the workers, which run them after the rollout they are sampling; ``generator_state``
    is the deal state at the start of the rollout whose steps are being replayed
    (:class:`PipelinedPPO`); ``set_live_model`` does nothing here (each worker's copy plays
    ``self``). It is not stepped: :class:`PipelinedPPO` asks it for whole rollouts."""

    def __init__(self, make_env: Callable[[], VecEnv] | list[Callable[[], VecEnv]], threads: int = 1):
        factories = make_env if isinstance(make_env, list) else [make_env]
        self._workers: list[_WorkerProcess] = []
        try:
            for k, factory in enumerate(factories):
                self._workers.append(_WorkerProcess(factory, threads, name=f"hgin-rollout-worker-{k}"))
            ready = [worker.receive("ready") for worker in self._workers]
        except BaseException:
            self.close()
            raise
        _, observation_space, action_space = ready[0]
        if any(o != observation_space or a != action_space for _, o, a in ready):
            self.close()
            raise WorkerError("the rollout workers' environments differ in their spaces")
        num_envs = sum(n for n, _, _ in ready)
        self.render_mode, self.num_envs = None, num_envs  # read by VecEnv's constructor
        super().__init__(num_envs, observation_space, action_space)
        self.replayed_generator_state: dict | None = None

    # ------------------------------------------------------------------ the workers' protocol
    @property
    def num_workers(self) -> int:
        return len(self._workers)

    def send(self, kind: str, payload: Any = None) -> None:
        """The same message to every worker."""
        for worker in self._workers:
            worker.send(kind, payload)

    def start_policy(self, model: MaskablePPO, seed: int) -> None:
        """Build each worker's CPU copy of ``model``'s policy (its class and arguments, as
        SB3 builds it) and seed the workers (worker k with ``worker_seed(seed, k)``)."""
        for k, worker in enumerate(self._workers):
            worker.send("policy", (model.policy_class, dict(model.policy_kwargs), model.observation_space,
                                   model.action_space, worker_seed(seed, k)))

    def request_rollout(self, n_steps: int) -> None:
        self.send("collect", n_steps)

    def receive_rollout(self) -> Rollout:
        return join_rollouts([worker.receive("rollout") for worker in self._workers])

    def send_weights(self, policy: Any) -> None:
        self.send("weights", _cpu_state(policy))

    # ------------------------------------------------------------------ training hooks
    def set_opponent_specs(self, specs: list[str], weights: list[float] | None = None) -> None:
        self.send("call", ("set_opponent_specs", (list(specs), weights), {}))

    def continue_from(self, state: dict) -> None:
        """Each worker deals on from its own saved state (a several-worker run's are listed
        under ``ROLLOUT_WORKERS_KEY``; ``train.ppo`` checks the count before)."""
        parts = state[ROLLOUT_WORKERS_KEY] if self.num_workers > 1 else [state]
        for worker, part in zip(self._workers, parts, strict=True):
            worker.send("call", ("continue_from", (part,), {}))

    def generator_state(self) -> dict | None:
        return self.replayed_generator_state

    def set_live_model(self, model: Any) -> None:
        return None  # the worker's copy of the policy plays 'self'

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        # SB3's ``_setup_learn`` resets; the observations live in the worker.
        return np.zeros((self.num_envs, *self.observation_space.shape), dtype=np.float32)

    def step_async(self, actions: np.ndarray) -> None:
        raise NotImplementedError("the pipelined environments are stepped by their worker (PipelinedPPO)")

    def step_wait(self):
        raise NotImplementedError("the pipelined environments are stepped by their worker (PipelinedPPO)")

    def close(self) -> None:
        for worker in self._workers:
            worker.close()

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        raise NotImplementedError("set_attr on the pipelined environments: use env_method")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        """Run on the worker's environments after its rollout in flight; returns Nones (the
        caller does not wait for the worker)."""
        self.send("call", (method_name, method_args, method_kwargs))
        return [None] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        return env_indices(self.num_envs, indices)


# ---------------------------------------------------------------------- the learner
class DecoupledRolloutBuffer(MaskableRolloutBuffer):
    """SB3's masked rollout buffer whose minibatches carry decoupled PPO's advantages:
    normalised over the minibatch (when ``normalize``, as SB3's ``train`` would) and
    multiplied by each row's behaviour weight (module docstring)."""

    behaviour_weights: np.ndarray
    normalize = True

    def reset(self) -> None:
        super().reset()
        self.behaviour_weights = np.ones((self.buffer_size, self.n_envs), dtype=np.float32)

    def get(self, batch_size: int | None = None) -> Generator[MaskableRolloutBufferSamples, None, None]:
        if not self.generator_ready:
            self.behaviour_weights = self.swap_and_flatten(self.behaviour_weights)
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> MaskableRolloutBufferSamples:
        samples = super()._get_samples(batch_inds, env)
        advantages = samples.advantages
        if self.normalize:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        weights = self.to_torch(self.behaviour_weights[batch_inds].flatten())
        return samples._replace(advantages=weights * advantages)


class PipelinedPPO(MaskablePPO):
    """MaskablePPO whose rollouts are sampled by a worker process during the update on the
    previous one (module docstring); its ``env`` is a :class:`PipelinedEnv`. Its checkpoints
    are MaskablePPO's (they load with ``MaskablePPO.load``, and resume on either path)."""

    def _setup_model(self) -> None:
        super()._setup_model()
        self.rollout_buffer = DecoupledRolloutBuffer(self.n_steps, self.observation_space, self.action_space,
                                                     self.device, gamma=self.gamma, gae_lambda=self.gae_lambda,
                                                     n_envs=self.n_envs)

    def train(self) -> None:
        # The buffer normalises each minibatch's advantages before weighting them.
        normalize, self.normalize_advantage = self.normalize_advantage, False
        self.rollout_buffer.normalize = normalize
        try:
            super().train()
        finally:
            self.normalize_advantage = normalize

    def learn(self, total_timesteps: int, callback: Any = None, log_interval: int = 1,  # type: ignore[override]
              tb_log_name: str = "MaskablePPO", reset_num_timesteps: bool = True, use_masking: bool = True,
              progress_bar: bool = False) -> PipelinedPPO:
        env = self.env
        if not isinstance(env, PipelinedEnv):
            raise TypeError(f"PipelinedPPO learns on a PipelinedEnv, not {type(env).__name__}")
        if not use_masking:
            raise ValueError("PipelinedPPO always samples with the action masks")
        iteration = 0
        total_timesteps, callback = self._setup_learn(total_timesteps, callback, reset_num_timesteps,
                                                      tb_log_name, progress_bar)
        callback.on_training_start(locals(), globals())
        rollout_size = self.n_steps * env.num_envs
        env.start_policy(self, seed=(self.seed or 0) + self.num_timesteps)
        env.send_weights(self.policy)
        in_flight = self.num_timesteps < total_timesteps
        if in_flight:
            env.request_rollout(self.n_steps)
        while in_flight:
            rollout = env.receive_rollout()
            # The next rollout, sampled with the weights the worker has (from before this update).
            in_flight = self.num_timesteps + rollout_size < total_timesteps
            if in_flight:
                env.request_rollout(self.n_steps)
            if not self._replay(rollout, callback):
                break
            iteration += 1
            self._update_current_progress_remaining(self.num_timesteps, total_timesteps)
            if log_interval is not None and iteration % log_interval == 0:
                self.dump_logs(iteration)
            self.train()
            if in_flight:
                env.send_weights(self.policy)  # applied after the rollout in flight
        if in_flight:  # stopped by a callback: collect the rollout in flight, unused
            env.receive_rollout()
        callback.on_training_end()
        return self

    def _replay(self, rollout: Rollout, callback: Any) -> bool:
        """Replay the rollout's steps to the callbacks (:func:`train.rollout.replay`), then
        fill the rollout buffer for the update; False when a callback stops training."""
        if not replay(self, rollout, callback):
            return False
        self._fill_buffer(rollout)
        callback.on_rollout_end()
        return True

    def _fill_buffer(self, rollout: Rollout) -> None:
        """The rollout in SB3's buffer, scored by the learner's policy before the update: its
        log-probabilities (the proximal policy's), the behaviour weights, and its critic's
        values for GAE and for the bootstraps (module docstring)."""
        buffer: DecoupledRolloutBuffer = self.rollout_buffer  # type: ignore[assignment]
        buffer.reset()
        n_steps, n_envs = rollout.actions.shape
        rewards = rollout.rewards.copy()
        rows = n_steps * n_envs
        observations = rollout.observations.reshape(rows, -1)
        actions = rollout.actions.reshape(rows)
        masks = rollout.action_masks.reshape(rows, -1)
        values, log_probs = [], []
        with th.no_grad():
            # In chunks of the update's minibatch: the card network's per-card tensors of a
            # whole rollout (4,096 x 52 x 32 floats) outgrow the CPU's caches, and one
            # forward of 4,096 rows measured about 3x four of 1,024.
            for i in range(0, rows, self.batch_size):
                value, log_prob, _ = self.policy.evaluate_actions(
                    th.as_tensor(observations[i:i + self.batch_size], device=self.device),
                    th.as_tensor(actions[i:i + self.batch_size], device=self.device),
                    action_masks=masks[i:i + self.batch_size])
                values.append(value.flatten())
                log_probs.append(log_prob)
            value, log_prob = th.cat(values), th.cat(log_probs)
            for t, i, terminal in rollout.truncations:  # a match cut off by a time limit
                terminal_value = self.policy.predict_values(self.policy.obs_to_tensor(terminal)[0])[0]
                rewards[t, i] += self.gamma * float(terminal_value.item())
            last_values = self.policy.predict_values(th.as_tensor(rollout.last_observations, device=self.device))
        proximal = log_prob.cpu().numpy().reshape(n_steps, n_envs)
        fill_buffer(buffer, rollout, rewards, value.cpu().numpy().reshape(n_steps, n_envs), proximal, last_values)
        buffer.behaviour_weights[:] = np.minimum(np.exp(proximal - rollout.log_probs), BEHAVIOUR_WEIGHT_MAX)
        self.logger.record("train/behaviour_weight", float(buffer.behaviour_weights.mean()))
