"""The rollout on both cores (train/split_rollout.py): a part's rollout is SB3's
``collect_rollouts`` of its environments, to the bit; a run's weights and logs are the same
whether the helper samples part 1 from the start, from a later rollout or never; the
environments' calls reach the part in the helper; a checkpoint holds both parts' deal
state and resumes."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from agents.nets.policy import CardAwarePolicy
from agents.spec import parse_mixture
from hgin_env.rules import get_rules
from train import ppo, run
from train.envs import BatchedVecEnv
from train.rollout import ROLLOUT_WORKERS_KEY, fill_sampled, worker_seed
from train.split_rollout import RolloutPart, SplitEnv
from train.split_update import SplitUpdatePPO, UpdateHelper

SMALL = dict(n_envs=16, n_steps=32, batch_size=128, n_epochs=2, hidden=32, summary=16, card_hidden=8,
             eval_every=0, checkpoint_every=0, progress_bar=False, seed=4, update_processes=2,
             opponents="simple:1,expert:1,self:1")


@pytest.fixture(autouse=True)
def one_torch_thread():
    """As ``train.ppo`` runs a split learner (one thread a process): the helper is forked,
    ready within the first rollout."""
    threads = th.get_num_threads()
    th.set_num_threads(1)
    yield
    th.set_num_threads(threads)


def test_a_part_samples_what_sb3_samples():
    """One part's rollout, filled into the buffer, equals SB3's collect_rollouts on a copy of
    the same environments with the same generator: every array, to the bit."""
    # Matches cut off after one hand: truncations, whose bootstrap is the critic's.
    rules = dataclasses.replace(get_rules("hollywood"), max_hands=1)
    env = BatchedVecEnv(8, ["simple", "expert"], [1, 1], rules=rules, seed=3)
    model = MaskablePPO(CardAwarePolicy, env, n_steps=24, seed=1, device="cpu",
                        policy_kwargs={"columns": 3, "format": "duel", "hidden": 32, "summary": 16, "card_hidden": 8})
    part = RolloutPart(pickle.loads(pickle.dumps(env)), seed=11)

    class Nothing(BaseCallback):
        def _on_step(self) -> bool:
            return True

    _, callback = model._setup_learn(10**6, Nothing())  # SB3's reset and buffers
    th.manual_seed(11)
    truncations = 0
    for _ in range(2):  # two rollouts: the part carries its observations and generator on
        assert model.collect_rollouts(env, callback, model.rollout_buffer, 24)
        expected = {k: copy.deepcopy(getattr(model.rollout_buffer, k)) for k in
                    ("observations", "actions", "rewards", "episode_starts", "values", "log_probs",
                     "action_masks", "advantages", "returns")}
        rollout = part.collect(model.policy, 24, model.gamma)
        truncations += len(rollout.truncations)
        fill_sampled(model, rollout)
        for name, value in expected.items():
            assert np.array_equal(getattr(model.rollout_buffer, name), value), name
    assert truncations > 0


def _run(tmp_path, total: int = 1024, **flags) -> tuple[SplitUpdatePPO, SplitEnv]:
    args = run.resolved(ppo.Args(**{**SMALL, "total_timesteps": total, **flags}))
    args.validate()
    rules = get_rules(args.rules)
    envs = ppo.make_envs(args, rules, *parse_mixture(args.opponents))
    assert isinstance(envs, SplitEnv) and [p.env.num_envs for p in envs.parts] == [8, 8]
    model = ppo.new_model(args, envs, rules, run.Start(run_dir=tmp_path))
    envs.set_live_model(model)
    logged: list = []

    class Record(BaseCallback):  # the finished matches, as the run's logs read them
        def _on_step(self) -> bool:
            for i, info in enumerate(self.locals["infos"]):
                if "episode_summary" in info:
                    logged.append((self.num_timesteps, i, info["episode"]["r"], info.get("opponent_spec")))
            return True

    model.learn(total_timesteps=total, callback=CallbackList([Record()]))
    model.logged = logged
    return model, envs


def _weights(model) -> dict[str, th.Tensor]:
    return {k: v.clone() for k, v in model.policy.state_dict().items()}


def test_the_helper_samples_part_one_to_the_same_bits(tmp_path, monkeypatch):
    """Four rollouts with part 1 in the helper, in this process alone (the helper never
    ready), and handed over at the third rollout: the same weights and finished matches."""
    attached, attach = [], SplitEnv.attach

    def counted_attach(self, helper):
        attached.append(1)
        attach(self, helper)

    monkeypatch.setattr(SplitEnv, "attach", counted_attach)
    helped, envs = _run(tmp_path / "helped", total=2048)
    assert envs.helper is None and len(attached) == 1  # part 1 in the helper, back when learning ended
    with monkeypatch.context() as patch:
        patch.setattr(UpdateHelper, "poll_ready", lambda self, timeout=0.0: False)
        alone, _ = _run(tmp_path / "alone", total=2048)
    assert len(attached) == 1
    real, calls = UpdateHelper.poll_ready, []

    def ready_from_the_third_rollout(self, timeout=0.0):
        # Asked once per rollout while part 1 is here and once per minibatch (8 an update):
        # the 19th question is the third rollout's.
        calls.append(1)
        return real(self, timeout) if len(calls) >= 19 else False

    with monkeypatch.context() as patch:
        patch.setattr(UpdateHelper, "poll_ready", ready_from_the_third_rollout)
        handed, _ = _run(tmp_path / "handed", total=2048)
    assert len(attached) == 2 and len(calls) > 19
    a, b, c = _weights(helped), _weights(alone), _weights(handed)
    for name, value in a.items():
        assert th.equal(value, b[name]) and th.equal(value, c[name]), name
    assert helped.logged and helped.logged == alone.logged == handed.logged
    assert any(i >= 8 for _, i, _, _ in helped.logged)  # part 1's matches reach the callbacks


def test_a_second_learn_and_its_new_helper_sample_to_the_same_bits(tmp_path, monkeypatch):
    """Part 1's large arrays come back through shared memory handed to each new helper: a
    second ``learn`` (a new helper) trains as a run that never had one."""
    def twice(folder):
        model, _ = _run(folder, total=1024)
        model.learn(total_timesteps=1024, reset_num_timesteps=False)
        return _weights(model)

    helped = twice(tmp_path / "helped")
    with monkeypatch.context() as patch:
        patch.setattr(UpdateHelper, "poll_ready", lambda self, timeout=0.0: False)
        alone = twice(tmp_path / "alone")
    for name, value in helped.items():
        assert th.equal(value, alone[name]), name


def test_calls_reach_the_part_in_the_helper(tmp_path):
    model, envs = _run(tmp_path, total=512)
    model._start_helper()
    try:
        while not model.helper.poll_ready():
            pass
        envs.attach(model.helper)
        envs.set_opponent_specs(["random"], [1.0])
        assert envs.env_method("__getattribute__", "opponent_specs") == [["random"]] * 16
        state = envs.generator_state()
        assert len(state[ROLLOUT_WORKERS_KEY]) == 2 and state[ROLLOUT_WORKERS_KEY][0] != state[ROLLOUT_WORKERS_KEY][1]
        with pytest.raises(RuntimeError, match="sampled in whole rollouts"):
            envs.step_async(np.zeros(16, dtype=np.int64))
        masks = envs.action_masks()
        assert masks.shape == (16, 108)
    finally:
        model.close_helper()
    assert envs.helper is None and envs.parts[1].env.opponent_specs == ["random"]
    # Outside learning the parts step here, one after the other, as one VecEnv.
    masks = envs.action_masks()
    observations, rewards, dones, infos = envs.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    assert observations.shape[0] == rewards.shape[0] == dones.shape[0] == len(infos) == 16


def test_a_split_run_checkpoints_both_parts_and_resumes(tmp_path):
    flags = {**SMALL, "checkpoint_every": 512, "total_timesteps": 1024}
    ppo.train(ppo.Args(run_name="split", out_dir=str(tmp_path), **flags))
    ckpt = tmp_path / "split" / "checkpoints" / "ppo_512_steps.zip"
    state = json.loads(ckpt.with_name("ppo_512_steps.resume.json").read_text())["generator_state"]
    assert len(state[ROLLOUT_WORKERS_KEY]) == 2
    resumed = ppo.train(ppo.Args(run_name="again", out_dir=str(tmp_path), resume=str(ckpt),
                                 **{**flags, "total_timesteps": 1536}))
    from agents.ppo import read_meta

    assert read_meta(resumed)["timesteps"] == 1536
    with pytest.raises(run.ResumeError, match="sampled in 2 part.*--rollout-parts 2 --update-processes 2"):
        ppo.train(ppo.Args(run_name="one", out_dir=str(tmp_path), resume=str(ckpt),
                           **{**flags, "rollout_parts": 1, "total_timesteps": 1536}))
    # A one-part checkpoint resumes as one part on auto, and is refused two parts when asked.
    ppo.train(ppo.Args(run_name="single", out_dir=str(tmp_path), **{**flags, "rollout_parts": 1}))
    single = tmp_path / "single" / "checkpoints" / "ppo_512_steps.zip"
    assert ppo.saved_rollout_parts(str(single)) == 1
    assert read_meta(ppo.train(ppo.Args(run_name="single_on", out_dir=str(tmp_path), resume=str(single),
                                        **{**flags, "total_timesteps": 1536})))["timesteps"] == 1536
    with pytest.raises(run.ResumeError, match="sampled in 1 part.*--rollout-parts 1"):
        ppo.train(ppo.Args(run_name="two", out_dir=str(tmp_path), resume=str(single),
                           **{**flags, "rollout_parts": 2, "total_timesteps": 1536}))
    assert worker_seed(4, 0) == 4


def test_rollout_parts_flag():
    assert ppo.Args(**SMALL).sampled_parts == 2
    assert ppo.Args(**{**SMALL, "n_envs": 15}).sampled_parts == 1  # auto, odd: one part, the update still split
    assert ppo.Args(**{**SMALL, "update_processes": 1}).sampled_parts == 1
    assert ppo.Args(**{**SMALL, "rollout_parts": 1}).sampled_parts == 1 and ppo.Args(**SMALL).split_update
    assert ppo.Args(**{**SMALL, "vec_env": "dummy"}).sampled_parts == 1
    with pytest.raises(ValueError, match="--rollout-parts must be 0"):
        ppo.Args(**{**SMALL, "rollout_parts": 3}).validate()
    with pytest.raises(ValueError, match="--rollout-parts 2 samples a part in the split update's helper"):
        ppo.Args(**{**SMALL, "rollout_parts": 2, "update_processes": 1}).validate()
    with pytest.raises(ValueError, match="even --n-envs, not 15"):
        ppo.Args(**{**SMALL, "rollout_parts": 2, "n_envs": 15}).validate()
