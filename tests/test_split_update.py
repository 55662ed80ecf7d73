"""The PPO update on both cores (train/split_update.py): each minibatch's gradient as the
sum of its two halves', one computed in a helper process. The update is SB3's MaskablePPO
update as a function (weights equal to float rounding after one update on the same
rollout); the helper and this process compute the second half to the same bits, so a run
is repeatable whenever the helper starts; the flags are checked; a dead helper is named."""

from __future__ import annotations

import copy
import time

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO

from agents.spec import parse_mixture
from hgin_env.rules import get_rules
from train import ppo, run
from train.split_update import SplitUpdatePPO, UpdateHelper

SMALL = dict(n_envs=16, n_steps=32, batch_size=128, n_epochs=2, hidden=32, summary=16, card_hidden=8,
             eval_every=0, checkpoint_every=0, progress_bar=False, total_timesteps=512, seed=4)


def _model(tmp_path, **flags) -> SplitUpdatePPO:
    args = run.resolved(ppo.Args(**{**SMALL, "update_processes": 2, **flags}))
    args.validate()
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=tmp_path))
    assert isinstance(model, SplitUpdatePPO)
    model.learn(total_timesteps=args.total_timesteps)  # one rollout, one update; the rollout stays
    return model


def _update(model, weights, optimizer, train) -> dict[str, th.Tensor]:
    model.policy.load_state_dict(weights)  # in place: the shared parameters stay shared
    model.policy.optimizer.load_state_dict(copy.deepcopy(optimizer))
    np.random.seed(0)  # the minibatches' order
    train()
    return {k: v.clone() for k, v in model.policy.state_dict().items()}


def test_split_update_is_sb3s_update_and_the_helper_changes_no_bit(tmp_path, monkeypatch):
    model = _model(tmp_path)
    weights = copy.deepcopy(model.policy.state_dict())
    optimizer = copy.deepcopy(model.policy.optimizer.state_dict())
    model._start_helper()
    try:
        deadline = time.monotonic() + 60
        while not model.helper.poll_ready():
            assert time.monotonic() < deadline, "the helper did not start"
            time.sleep(0.01)
        helped = _update(model, weights, optimizer, model.train)
        with monkeypatch.context() as patch:  # the helper "still starting": both halves here
            patch.setattr(UpdateHelper, "poll_ready", lambda self, timeout=0.0: False)
            alone = _update(model, weights, optimizer, model.train)
    finally:
        model.close_helper()
    sb3 = _update(model, weights, optimizer, lambda: MaskablePPO.train(model))  # flattens the buffer: last
    moved = 0.0
    for name, value in helped.items():
        assert th.equal(value, alone[name]), name
        th.testing.assert_close(value, sb3[name], rtol=1e-4, atol=1e-6)
        moved = max(moved, float((value - weights[name]).abs().max()))
    assert moved > 1e-4  # the update did move the weights


def test_the_lean_step_is_torchs_clip_and_sb3s_adam_to_float_rounding():
    """One norm of the flat gradient scales it as torch's ``clip_grad_norm_`` does; Adam's
    fused steps (only while the update runs: the optimizer's settings come back) follow its
    steps weight by weight."""
    import train.split_update as split

    generator = th.Generator().manual_seed(0)
    shapes = [(32, 16), (16,), (5, 4, 3), (1,)]
    for scale in (0.01, 10.0):  # under the bound (no change) and over it
        weights = [th.nn.Parameter(th.randn(shape, generator=generator)) for shape in shapes]
        flat = th.randn(sum(w.numel() for w in weights), generator=generator) * scale
        split.point_gradients(weights, split.gradient_views(weights, flat))
        expected = [w.grad.clone() for w in weights]
        reference = [th.nn.Parameter(th.zeros_like(g)) for g in expected]
        for r, g in zip(reference, expected, strict=True):
            r.grad = g
        th.nn.utils.clip_grad_norm_(reference, 0.5)
        split.clip_norm(flat, weights, 0.5)
        for w, r in zip(weights, reference, strict=True):
            th.testing.assert_close(w.grad, r.grad, rtol=1e-6, atol=1e-7)
    lean = [th.nn.Parameter(th.randn(shape, generator=generator)) for shape in shapes]
    plain = [th.nn.Parameter(w.detach().clone()) for w in lean]
    lean_adam, plain_adam = th.optim.Adam(lean, lr=3e-4, eps=1e-5), th.optim.Adam(plain, lr=3e-4, eps=1e-5)
    for _ in range(5):
        for a, b in zip(lean, plain, strict=True):
            a.grad = th.randn(a.shape, generator=generator)
            b.grad = a.grad.clone()
        with split.lean_steps(lean_adam):
            assert all(group["fused"] for group in lean_adam.param_groups)
            lean_adam.step()
        plain_adam.step()
    assert [(g["foreach"], g["fused"]) for g in lean_adam.param_groups] == [(None, None)]  # as saved
    moved = 0.0
    for a, b in zip(lean, plain, strict=True):
        th.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        moved = max(moved, float((a - b).detach().abs().max()))
    assert moved < 1e-5


def test_split_runs_repeat(tmp_path):
    """Two runs of the same flags: the same weights, bit for bit."""
    first = _model(tmp_path / "a").policy.state_dict()
    second = _model(tmp_path / "b").policy.state_dict()
    for name, value in first.items():
        assert th.equal(value, second[name]), name


def test_update_processes_flag():
    assert ppo.Args(update_processes=1).split_update is False
    assert ppo.Args(update_processes=2).split_update is True
    assert ppo.Args(update_processes=2, total_timesteps=0).split_update is False
    assert ppo.Args(update_processes=0, device="cpu").split_update is (run.available_cores() >= 2)
    with pytest.raises(ValueError, match="--update-processes must be 0"):
        ppo.Args(update_processes=3).validate()
    with pytest.raises(ValueError, match="pipelined run"):
        ppo.Args(update_processes=2, pipeline="on").validate()
    assert ppo.Args(pipeline="on").split_update is False
    assert ppo.algorithm(ppo.Args(update_processes=1)) is MaskablePPO


def test_a_dead_helper_is_named(tmp_path):
    model = _model(tmp_path)
    model._start_helper()
    try:
        while not model.helper.poll_ready():
            time.sleep(0.01)
        model.helper.process.kill()
        model.helper.process.join()
        with pytest.raises(RuntimeError, match="helper process died .* --update-processes 1"):
            model.train()
    finally:
        model.close_helper()


def test_saves_with_its_helper_running_and_trains_in_a_daemonic_process(tmp_path, monkeypatch):
    """A checkpoint saved mid-run (the helper and its buffers are not saved) loads as a
    MaskablePPO; a daemonic process (a pool's worker), which may start no child, computes
    both halves itself."""
    import types

    import train.split_update as split

    model = _model(tmp_path)
    model._start_helper()
    try:
        model.save(tmp_path / "mid_run.zip")
    finally:
        model.close_helper()
    loaded = MaskablePPO.load(tmp_path / "mid_run.zip")
    for name, value in model.policy.state_dict().items():
        assert th.equal(value, loaded.policy.state_dict()[name]), name
    monkeypatch.setattr(split.mp, "current_process", lambda: types.SimpleNamespace(daemon=True))

    def no_child(*_):
        raise AssertionError("a daemonic process started a helper")

    monkeypatch.setattr(split, "UpdateHelper", no_child)
    model.learn(total_timesteps=512, reset_num_timesteps=False)
    assert model.num_timesteps == 1024


KILLED_LEARNER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.test_split_update import _model
model = _model(Path({tmp!r}))
model._start_helper()
while not model.helper.poll_ready():
    time.sleep(0.01)
print(model.helper.process.pid, flush=True)
time.sleep(600)
"""


def test_the_helper_ends_when_the_learner_is_killed(tmp_path):
    """A learner killed by SIGKILL runs no atexit handler; its helper must not outlive it
    (an orphan holding the learner's stderr would also hang whoever reads that to its end)."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    learner = subprocess.Popen([sys.executable, "-c", KILLED_LEARNER.format(root=root, tmp=str(tmp_path))],
                               stdout=subprocess.PIPE, text=True, cwd=root)
    helper = int(learner.stdout.readline())
    learner.send_signal(signal.SIGKILL)
    learner.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(helper, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(helper, signal.SIGKILL)
    raise AssertionError("the helper outlived its learner")
