"""An RLlib env runner that samples the batched engine in whole-batch steps.

RLlib's ``SingleAgentEnvRunner`` moves every env step through its connector pipelines
and appends it to one ``SingleAgentEpisode`` per env, item by item: with 128 matches per
runner that bookkeeping cost more than the engine and the network together (0.91 s of
sampling per 4,096 steps against ``train.ppo``'s 0.56 s, ``eval.rllib_scaling``).
:class:`BatchedEnvRunner` keeps everything else of it (the env, the module, weight sync,
state, metrics, fault tolerance) and replaces its sampling loop for the batched engine:

- each step is one module call on the whole batch (``forward_exploration``, the action
  sampled from the module's exploration distribution, its log-probability kept), one
  engine step with same-step autoreset (``RLlibBatchedEnv.step_batch``, as
  ``train.ppo``'s vector env does), the results written into preallocated arrays;
- after ``rollout_fragment_length`` steps the arrays are cut into episode chunks, each a
  ``SingleAgentEpisode`` built from array slices (already numpy, no per-step append), with
  the same columns as RLlib's runner writes (observations, actions, rewards, infos,
  ``action_dist_inputs``, ``action_logp``, the weights' sequence number);
- every row acts at every step (a finished match's row shows its next match at once), so
  an iteration is exactly ``num_envs x rollout_fragment_length`` learner decisions.

The final observation of a finished match is the learner's last observation in it (the
engine has dealt the next match by then): the value of a terminated episode's last state
is not used by GAE, and a match cut at ``--max-hands`` bootstraps from that last decision's
state (as :class:`train.rllib.env.RLlibBatchedEnv` does for RLlib's own runner).

Callbacks: ``on_episode_created``, ``on_episode_start`` and ``on_episode_end`` are made
per episode as RLlib makes them (the first two with an empty episode of the episode's id,
the last with its final chunk); ``on_episode_step`` is not made (it would be 128 calls per
step; nothing here uses it). ``sample(num_episodes=...)``, random actions and
``explore=False`` fall back to RLlib's own loop over the env's next-step-autoreset API.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
import torch
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO
from ray.rllib.utils.spaces.space_utils import get_base_struct_from_space

#: The env runners' metric: seconds this iteration's sampling took (the slowest runner's).
SAMPLE_SECONDS = "hgin_sample_s"


def _buffer(data: Any) -> InfiniteLookbackBuffer:
    """A finalized (numpy) buffer with no lookback, as ``SingleAgentEpisode.to_numpy`` leaves one."""
    buf = InfiniteLookbackBuffer(data=data)  # an array or a dict of arrays: finalized
    buf.lookback = 0
    return buf


class BatchedEnvRunner(SingleAgentEnvRunner):
    """``SingleAgentEnvRunner`` with a whole-batch sampling loop (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._obs: dict[str, np.ndarray] | None = None  # the rows' current observations
        self._episode_ids: list[str] = []
        self._episode_t: np.ndarray = np.zeros(0, dtype=np.int64)  # steps so far in each row's episode
        self._spaces: tuple | None = None  # (observation, action) space with its struct, once the env exists

    def _sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, explore: bool,
                random_actions: bool = False, force_reset: bool = False) -> list[SingleAgentEpisode]:
        env = self.env.unwrapped
        if num_timesteps is None or random_actions or not explore or not hasattr(env, "step_batch"):
            self._obs = None  # RLlib's loop steps the env its own way: start afresh after it
            return super()._sample(num_timesteps=num_timesteps, num_episodes=num_episodes, explore=explore,
                                   random_actions=random_actions, force_reset=True)
        began = time.perf_counter()
        if force_reset or self._needs_initial_reset or self._obs is None:
            self._start(env)
        n = self.num_envs
        steps = -(-num_timesteps // n)
        obs_keys = list(self._obs)
        obs_buf = {k: np.empty((steps + 1, *v.shape), dtype=v.dtype) for k, v in self._obs.items()}
        actions = np.empty((steps, n), dtype=np.int64)
        rewards = np.empty((steps, n), dtype=np.float32)
        logp = np.empty((steps, n), dtype=np.float32)
        logits: np.ndarray | None = None
        ends: list[tuple[int, int, bool, bool, dict]] = []  # (step, row, terminated, truncated, info)
        dist_cls = self.module.get_exploration_action_dist_cls()
        for t in range(steps):
            for k in obs_keys:
                obs_buf[k][t] = self._obs[k]
            batch = {Columns.OBS: {k: torch.from_numpy(obs_buf[k][t]) for k in obs_keys}}
            out = self.module.forward_exploration(batch)
            inputs = out[Columns.ACTION_DIST_INPUTS]
            with torch.no_grad():
                dist = dist_cls.from_logits(inputs)
                chosen = dist.sample()
                logp[t] = dist.logp(chosen).numpy()
            if logits is None:
                logits = np.empty((steps, *inputs.shape), dtype=np.float32)
            logits[t] = inputs.numpy()
            actions[t] = chosen.numpy()
            self._obs, rewards[t], terminated, truncated, finished = env.step_batch(actions[t])
            for row, info in finished.items():
                ends.append((t, row, bool(terminated[row]), bool(truncated[row]), info))
        for k in obs_keys:
            obs_buf[k][steps] = self._obs[k]
        seq_no = self._weights_seq_no
        chunks, done_chunks = self._cut(obs_buf, actions, rewards, logp, logits, ends, steps, seq_no)
        ts = n * steps
        self._done_episodes_for_metrics.extend(done_chunks)
        for ep in chunks:
            if not ep.is_done:
                self._ongoing_episodes_for_metrics[ep.id_].append(ep)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=ts)
        self._increase_sampled_metrics(ts, len(done_chunks))
        self.metrics.log_value(SAMPLE_SECONDS, time.perf_counter() - began, reduce="max", window=1)
        return chunks

    # ------------------------------------------------------------------ helpers
    def _start(self, env: Any) -> None:
        """New episodes on every row, from the matches as they stand."""
        self._ongoing_episodes_for_metrics.clear()
        obs, _ = env.reset()
        self._obs = obs
        self._episode_ids = [uuid.uuid4().hex for _ in range(self.num_envs)]
        self._episode_t = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_initial_reset = False
        for row in range(self.num_envs):
            self._episode_begins(row)

    def _episode_begins(self, row: int) -> None:
        """``on_episode_created`` and ``on_episode_start`` for the row's new episode, with one
        empty episode of its id (its data arrive as chunks)."""
        episode = SingleAgentEpisode(id_=self._episode_ids[row], observation_space=self.env.single_observation_space,
                                     action_space=self.env.single_action_space)
        self._episode_callback("on_episode_created", episode, row)
        self._episode_callback("on_episode_start", episode, row)

    def _cut(self, obs_buf: dict, actions: np.ndarray, rewards: np.ndarray, logp: np.ndarray, logits: np.ndarray,
             ends: list, steps: int, seq_no: int) -> tuple[list[SingleAgentEpisode], list[SingleAgentEpisode]]:
        """The rows' steps as episode chunks: one per finished episode, one per row still playing."""
        chunks, done_chunks = [], []
        start = np.zeros(self.num_envs, dtype=np.int64)
        by_row: dict[int, list] = {}
        for end in ends:
            by_row.setdefault(end[1], []).append(end)
        for row in range(self.num_envs):
            for t, _, terminated, truncated, info in by_row.get(row, []):
                s = int(start[row])
                # The last observation: the learner's state before its final action.
                obs_idx = np.append(np.arange(s, t + 1), t)
                ep = self._chunk(row, obs_buf, obs_idx, slice(s, t + 1), actions, rewards, logp, logits, seq_no,
                                 terminated=terminated, truncated=truncated, info=info)
                chunks.append(ep)
                done_chunks.append(ep)
                self._episode_callback("on_episode_end", ep, row)
                # The row's next episode starts with the next step's observation.
                self._episode_ids[row] = uuid.uuid4().hex
                self._episode_t[row] = 0
                start[row] = t + 1
                self._episode_begins(row)
            s = int(start[row])
            if s < steps:
                ep = self._chunk(row, obs_buf, np.arange(s, steps + 1), slice(s, steps), actions, rewards, logp,
                                 logits, seq_no)
                self._episode_t[row] += steps - s
                chunks.append(ep)
        return chunks, done_chunks

    def _chunk(self, row: int, obs_buf: dict, obs_idx: np.ndarray, steps: slice, actions: np.ndarray,
               rewards: np.ndarray, logp: np.ndarray, logits: np.ndarray, seq_no: int, terminated: bool = False,
               truncated: bool = False, info: dict | None = None) -> SingleAgentEpisode:
        length = steps.stop - steps.start
        infos: list[dict] = [{} for _ in range(length + 1)]
        if info is not None:
            infos[-1] = info
        ep = SingleAgentEpisode(
            id_=self._episode_ids[row],
            observations=_buffer({k: v[obs_idx, row] for k, v in obs_buf.items()}),
            infos=InfiniteLookbackBuffer(infos),
            actions=_buffer(actions[steps, row]),
            rewards=_buffer(rewards[steps, row]),
            terminated=terminated, truncated=truncated,
            extra_model_outputs={Columns.ACTION_DIST_INPUTS: _buffer(logits[steps, row]),
                                 Columns.ACTION_LOGP: _buffer(logp[steps, row]),
                                 WEIGHTS_SEQ_NO: _buffer(np.full(length, seq_no, dtype=np.int64))},
            t_started=int(self._episode_t[row]),
            len_lookback_buffer=0,
        )
        # The spaces, set as their setters would, with the space structs computed once per
        # runner (RLlib's setters recompute the Dict space's struct for every buffer).
        if self._spaces is None:
            self._spaces = tuple((space, space, get_base_struct_from_space(space))
                                 for space in (self.env.single_observation_space, self.env.single_action_space))
        (ep._observation_space, ep.observations._space, ep.observations._space_struct), \
            (ep._action_space, ep.actions._space, ep.actions._space_struct) = self._spaces
        return ep

    def _episode_callback(self, which: str, episode: SingleAgentEpisode, row: int) -> None:
        kwargs = dict(episode=episode, env_runner=self, metrics_logger=self.metrics, env=self.env.unwrapped,
                      rl_module=self.module, env_index=row)
        if which == "on_episode_end":
            kwargs["prev_episode_chunks"] = self._ongoing_episodes_for_metrics[episode.id_]
        make_callback(which, callbacks_objects=self._callbacks,
                      callbacks_functions=getattr(self.config, f"callbacks_{which}"), kwargs=kwargs)
