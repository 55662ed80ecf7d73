"""Pipelined PPO: the remote env runners sample the next batch while the learner updates.

RLlib's PPO alternates: every runner samples, then the learner updates while the runners
wait, then the weights go out. On 2 cores that leaves one core idle in each phase, and
each phase costs about what ``train.ppo``'s does, so RLlib could not pass it
(``docs/training.md``, throughput model). :class:`PipelinedPPO` (``--pipelined``) overlaps
the two phases, as IMPALA/APPO-style trainers do:

    iteration k:  wait for batch k  ->  ask the runners for batch k+1  ->  update on batch k
                  ->  send the new weights (queued on each runner behind batch k+1)

A runner executes its calls in order, so batch k+1 is sampled with the weights from
before update k: every batch is one update old when it is learned from (the first batch
is not). Clipping PPO's ratio against the policy that sampled the batch learned about
half as fast from scratch (the last update had already used up part of the clip range),
so a pipelined run's learner uses decoupled PPO's loss
(:class:`train.rllib.learner.ProximalPolicy`): the ratio is clipped against the learner's
own policy before the update, and each row is weighted by the truncated ratio of that
policy to the one that sampled it. Learning with it is checked against ``train.ppo`` in
``docs/runs/rllib_pipelined``.

What else changes, and why:

- It needs remote env runners (``--num-env-runners`` >= 1); without them it is RLlib's PPO.
- RLlib's per-iteration sync of the runners' connector states is off: it asks every
  runner for its state and would wait for the batch in flight. The connectors here keep
  no state (no observation filter), so nothing is lost.
- A runner that dies costs its batch in flight: the iteration learns from the batches
  that came back, and RLlib restarts the runner, which samples again from the next
  iteration on.
- League pushes (:func:`push_league_async`) are queued behind the batch in flight, so new
  opponents play from the batch after next.
- At the end of a run (and at a kill) the batch in flight is dropped: a run trains exactly
  the batches it counted.
"""

from __future__ import annotations

import time
from typing import Any

from ray.rllib.algorithms.ppo import PPO
from ray.rllib.core import ALL_MODULES
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_MODULE_STEPS_TRAINED_LIFETIME,
    SYNCH_WORKER_WEIGHTS_TIMER,
    TIMERS,
)

#: The tag of the runners' sample requests (RLlib allows one in flight per runner and tag).
SAMPLE_TAG = "hgin_pipelined_sample"
#: The tag of the league pushes queued behind them.
LEAGUE_TAG = "hgin_league"
#: RLlib's tag of the weight sends (``EnvRunnerGroup.sync_weights``).
WEIGHTS_TAG = "set_state"
#: Result keys: seconds the driver waited for the batch, and spent in the update.
WAIT_SECONDS = "hgin_wait_s"
UPDATE_SECONDS = "hgin_update_s"


def _sample_with_metrics(runner: Any) -> tuple[list, dict]:
    return runner.sample(), runner.get_metrics()


class PipelinedPPO(PPO):
    """PPO whose remote env runners sample batch k+1 during update k (module docstring)."""

    #: Read by ``train.rllib.ppo`` (league pushes, logging) to tell the two apart.
    pipelined = True

    def training_step(self) -> None:
        group = self.env_runner_group
        if group is None or group.num_remote_env_runners() == 0:
            return super().training_step()  # nothing to overlap: the driver samples itself
        with self.metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            # Runners with a batch in flight are skipped (one request per runner and tag):
            # this asks only the ones with none (the first iteration, a restarted runner).
            group.foreach_env_runner_async(_sample_with_metrics, tag=SAMPLE_TAG)
            began = time.perf_counter()
            ready = group.fetch_ready_async_reqs(tags=SAMPLE_TAG, timeout_seconds=self.config.sample_timeout_s)
            self.metrics.log_value(WAIT_SECONDS, time.perf_counter() - began, window=1)
            # The next batch, sampled with the current weights while the learner updates.
            group.foreach_env_runner_async(_sample_with_metrics, tag=SAMPLE_TAG)
            if not ready:
                return  # every runner failed or timed out: RLlib restores them next iteration
            episodes = [ep for _, (eps, _) in ready for ep in eps]
            self.metrics.aggregate([metrics for _, (_, metrics) in ready], key=ENV_RUNNER_RESULTS)

        began = time.perf_counter()
        with self.metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            learner_results = self.learner_group.update(
                episodes=episodes,
                timesteps={
                    NUM_ENV_STEPS_SAMPLED_LIFETIME: self.metrics.peek(
                        (ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME)),
                    NUM_MODULE_STEPS_TRAINED_LIFETIME: self.metrics.peek(
                        (LEARNER_RESULTS, ALL_MODULES, NUM_MODULE_STEPS_TRAINED_LIFETIME), default=0),
                },
                num_epochs=self.config.num_epochs,
                minibatch_size=self.config.minibatch_size,
                shuffle_batch_per_epoch=self.config.shuffle_batch_per_epoch,
            )
            self.metrics.aggregate(learner_results, key=LEARNER_RESULTS)
        self.metrics.log_value(UPDATE_SECONDS, time.perf_counter() - began, window=1)

        with self.metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
            # RLlib sends weights fire-and-forget and drops a send to a runner whose last one
            # has not reported back (one request per runner and tag). The last one ran when
            # this iteration's batch came in, so waiting for its reply costs little, and no
            # update's weights are skipped (they would make the next batch two updates old).
            group.fetch_ready_async_reqs(tags=WEIGHTS_TAG, timeout_seconds=self.config.sample_timeout_s)
            # Each runner applies the weights after the batch it is sampling.
            group.sync_weights(from_worker_or_learner_group=self.learner_group,
                               policies=set(learner_results[0].keys()) - {ALL_MODULES}, inference_only=True)


def configure(config: Any) -> Any:
    """``config`` made to build :class:`PipelinedPPO` (its connector-state sync turned off)."""
    config.algo_class = PipelinedPPO
    config._dont_auto_sync_env_runner_states = True  # it would wait for the batch in flight
    return config


def push_league_async(algo: Any, specs: list[str], weights: list[float], refs: dict[str, Any]) -> None:
    """The league to every remote runner without waiting: queued behind its batch in flight.

    ``refs`` maps each snapshot spec to its weights in Ray's object store (put once by the
    caller); a runner fetches only the snapshots it has not built (all of them after a restart)."""
    import ray

    def take(runner: Any) -> None:
        env = runner.env.unwrapped
        missing = env.missing_snapshots(specs)
        env.set_league(specs, weights, {s: ray.get(refs[s]) for s in missing if s in refs})

    group = algo.env_runner_group
    group.fetch_ready_async_reqs(tags=LEAGUE_TAG, timeout_seconds=0)  # collect the last pushes
    group.foreach_env_runner_async(take, tag=LEAGUE_TAG)
