"""The PPO update on both cores (``train.ppo --update-processes 2``, the default on a CPU
learner with two cores or more): each minibatch's gradient is the sum of its two halves'
gradients, computed at the same time, one half in this process and one in a helper process.

Why: the update is about three fifths of a synchronous iteration of the default recipe
(docs/learning.md), one minibatch after another on one core, while the second core idles.
torch's own second thread spins while it waits and collapses when another job holds a
core (docs/runs/learning53); a helper process that blocks on a pipe between minibatches
sleeps instead, so a busy machine slows it no more than it slows one thread. A minibatch's
forward and backward take time in proportion to its rows (7.8 ms for 1,024, 4.0 ms for
512 here), so two halves at once take about half as long.

**The numbers.** PPO's loss is a mean over the minibatch's rows, so it is the sum of its
halves' shares (:func:`half_loss`: each half's terms summed and divided by the whole
minibatch's size), and so is its gradient: the update is SB3's MaskablePPO update as a
function (same minibatches, from the same ``np.random`` permutation; advantages
normalised over the whole minibatch; the same losses, clip, logs and ``target_kl`` stop),
with the gradient summed in another order: weights equal to float rounding, not bit for
bit. The halves are fixed (a minibatch's first ``n // 2`` rows here, the rest in the
helper) and the sum is always ``this half + the helper's half``, so a run is repeatable:
should the helper not have started yet (forked, it is ready in milliseconds; spawned,
:func:`start_method`, in seconds), this process computes both halves itself, in the same
order, to the same bits (tested).

The helper holds its own copy of the policy whose parameters are the learner's, in
shared memory: Adam's step here is the helper's next weights, with no copy. Each update
the rollout's flattened arrays are copied into shared tensors once; then each minibatch is
one message (its rows in the shared permutation) and one reply (the half's loss terms),
the gradient coming back through a shared buffer.

**The step.** Each process's gradient is one flat buffer whose views are the parameters'
``grad`` (a backward accumulates into them in place, the helper's into the shared buffer),
so the halves add in one call; the clip takes one norm of it all and Adam's step is
torch's fused kernel (:func:`lean_steps`, :func:`clip_norm`): equal to torch's clip and
SB3's step to float rounding. ``LEAN_STEP = False`` takes those two as SB3 does, and a run
is then the previous code's (6508919) to the bit.

Between updates the helper also samples one of a split rollout's two parts
(train/split_rollout.py: :class:`train.split_rollout.SplitEnv` hands it the part when it is
ready and takes it back when ``learn`` ends), with the same shared weights.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import traceback
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch as th
import torch.multiprocessing as tmp
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import explained_variance

from train.rollout import fill_sampled, join_rollouts, live_policy_model, replay
from train.split_rollout import SplitEnv

#: How long a split rollout waits for a forked helper to start (it is ready in milliseconds).
FORKED_START_WAIT = 5.0


def start_method() -> str:
    """How the helper starts: forked from a learner on one torch thread, so that it has every
    module and numba kernel the learner has loaded and is ready in milliseconds (spawned, it
    imports torch, SB3 and the policy for seconds, and this process computes both halves
    meanwhile); spawned from a learner on several threads, whose OpenMP pool a forked child
    must not use (GNU OpenMP is not fork-safe)."""
    return "fork" if th.get_num_threads() == 1 else "spawn"


class LossTerms(NamedTuple):
    """A half's shares of the minibatch's loss and of its logged figures."""
    policy: float
    value: float
    entropy: float
    clipped: float
    approx_kl: float

    def __add__(self, other: LossTerms) -> LossTerms:  # type: ignore[override]
        return LossTerms(*(a + b for a, b in zip(self, other, strict=True)))


@dataclass
class Settings:
    """What a minibatch's loss needs besides the rows (one update's PPO settings)."""
    clip_range: float
    clip_range_vf: float | None
    ent_coef: float
    vf_coef: float
    normalize_advantage: bool


class UpdateData:
    """One rollout's flattened arrays as shared tensors (rows = steps x environments), the
    minibatches' permutation and the helper's gradient buffer."""

    #: Each shared array and the rollout buffer's array it copies.
    SOURCES = {"observations": "observations", "actions": "actions", "action_masks": "action_masks",
               "old_log_prob": "log_probs", "advantages": "advantages", "returns": "returns",
               "old_values": "values"}

    def __init__(self, rows: int, obs_dim: int, num_actions: int, num_weights: int):
        self.observations = th.zeros(rows, obs_dim).share_memory_()
        self.actions = th.zeros(rows, dtype=th.long).share_memory_()
        self.action_masks = th.zeros(rows, num_actions, dtype=th.bool).share_memory_()
        self.old_log_prob = th.zeros(rows).share_memory_()
        self.advantages = th.zeros(rows).share_memory_()
        self.returns = th.zeros(rows).share_memory_()
        self.old_values = th.zeros(rows).share_memory_()
        self.order = th.zeros(rows, dtype=th.long).share_memory_()
        self.gradient = th.zeros(num_weights).share_memory_()

    def fill(self, buffer: Any, order: np.ndarray) -> None:
        """Copy an SB3 rollout buffer's arrays (flattened as its ``get`` flattens them)."""
        for name, source_name in self.SOURCES.items():
            source = buffer.swap_and_flatten(getattr(buffer, source_name))
            target = getattr(self, name)
            target.copy_(th.from_numpy(np.ascontiguousarray(source)).reshape(target.shape))
        self.order.copy_(th.from_numpy(order))


def half_loss(policy: Any, data: UpdateData, start: int, stop: int, half: int, settings: Settings
              ) -> tuple[th.Tensor, LossTerms]:
    """Half ``half`` (0: the first ``n // 2`` rows, 1: the rest) of the minibatch
    ``data.order[start:stop]``: its share of SB3's PPO loss (each term's sum over the
    half's rows divided by the minibatch's ``n``) and of the logged figures."""
    whole = data.order[start:stop]
    n = whole.shape[0]
    rows = whole[:n // 2] if half == 0 else whole[n // 2:]
    values, log_prob, entropy = policy.evaluate_actions(
        data.observations[rows], data.actions[rows], action_masks=data.action_masks[rows])
    values = values.flatten()
    advantages = data.advantages[rows]
    if settings.normalize_advantage:
        every = data.advantages[whole]
        advantages = (advantages - every.mean()) / (every.std() + 1e-8)
    old_log_prob = data.old_log_prob[rows]
    ratio = th.exp(log_prob - old_log_prob)
    clip = settings.clip_range
    policy_loss = -th.min(advantages * ratio, advantages * th.clamp(ratio, 1 - clip, 1 + clip)).sum() / n
    if settings.clip_range_vf is not None:
        old_values = data.old_values[rows]
        values = old_values + th.clamp(values - old_values, -settings.clip_range_vf, settings.clip_range_vf)
    value_loss = (data.returns[rows] - values).square().sum() / n
    entropy_loss = -entropy.sum() / n
    loss = policy_loss + settings.ent_coef * entropy_loss + settings.vf_coef * value_loss
    with th.no_grad():
        log_ratio = log_prob - old_log_prob
        terms = LossTerms(policy_loss.item(), value_loss.item(), entropy_loss.item(),
                          float((th.abs(ratio - 1) > clip).sum()) / n,
                          float(((th.exp(log_ratio) - 1) - log_ratio).sum()) / n)
    return loss, terms


def gradient_views(parameters: list[th.nn.Parameter], flat: th.Tensor) -> list[th.Tensor]:
    """Views of ``flat`` shaped as each parameter, in order: pointed to as the parameters'
    ``grad``, a backward accumulates each parameter's gradient into its slice in place."""
    views, at = [], 0
    for p in parameters:
        views.append(flat[at:at + p.numel()].view_as(p))
        at += p.numel()
    return views


def point_gradients(parameters: list[th.nn.Parameter], views: list[th.Tensor]) -> None:
    """Each parameter's ``grad`` to its view (anything that set them to None is undone)."""
    for p, view in zip(parameters, views, strict=True):
        p.grad = view


#: Whether the split update takes the lean step (:func:`lean_steps`, :func:`clip_norm`); off,
#: torch's ``clip_grad_norm_`` and SB3's Adam step weight by weight: a run's bits of 6508919.
LEAN_STEP = True

#: The optimizers whose step has a fused CPU kernel (the same algorithm, one call for every weight).
FUSED_OPTIMIZERS = (th.optim.Adam, th.optim.AdamW)


@contextlib.contextmanager
def lean_steps(optimizer: th.optim.Optimizer):
    """Adam's steps in the update as one fused call over every weight (SB3's step loops
    over the weights one by one: about a tenth of an update of the default recipe), equal to
    float rounding, not bit for bit. Only while the update runs: the saved optimizer state,
    and an update in one process (``--update-processes 1``), keep SB3's step."""
    if not LEAN_STEP or not isinstance(optimizer, FUSED_OPTIMIZERS):
        yield
        return
    saved = [(group["foreach"], group["fused"]) for group in optimizer.param_groups]
    for group in optimizer.param_groups:
        group["foreach"], group["fused"] = None, True
    try:
        yield
    finally:
        for group, (foreach, fused) in zip(optimizer.param_groups, saved, strict=True):
            group["foreach"], group["fused"] = foreach, fused


def clip_norm(gradient: th.Tensor, parameters: list[th.nn.Parameter], max_norm: float) -> None:
    """The minibatch's gradient (``gradient``, flat; the ``parameters``' ``grad`` are views of
    it) scaled to a norm of at most ``max_norm``: one norm of it all and one scale (torch's
    ``clip_grad_norm_`` takes each weight's norm, then the norm of those: equal to float
    rounding; it alone where ``LEAN_STEP`` is off)."""
    if not LEAN_STEP:
        th.nn.utils.clip_grad_norm_(parameters, max_norm)
        return
    total = th.linalg.vector_norm(gradient)
    gradient.mul_(th.clamp(max_norm / (total + 1e-6), max=1.0))


def _zero_schedule(_: float) -> float:
    return 0.0


def _end_with_parent(parent: int, learner_end: multiprocessing.connection.Connection | None) -> None:
    """Make the helper end when the learner does, however it ends (a SIGKILL runs no atexit
    handler to stop a daemon): the kernel sends it SIGKILL when its parent dies (Linux's
    PR_SET_PDEATHSIG), and a forked helper closes its copy of the learner's end of the pipe,
    so that its reads see the learner's end close."""
    if learner_end is not None:
        learner_end.close()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pipe's end alone
        pass
    if os.getppid() != parent:  # the learner died before the line above
        os._exit(0)


def _helper_main(conn: multiprocessing.connection.Connection, learner_end: multiprocessing.connection.Connection | None,
                 parent: int, policy_class: type, spaces: tuple, policy_kwargs: dict, weights: list[th.Tensor],
                 data: UpdateData, threads: int) -> None:
    """The helper process: its policy on the shared weights; for each minibatch message,
    the second half's gradient into ``data.gradient`` and its loss terms back."""
    _end_with_parent(parent, learner_end)
    try:
        th.set_num_threads(threads)
        th.distributions.Distribution.set_default_validate_args(False)
        policy = policy_class(*spaces, _zero_schedule, **policy_kwargs)
        parameters = list(policy.parameters())
        for p, w in zip(parameters, weights, strict=True):
            if p.shape != w.shape:
                raise ValueError(f"the helper's policy has a {tuple(p.shape)} weight where the learner's is "
                                 f"{tuple(w.shape)}")
            p.data = w
        policy.set_training_mode(True)
        # The half's gradient is accumulated straight into the shared buffer (0 + the half's).
        views = gradient_views(parameters, data.gradient)
        conn.send("ready")
        part = None  # a split rollout's second part (train/split_rollout.py), while it is here
        transfer: dict[str, th.Tensor] = {}  # where its large arrays go (SplitEnv.transfer)
        while True:
            message = conn.recv()
            if message is None:
                return
            kind = message[0]
            if kind == "half":
                _, start, stop, settings = message
                point_gradients(parameters, views)
                data.gradient.zero_()
                loss, terms = half_loss(policy, data, start, stop, 1, settings)
                loss.backward()
                conn.send(terms)
            elif kind == "collect":
                # The large arrays into the learner's shared memory, the rest through the pipe.
                rollout = part.collect(policy, *message[1:], out={k: v.numpy() for k, v in transfer.items()})
                conn.send(dataclasses.replace(rollout, **dict.fromkeys(transfer)))
            elif kind == "transfer":
                transfer = message[1]
                conn.send(None)
            elif kind == "call":
                _, name, args, kwargs = message
                conn.send(getattr(part.env, name)(*args, **kwargs))
            elif kind == "take_part":
                part = message[1]
                part.env.set_live_model(live_policy_model(policy))
                conn.send(None)
            elif kind == "give_part":
                conn.send(part)
                part = None
            else:
                raise ValueError(f"the update's helper got an unknown message {kind!r}")
    except (EOFError, KeyboardInterrupt):
        return
    except BaseException:  # noqa: BLE001 - the learner raises it, with the helper's traceback
        conn.send(("failed", traceback.format_exc()))


class UpdateHelper:
    """The helper process and its pipe (:func:`_helper_main`)."""

    def __init__(self, model: MaskablePPO, data: UpdateData):
        weights = [p.data for p in model.policy.parameters()]
        for w in weights:
            w.share_memory_()  # in place: the optimizer keeps its parameters
        method = start_method()
        self.forked = method == "fork"
        context = tmp.get_context(method)
        self.conn, child = context.Pipe()
        spaces = (model.observation_space, model.action_space)
        self.process = context.Process(
            target=_helper_main, name="ppo-update-helper", daemon=True,
            args=(child, self.conn if method == "fork" else None, os.getpid(), type(model.policy), spaces,
                  dict(model.policy_kwargs), weights, data, th.get_num_threads()))
        self.process.start()
        child.close()
        self.ready = False

    def poll_ready(self, timeout: float = 0.0) -> bool:
        """Whether the helper has started, waiting up to ``timeout`` seconds for it."""
        if not self.ready and self.conn.poll(timeout):
            try:
                self._check(self.conn.recv())
            except (EOFError, OSError):
                raise self._died() from None
            self.ready = True
        return self.ready

    def send(self, message: tuple) -> None:
        try:
            self.conn.send(message)
        except OSError:  # BrokenPipeError: it has exited
            raise self._died() from None

    def receive(self) -> Any:
        try:
            reply = self.conn.recv()
        except (EOFError, OSError):
            raise self._died() from None
        self._check(reply)
        return reply

    def request(self, message: tuple) -> Any:
        self.send(message)
        return self.receive()

    def start_half(self, start: int, stop: int, settings: Settings) -> None:
        self.send(("half", start, stop, settings))

    def finish_half(self) -> LossTerms:
        return self.receive()

    def _died(self) -> RuntimeError:
        self.process.join(timeout=1)
        return RuntimeError(f"the PPO update's helper process died (exit code {self.process.exitcode}); "
                            f"train with --update-processes 1 to update in this process alone")

    @staticmethod
    def _check(reply: Any) -> None:
        if isinstance(reply, tuple) and reply and reply[0] == "failed":
            raise RuntimeError(f"the PPO update's helper process failed:\n{reply[1]}")

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            self.process.join(timeout=5)
            if self.process.is_alive():
                self.process.kill()
        self.conn.close()


class LearnerGradient:
    """This process's minibatch gradient, flat: the parameters' ``grad`` are ``views`` of
    it, so the helper's half is added in one call; ``helper_views`` are the shared buffer's,
    where this process computes the helper's half while it has none."""

    def __init__(self, parameters: list[th.nn.Parameter], data: UpdateData):
        self.flat = th.zeros(data.gradient.shape)
        self.views = gradient_views(parameters, self.flat)
        self.helper_views = gradient_views(parameters, data.gradient)


class SplitUpdatePPO(MaskablePPO):
    """MaskablePPO whose update computes each minibatch's gradient in two halves at once
    (module docstring). Its checkpoints are MaskablePPO's, and resume on either class."""

    helper: UpdateHelper | None = None
    data: UpdateData | None = None
    own: LearnerGradient | None = None

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "helper", "data", "own"]  # a process and buffers

    def _start_helper(self) -> None:
        """The shared buffers, and the helper process where this process may have one (a
        daemonic process, such as a multiprocessing pool's worker, may not: it then computes
        both halves itself, to the same bits, on its one core)."""
        rows = self.n_steps * self.n_envs
        weights = sum(p.numel() for p in self.policy.parameters())
        self.data = UpdateData(rows, self.observation_space.shape[0], int(self.action_space.n), weights)
        self.own = LearnerGradient(list(self.policy.parameters()), self.data)
        if not mp.current_process().daemon:
            self.helper = UpdateHelper(self, self.data)

    def close_helper(self) -> None:
        if self.helper is not None:
            if isinstance(self.env, SplitEnv) and self.env.helper is self.helper:
                try:
                    self.env.detach()  # part 1 back here, as the helper sampled it
                except RuntimeError:  # the helper died (the run says so): part 1 stays as it was handed over
                    self.env.helper = None
            self.helper.close()
        self.helper = self.data = self.own = None

    def collect_rollouts(self, env: Any, callback: Any, rollout_buffer: Any, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        """A split run's rollout in two parts at once, here and in the helper
        (train/split_rollout.py), its steps then replayed to the callbacks; any other
        environments' as SB3 samples them."""
        if not isinstance(env, SplitEnv):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        if not use_masking:
            raise ValueError("the split rollout always samples with the action masks")
        # A forked helper is ready within milliseconds of the start: the first rollout waits
        # for it (a spawned one takes seconds: this process samples both parts meanwhile).
        # Where a part is sampled changes no bit, only when the second core joins in.
        if self.helper is not None and env.helper is None and \
                self.helper.poll_ready(FORKED_START_WAIT if self.helper.forked else 0.0):
            env.attach(self.helper)
        rollout = join_rollouts(list(env.collect(self.policy, n_rollout_steps, self.gamma)))
        if not replay(self, rollout, callback):
            return False
        fill_sampled(self, rollout)
        callback.on_rollout_end()
        return True

    def learn(self, *args, **kwargs) -> SplitUpdatePPO:  # type: ignore[override]
        if self.device.type != "cpu":
            raise ValueError("the split update runs on the CPU (--update-processes 1 with --device cuda)")
        if self.data is None:
            self._start_helper()
        try:
            return super().learn(*args, **kwargs)
        finally:
            self.close_helper()

    def _minibatch_gradient(self, start: int, stop: int, settings: Settings,
                            parameters: list[th.nn.Parameter]) -> LossTerms:
        """The loss terms of the minibatch ``data.order[start:stop]``; after it, the
        ``parameters``' ``grad`` (views of ``own``) holds its first half's gradient (with
        what the optimizer's ``zero_grad`` adds: the distillation's), ``data.gradient`` its
        second half's."""
        policy, data, own = self.policy, self.data, self.own
        point_gradients(parameters, own.views)
        policy.optimizer.zero_grad(set_to_none=False)  # in place: the views stay
        if stop - start < 2:  # one row: no first half; all of it here, nothing to add
            loss, terms = half_loss(policy, data, start, stop, 1, settings)
            loss.backward()
            data.gradient.zero_()
            return terms
        helped = self.helper is not None and self.helper.poll_ready()
        if helped:
            self.helper.start_half(start, stop, settings)
        loss, terms = half_loss(policy, data, start, stop, 0, settings)
        loss.backward()
        if helped:
            return terms + self.helper.finish_half()
        # No helper (yet): its half here, the same function on the same rows and weights,
        # into the same buffer (the same bits as the helper's).
        point_gradients(parameters, own.helper_views)
        data.gradient.zero_()
        loss, other = half_loss(policy, data, start, stop, 1, settings)
        loss.backward()
        point_gradients(parameters, own.views)
        return terms + other

    def train(self) -> None:
        """SB3's MaskablePPO.train with each minibatch's gradient from two halves."""
        if self.data is None:  # called outside learn (eval.update_speed): a daemon, ends with us
            self._start_helper()
        policy, data = self.policy, self.data
        policy.set_training_mode(True)
        self._update_learning_rate(policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        clip_range_vf = None if self.clip_range_vf is None else \
            self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        settings = Settings(clip_range, clip_range_vf, self.ent_coef, self.vf_coef, self.normalize_advantage)
        buffer = self.rollout_buffer
        rows = buffer.buffer_size * buffer.n_envs
        parameters = list(policy.parameters())
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        continue_training, loss_value = True, 0.0
        with lean_steps(policy.optimizer):
            for epoch in range(self.n_epochs):
                approx_kl_divs = []
                # The permutation SB3's rollout buffer draws (``get``), from the same generator.
                order = np.random.permutation(rows)
                if epoch == 0:
                    data.fill(buffer, order)
                else:
                    data.order.copy_(th.from_numpy(order))
                for start in range(0, rows, self.batch_size):
                    stop = min(start + self.batch_size, rows)
                    terms = self._minibatch_gradient(start, stop, settings, parameters)
                    loss_value = terms.policy + self.ent_coef * terms.entropy + self.vf_coef * terms.value
                    pg_losses.append(terms.policy)
                    value_losses.append(terms.value)
                    entropy_losses.append(terms.entropy)
                    clip_fractions.append(terms.clipped)
                    approx_kl_divs.append(terms.approx_kl)
                    if self.target_kl is not None and terms.approx_kl > 1.5 * self.target_kl:
                        continue_training = False
                        break
                    self.own.flat.add_(data.gradient)  # the minibatch's gradient: this half + the helper's
                    clip_norm(self.own.flat, parameters, self.max_grad_norm)
                    policy.optimizer.step()
                self._n_updates += 1
                if not continue_training:
                    break
        explained_var = explained_variance(buffer.values.flatten(), buffer.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss_value)
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if self.clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)
