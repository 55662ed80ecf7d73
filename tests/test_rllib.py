"""Ray RLlib on the batched engine at toy size (``train.rllib.ppo``): the runner's vector env,
the card RLModule, a league run and its checkpoint as an agent, resume after SIGKILL, the
SB3 warm start and the export back to ``ppo:``. ``make test`` installs the ``rllib`` extra.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.rllib_agent import META_NAME, RLlibCheckpointError, read_meta
from hgin_env import hollywood_gin_v0
from hgin_env.envs.rllib import MASK_KEY, OBS_KEY, SUMMARY_KEY, RLlibObservationWrapper, from_rllib_obs

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "agents" / "policies" / "hgin_ppo_scratch.zip"
#: A toy run: 8 matches x 16 steps per iteration, one hand per match (so matches finish).
TOY = ["--n-envs", "8", "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1", "--max-hands", "1",
       "--num-cpus", "1", "--hidden", "32", "--summary", "16", "--card-hidden", "8"]


def test_wrapper_renames_keys_and_adds_the_match_summary():
    env = RLlibObservationWrapper(hollywood_gin_v0.raw_env(episode="hand"))
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    space = env.observation_space("player_0")
    assert set(space.spaces) == {OBS_KEY, MASK_KEY}
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        assert space.contains(obs)
        back = from_rllib_obs(obs)
        assert back["action_mask"].dtype == np.int8 and back["observation"].shape == (394,)
        if term or trunc:
            assert info[SUMMARY_KEY]["hands"] == 1
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs[MASK_KEY]))))


def test_bad_checkpoints_are_refused(tmp_path: Path):
    with pytest.raises(RLlibCheckpointError, match="does not exist"):
        make_agent(f"rllib:{tmp_path / 'nope'}")
    with pytest.raises(RLlibCheckpointError, match="no hgin_meta.json"):
        make_agent(f"rllib:{tmp_path}")
    (tmp_path / "model.zip").write_bytes(b"x")
    with pytest.raises(RLlibCheckpointError, match="not an RLlib checkpoint folder"):
        make_agent(f"rllib:{tmp_path / 'model.zip'}")
    (tmp_path / META_NAME).write_text("{not json")
    with pytest.raises(RLlibCheckpointError, match="corrupt"):
        read_meta(tmp_path)
    (tmp_path / META_NAME).write_text(json.dumps({"format": "hgin-maskable-ppo"}))
    with pytest.raises(RLlibCheckpointError, match="format"):
        read_meta(tmp_path)
    with pytest.raises(ValueError, match="needs a run or checkpoint folder"):
        make_agent("rllib:")


def _env(n: int = 8, privileged: bool = True, opponents=("simple", "random")):
    from hgin_env.rules import get_rules
    from train.rllib.env import RLlibBatchedEnv

    rules = get_rules({**get_rules("hollywood").to_dict(), "max_hands": 1})
    return RLlibBatchedEnv({"num_envs": n, "rules": rules.to_dict(), "opponents": list(opponents),
                            "privileged": privileged, "seed": 5, "reward": "points", "match_bonus": 1.0})


def test_batched_env_autoresets_on_the_next_step_as_rllib_expects():
    """A match's last step returns its last observation and the reward; the next step shows
    the new match's first observation for that row, its action ignored (even an illegal
    one), with no reward. Episode lengths are the steps RLlib counts."""
    from gymnasium.vector import AutoresetMode

    from agents.nets.rllib_module import PRIVILEGED_KEY

    env = _env()
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = env.reset()
    assert set(obs) == {OBS_KEY, MASK_KEY, PRIVILEGED_KEY}
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    lengths = np.zeros(env.num_envs, dtype=int)
    waiting = np.zeros(env.num_envs, dtype=bool)
    finished = 0
    for _ in range(300):
        masks = obs[MASK_KEY] > 0
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        actions[waiting] = 0 if not masks[waiting].all() else actions[waiting]  # illegal, ignored
        before = {k: v.copy() for k, v in obs.items()}
        obs, rewards, term, trunc, infos = env.step(actions)
        assert env.observation_space.contains(obs)
        lengths[~waiting] += 1
        assert (rewards[waiting] == 0).all() and not (term | trunc)[waiting].any()
        done = term | trunc
        for i in np.flatnonzero(done):
            finished += 1
            assert infos["_" + SUMMARY_KEY][i] and infos[SUMMARY_KEY][i]["hands"] == 1
            assert infos["opponent_spec"][i] in ("simple", "random")
            assert env.core.episode_length[i] == 0  # the engine dealt the next match
            np.testing.assert_array_equal(obs[OBS_KEY][i], before[OBS_KEY][i])  # the last observation
        for i in np.flatnonzero(waiting):
            lengths[i] = 0  # RLlib's reset step: a new episode starts here
        waiting = done
    assert finished >= 8


def test_actor_outputs_ignore_the_privileged_columns_bit_for_bit():
    import torch
    from ray.rllib.core.columns import Columns

    from agents.nets.rllib_module import PRIVILEGED_KEY, CardRLModule, model_config

    env = _env(n=16)
    obs, _ = env.reset()
    for _ in range(5):
        masks = obs[MASK_KEY] > 0
        obs, *_ = env.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    module = CardRLModule(observation_space=env.single_observation_space, action_space=env.single_action_space,
                          model_config=model_config(3, privileged=obs[PRIVILEGED_KEY].shape[1], seed=1))
    batch = {k: torch.as_tensor(v) for k, v in obs.items()}
    noisy = dict(batch, **{PRIVILEGED_KEY: torch.rand_like(batch[PRIVILEGED_KEY]) * 5 - 2})
    with torch.no_grad():
        for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
            a = forward({Columns.OBS: dict(batch)})[Columns.ACTION_DIST_INPUTS]
            b = forward({Columns.OBS: dict(noisy)})[Columns.ACTION_DIST_INPUTS]
            assert torch.equal(a, b)
            assert (a[batch[MASK_KEY] == 0] == -1e8).all() and (a[batch[MASK_KEY] > 0] > -1e3).all()
        values, noisy_values = module.compute_values({Columns.OBS: batch}), module.compute_values({Columns.OBS: noisy})
    assert values.shape == (16,) and not torch.equal(values, noisy_values)  # the critic reads them


def _toy_config(*flags: str, opponents=("simple", "random")):
    from train.rllib.config import build_config, run_rules
    from train.rllib.ppo import parse_args
    from train.run import resolved

    args = resolved(parse_args([*TOY, *flags]))
    weights = [1 / len(opponents)] * len(opponents)
    return build_config(args, run_rules(args), list(opponents), weights)


def test_batched_runner_returns_episode_chunks_that_add_up():
    """BatchedEnvRunner's whole-batch loop: every row acts at every step; chunks of one
    episode continue each other (observations, t_started); each action is legal and its
    log-probability is that of the logits stored with it; a finished episode's chunks
    add up to the engine's own return and length for the match."""
    import torch
    from ray.rllib.core.columns import Columns

    from train.rllib.runner import BatchedEnvRunner

    runner = BatchedEnvRunner(config=_toy_config("--privileged-critic"))
    returns: dict[str, float] = {}
    lengths: dict[str, int] = {}
    last_obs: dict[str, np.ndarray] = {}
    finished = 0
    for _ in range(4):
        chunks = runner.sample()
        assert sum(len(c) for c in chunks) == 8 * 16
        for c in chunks:
            obs, actions = c.get_observations(), c.get_actions()
            if c.id_ in last_obs:
                np.testing.assert_array_equal(obs[OBS_KEY][0], last_obs[c.id_])
            assert c.t_started == lengths.get(c.id_, 0)
            assert (obs[MASK_KEY][np.arange(len(c)), actions] > 0).all()
            log_probs = torch.log_softmax(torch.as_tensor(c.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS)), -1)
            np.testing.assert_allclose(log_probs[np.arange(len(c)), actions].numpy(),
                                       c.get_extra_model_outputs(Columns.ACTION_LOGP), rtol=1e-4, atol=1e-5)
            returns[c.id_] = returns.get(c.id_, 0.0) + float(np.sum(c.get_rewards()))
            lengths[c.id_] = lengths.get(c.id_, 0) + len(c)
            last_obs[c.id_] = obs[OBS_KEY][-1]
            if c.is_done:
                finished += 1
                info = c.get_infos(-1)
                assert info[SUMMARY_KEY]["hands"] == 1 and info["opponent_spec"] in ("simple", "random")
                assert lengths[c.id_] == info["episode"]["l"]
                np.testing.assert_allclose(returns[c.id_], info["episode"]["r"], rtol=1e-5, atol=1e-5)
        runner.get_metrics()
    assert finished >= 8


def test_one_pass_ppo_loss_equals_rllibs():
    """CardPPOLearner's loss and gradients are RLlib's PPO loss on the same minibatch
    (masked rows, the privileged critic, the shared trunk's embeddings)."""
    import torch
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
    from ray.rllib.core.columns import Columns
    from ray.rllib.evaluation.postprocessing import Postprocessing

    from train.rllib.learner import CardPPOLearner

    env = _env(n=32)
    config = _toy_config("--privileged-critic", "--shared-trunk")
    learner = config.build_learner(env=None, spaces={"default_policy": (env.single_observation_space,
                                                                        env.single_action_space)})
    learner.build()
    assert isinstance(learner, CardPPOLearner)
    assert [g["eps"] for g in learner.get_optimizer("default_policy").param_groups] == [1e-5]  # SB3's Adam
    pipeline = [type(c).__name__ for c in learner._learner_connector.connectors]
    assert pipeline[-2:] == ["NoGradGAE", "DropLossMaskedRows"] and "GeneralAdvantageEstimation" not in pipeline
    module = learner.module["default_policy"]
    obs, _ = env.reset()
    rng = np.random.default_rng(2)
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs[MASK_KEY] > 0])
    gen = torch.Generator().manual_seed(2)
    batch = {Columns.OBS: {k: torch.as_tensor(v) for k, v in obs.items()},
             Columns.ACTIONS: torch.as_tensor(actions),
             Columns.ACTION_LOGP: -torch.rand(32, generator=gen) * 3,
             Columns.ACTION_DIST_INPUTS: torch.randn(32, 110, generator=gen),
             Postprocessing.ADVANTAGES: torch.randn(32, generator=gen),
             Postprocessing.VALUE_TARGETS: torch.randn(32, generator=gen),
             Columns.LOSS_MASK: torch.arange(32) % 5 != 0}
    # Normalised over the rows the loss counts: CardPPOLearner's per-minibatch
    # normalisation (SB3's) is then a no-op, and the two losses must agree.
    adv, valid = batch[Postprocessing.ADVANTAGES], batch[Columns.LOSS_MASK]
    batch[Postprocessing.ADVANTAGES] = (adv - adv[valid].mean()) / adv[valid].std()
    results = []
    for loss_fn in (CardPPOLearner.compute_loss_for_module, PPOTorchLearner.compute_loss_for_module):
        module.zero_grad()
        fwd = module.forward_train(batch)
        loss = loss_fn(learner, module_id="default_policy", config=learner.config, batch=batch, fwd_out=fwd)
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in module.parameters()]))
    (ours, our_grads), (theirs, their_grads) = results
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    shifted = dict(batch, **{Postprocessing.ADVANTAGES: batch[Postprocessing.ADVANTAGES] * 3 + 1})
    with torch.no_grad():  # per-minibatch normalisation: scale and shift do not change the loss
        again = CardPPOLearner.compute_loss_for_module(learner, module_id="default_policy", config=learner.config,
                                                       batch=shifted, fwd_out=module.forward_train(shifted))
    torch.testing.assert_close(again, ours, rtol=1e-5, atol=1e-6)
    for a, b in zip(our_grads, their_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    from train.rllib.learner import DropLossMaskedRows

    kept = DropLossMaskedRows()(rl_module=learner.module, batch={"default_policy": dict(batch)}, episodes=[])
    kept = kept["default_policy"]
    assert Columns.LOSS_MASK not in kept and kept[Columns.ACTIONS].shape == (int(batch[Columns.LOSS_MASK].sum()),)
    torch.testing.assert_close(kept[Columns.OBS][OBS_KEY], batch[Columns.OBS][OBS_KEY][batch[Columns.LOSS_MASK]])
    with torch.no_grad():  # the embeddings' values are the critic's own
        embeddings = module.forward_train(batch)[Columns.EMBEDDINGS]
        torch.testing.assert_close(module.compute_values(batch), module.compute_values(batch, embeddings=embeddings))


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    from train.rllib.ppo import main

    out = tmp_path_factory.mktemp("rllib_runs")
    code = main(["--run-name", "toy", "--out-dir", str(out), "--total-timesteps", "640", "--checkpoint-every", "256",
                 "--league", "--self-play-every", "256", "--opponents", "simple,expert,self", "--privileged-critic",
                 "--eval-matches", "2", "--eval-opponents", "simple", *TOY])
    assert code == 0
    return out / "toy"


def test_league_run_writes_the_run_folder(toy_run):
    for name in ("args.json", "progress.csv", "episodes.csv", "league.json", "league.md", "eval.csv"):
        assert (toy_run / name).exists(), name
    with (toy_run / "eval.csv").open() as f:
        evaluation = list(csv.DictReader(f))
    assert [(r["opponent"], r["matches"]) for r in evaluation] == [("simple", "2")]  # one seed, both seatings
    with (toy_run / "progress.csv").open() as f:
        steps = [int(float(r["env_steps"])) for r in csv.DictReader(f)]
    assert len(steps) == 5 and all(128 <= b - a <= 128 + 8 for a, b in zip([0, *steps[:-1]], steps, strict=True))
    league = json.loads((toy_run / "league.json").read_text())
    specs = [m["spec"] for m in league["members"]]
    assert specs[:3] == ["simple", "expert", "self"] and len(specs) == 5
    assert all(Path(s[len("snapshot:"):]).is_file() for s in specs[3:])
    assert sum(m["total_games"] for m in league["members"]) > 0
    assert "win rate" in (toy_run / "league.md").read_text()
    with (toy_run / "episodes.csv").open() as f:
        opponents = {r["opponent"] for r in csv.DictReader(f)}
    assert opponents and opponents <= {"simple", "expert", "self"} | {Path(s).stem for s in specs[3:]}
    checkpoints = sorted(p.name for p in (toy_run / "checkpoints").iterdir())
    assert checkpoints == [f"step_{s}" for s in steps[1:4:2]]
    meta = read_meta(toy_run)
    assert meta["format"] == "hgin-rllib-ppo" and meta["privileged_size"] > 0 and meta["timesteps"] == steps[-1]


def test_checkpoint_plays_in_the_tournament_and_the_cli(toy_run, monkeypatch, capsys):
    from agents.rllib_agent import RLlibAgent
    from eval.tournament import run_tournament
    from hgin_cli import cli

    monkeypatch.chdir(toy_run.parent)
    agent = make_agent("rllib:toy", seed=1, columns=3)  # a relative run folder
    assert isinstance(agent, RLlibAgent)
    env = hollywood_gin_v0.raw_env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    probs = agent.action_probabilities(obs)
    assert probs.sum() == pytest.approx(1.0) and probs[obs["action_mask"] == 0].sum() == 0
    from agents.batched import make_batched_agent
    from agents.rllib_agent import BatchedRLlibPolicy

    batched = make_batched_agent(f"rllib:{toy_run}", seed=1)  # an opponent for train.ppo and the league
    assert isinstance(batched, BatchedRLlibPolicy)
    masks = obs["action_mask"][None].repeat(3, axis=0)
    np.testing.assert_allclose(batched.probabilities(obs["observation"][None].repeat(3, axis=0), masks)[0], probs,
                               atol=1e-6)
    assert (batched.act(obs["observation"][None].repeat(3, axis=0), masks) == agent(obs)).all()
    result = run_tournament([f"rllib:{toy_run}", "random"], matches=2, workers=1, rules={"max_hands": 2},
                            progress=False)
    assert len(result.rows) == 2 and all(r["hands"] >= 1 for r in result.rows)
    with pytest.raises(RLlibCheckpointError, match="column"):
        make_agent(f"rllib:{toy_run}", columns=1)
    bad = toy_run / "bad_checkpoint"
    shutil.copytree(toy_run / "checkpoint", bad)
    meta = json.loads((bad / META_NAME).read_text())
    (bad / META_NAME).write_text(json.dumps(dict(meta, observation_version=0)))
    with pytest.raises(RLlibCheckpointError, match="observation layout version 0"):
        make_agent(f"rllib:{bad}")
    from hgin_env.rules import get_rules
    from hgin_web.games import build_agent, check_agent_spec

    seat = check_agent_spec("rllib:toy", [toy_run.parent])  # the web table's seat, from --policy-dir
    web_agent = build_agent(seat, seed=3, rules=get_rules("hollywood"))
    assert isinstance(web_agent, RLlibAgent) and obs["action_mask"][web_agent(obs)] == 1
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    code = cli.main(["play", "--opponent", f"rllib:{toy_run}", "--seed", "2"])
    assert code == 0 and f"rllib:{toy_run}" in capsys.readouterr().out


def test_learning_curves_evaluate_both_trainers_checkpoints_on_the_same_deals(toy_run, tmp_path: Path):
    """eval.learning_curves: an RLlib run's checkpoints and an SB3 run's (here the shipped
    policy copied in as one) against the same opponent, the shared start once; a second call
    replays nothing."""
    from eval.learning_curves import evaluate_runs, main, run_checkpoints

    sb3 = tmp_path / "sb3_run"
    (sb3 / "checkpoints").mkdir(parents=True)
    shutil.copy(SCRATCH, sb3 / "checkpoints" / "ppo_300_steps.zip")
    points = run_checkpoints(toy_run)
    assert [s for s, _ in points] == sorted(s for s, _ in points) and all(p.startswith("rllib:") for _, p in points)
    assert run_checkpoints(sb3) == [(300, f"ppo:{sb3 / 'checkpoints' / 'ppo_300_steps.zip'}")]
    out = tmp_path / "curves"
    assert main([str(toy_run), str(sb3), "--opponents", "random", "--matches", "2", "--out", str(out),
                 "--start", f"ppo:{SCRATCH}"]) == 0
    with (out / "curves.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(points) + 1 + 2  # the start in each run, once evaluated
    starts = [r for r in rows if r["steps"] == "0"]
    assert len(starts) == 2 and starts[0]["win_rate"] == starts[1]["win_rate"]
    assert (out / "curves.png").stat().st_size > 1000
    assert "1 of 1 points agree" in (out / "comparison.txt").read_text()  # the shared start, step 0
    assert len(evaluate_runs([toy_run, sb3], ["random"], 2, 6_200_000, out, start=f"ppo:{SCRATCH}",
                             progress=False)) == len(rows)
    with (out / "curves.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(rows)  # nothing replayed or appended


def test_resume_after_sigkill_continues_from_the_checkpoint(tmp_path: Path):
    """A run killed (SIGKILL, with its Ray) after its first checkpoint resumes from it: the
    step count, the league and the (remote) env runner's deal stream; the logs are cut back."""
    run = tmp_path / "killed"
    cmd = [sys.executable, "-m", "train.rllib.ppo", "--run-name", "killed", "--out-dir", str(tmp_path),
           "--total-timesteps", "100000", "--checkpoint-every", "256", "--league", "--self-play-every", "128",
           "--opponents", "simple,random", "--num-env-runners", "1", "--num-cpus-per-env-runner", "0.5", *TOY]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 240
        while not list((run / "checkpoints").glob("step_*/hgin_state.json")) and time.time() < deadline:
            assert proc.poll() is None, "the run ended before its first checkpoint"
            time.sleep(0.5)
        time.sleep(1.0)  # past the checkpoint, into the next iterations
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    checkpoint = min((run / "checkpoints").glob("step_*/hgin_state.json")).parent
    saved = json.loads((checkpoint / "hgin_state.json").read_text())
    at = saved["steps"]
    assert at >= 256 and saved["league"]["members"][2:]  # snapshots joined before the kill
    resumed = subprocess.run([sys.executable, "-m", "train.rllib.ppo", "--resume", str(checkpoint),
                              "--total-timesteps", str(at + 200), "--opponents", "simple,random,expert"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resumed {checkpoint.resolve()} at step {at}" in resumed.stdout
    with (run / "progress.csv").open() as f:
        steps = [int(float(r["env_steps"])) for r in csv.DictReader(f)]
    assert at in steps and steps == sorted(steps)  # the rows after the checkpoint were cut
    first = steps[steps.index(at) + 1]
    assert at + 128 <= first <= at + 136 and steps[-1] >= at + 200
    final = json.loads((run / "checkpoint" / "hgin_state.json").read_text())
    assert final["steps"] == steps[-1] and final["iteration"] == saved["iteration"] + len(steps) - steps.index(at) - 1
    before = {m["spec"]: m["total_games"] for m in saved["league"]["members"]}
    after = {m["spec"]: m["total_games"] for m in final["league"]["members"]}
    assert all(after.get(s, 0) >= g for s, g in before.items() if s in after)
    # An opponent named again joins the resumed league, as in train.ppo (train.run.make_league).
    assert [m["spec"] for m in final["league"]["members"]][:3] == ["simple", "random", "expert"]
    assert "expert" not in before and json.loads((run / "args.json").read_text())["opponents"] == "simple,random,expert"
    assert list(final["generators"]) == ["1"]  # the remote env runner's deal stream...
    assert final["generators"]["1"] != saved["generators"]["1"]  # ...dealt on from the saved state
    assert not [p for p in (run / "checkpoints").iterdir() if p.name.startswith(".")]


def test_sb3_checkpoint_warm_starts_rllib_and_exports_back(tmp_path: Path):
    """``--init-from`` a ``ppo:`` zip (the shipped scratch policy: privileged critic, shared
    trunk, relations, knock bound): the RLlib checkpoint plays as it does; the export back to
    a ``ppo:`` zip gives the same probabilities exactly."""
    from train.rllib.export import export_ppo
    from train.rllib.ppo import Args, train

    checkpoint = train(Args(run_name="warm", out_dir=str(tmp_path), total_timesteps=0, init_from=str(SCRATCH),
                            n_envs=4, n_steps=8, batch_size=32, num_cpus=1))
    args = json.loads((tmp_path / "warm" / "args.json").read_text())
    assert args["relations"] and args["privileged_critic"] and args["shared_trunk"] and args["knock_bound"] == 2.2
    exported = export_ppo(checkpoint, tmp_path / "exported.zip")
    rllib, original, back = (make_agent(s) for s in (f"rllib:{checkpoint}", f"ppo:{SCRATCH}", f"ppo:{exported}"))
    env = hollywood_gin_v0.raw_env()
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs = env.observe(env.agent_selection)
        p = original.action_probabilities(obs)
        np.testing.assert_allclose(rllib.action_probabilities(obs), p, atol=1e-6)
        np.testing.assert_array_equal(back.action_probabilities(obs), p)
        assert rllib(obs) == original(obs) == back(obs)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert json.loads(zipfile.ZipFile(exported).read(META_NAME))["privileged_size"] == 105


@pytest.mark.parametrize("rules", ["hollywood_three_hand", "hollywood_partnership"])
def test_formats_train_on_rllib_and_their_checkpoints_play(tmp_path: Path, rules: str):
    """Three-hand and partnership: the format's layout and privileged columns in the module,
    a league with self-play, the checkpoint's batched evaluation in the format's seatings."""
    from hgin_env.observation import ObservationLayout
    from hgin_env.rules import get_rules
    from train.rllib.ppo import main

    code = main(["--run-name", "f", "--out-dir", str(tmp_path), "--rules", rules, "--total-timesteps", "256",
                 "--checkpoint-every", "0", "--opponents", "simple,self", "--privileged-critic", "--league",
                 "--self-play-every", "128", "--eval-matches", "2", "--eval-opponents", "simple", *TOY])
    assert code == 0
    layout = ObservationLayout.for_rules(get_rules(rules))
    meta = read_meta(tmp_path / "f")
    assert meta["observation_format"] == layout.format and meta["observation_size"] == layout.size
    agent = make_agent(f"rllib:{tmp_path / 'f'}", layout=layout)
    env = hollywood_gin_v0.raw_env(rules=rules)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent(obs)] == 1
    with (tmp_path / "f" / "eval.csv").open() as f:
        assert [r["opponent"] for r in csv.DictReader(f)] == ["simple"]


def test_step_costs_measure_the_engine_by_batch_size(tmp_path: Path):
    from eval.rllib_scaling import step_costs

    costs = step_costs(tmp_path, sizes=(2, 4), steps=3)
    saved = json.loads((tmp_path / "step_costs.json").read_text())
    assert set(costs) == {2, 4} and all(v > 0 for v in costs.values()) and set(saved["ms_per_step"]) == {"2", "4"}


def _pipelined_toy(pipelined: bool, iterations: int) -> tuple[list[list[int]], list[str]]:
    """A toy run with one remote env runner: the weights' sequence numbers of the episodes
    each update learned from; then (pipelined) a league with a snapshot pushed, two more
    iterations, and the opponents the runner has built."""
    import ray
    from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

    from train.league import League
    from train.rllib.ray_setup import learner_net_state, on_runners, push_league

    config = _toy_config("--num-env-runners", "1", "--num-cpus-per-env-runner", "0.5",
                         *(["--pipelined"] if pipelined else []))
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        algo = config.build_algo()
        assert getattr(algo, "pipelined", False) is pipelined
        seen: list[list[int]] = []
        update = algo.learner_group.update

        def spy(*, episodes, **kwargs):
            seen.append(sorted({int(s) for ep in episodes for s in ep.get_extra_model_outputs(WEIGHTS_SEQ_NO)}))
            assert sum(len(ep) for ep in episodes) == 8 * 16  # one whole batch per update
            return update(episodes=episodes, **kwargs)

        algo.learner_group.update = spy
        for _ in range(iterations):
            algo.train()
        built: list[str] = []
        if pipelined:  # the league goes out without waiting for the batch in flight
            league = League(["simple", "random"])
            league.add_snapshot("/nowhere/rllib_128.pt", 128)
            states = {league.specs[-1]: learner_net_state(algo)}
            push_league(algo, league, states, refs := {})
            assert list(refs) == [league.specs[-1]]
            for _ in range(2):
                algo.train()
            built = on_runners(algo, lambda i, env: sorted(env.vec._cache))[0]
        algo.stop()
    finally:
        ray.shutdown()
    return seen, built


def test_pipelined_sampling_learns_from_batches_one_update_old():
    """``--pipelined``: the batch of update k was sampled during update k-1, with the weights
    from before it (one update old), where synchronous PPO learns from the newest weights'
    batch; both learn one whole batch per iteration. The league reaches the runner."""
    (synchronous, _), (pipelined, built) = _pipelined_toy(False, 4), _pipelined_toy(True, 4)
    assert all(len(s) == 1 for s in synchronous + pipelined)  # one weights version per batch
    assert [s[0] for s in synchronous[1:]] == [s[0] + 1 for s in synchronous[:-1]]  # the last update's weights
    assert pipelined[:2] == [synchronous[0]] * 2  # the first two batches: the starting weights
    assert pipelined[2:4] == synchronous[1:3]  # then one update behind
    assert [s[0] for s in pipelined[4:]] == [pipelined[3][0] + 1, pipelined[3][0] + 2]
    assert "snapshot:/nowhere/rllib_128.pt" in built and {"simple", "random"} <= set(built)


def test_pipelined_league_run(tmp_path: Path):
    """A pipelined league run through ``main``: every iteration counts one batch, the wait
    and the update are logged, the league's snapshots join, and its checkpoint plays."""
    from train.rllib.ppo import main

    code = main(["--run-name", "pipe", "--out-dir", str(tmp_path), "--total-timesteps", "512",
                 "--league", "--self-play-every", "128", "--opponents", "simple,random", "--pipelined",
                 "--num-env-runners", "1", "--num-cpus-per-env-runner", "0.5", "--checkpoint-every", "0", *TOY])
    assert code == 0
    run = tmp_path / "pipe"
    with (run / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(float(r["env_steps"])) for r in rows] == [128 * i for i in range(1, 5)]
    assert all(float(r["perf/wait_s"]) >= 0 and float(r["perf/learn_s"]) > 0 for r in rows)
    league = json.loads((run / "league.json").read_text())
    assert len(league["members"]) == 2 + 4 and all(Path(m["spec"][len("snapshot:"):]).is_file()
                                                   for m in league["members"][2:])
    # The run's checkpoint plays: a legal move on an observation dict of the duel it learnt.
    from hgin_env import hollywood_gin_v0

    agent = make_agent(f"rllib:{run}", seed=0, columns=3)
    env = hollywood_gin_v0.env()
    env.reset(seed=3)
    for _ in range(6):
        observation, *_ = env.last()
        action = agent(observation)
        assert observation["action_mask"][action], action
        env.step(action)
    with pytest.raises((FileNotFoundError, ValueError)):
        make_agent(f"rllib:{tmp_path / 'no_such_run'}", seed=0, columns=3)


def test_pipelined_needs_a_remote_runner():
    from train.rllib.ppo import parse_args

    with pytest.raises(ValueError, match="--num-env-runners 1 or more"):
        parse_args(["--pipelined"]).validate()


def test_comparison_follows_the_runs_as_given():
    """``comparison.txt`` is the second run given minus the first, whatever order the rows
    of a resumed ``curves.csv`` have (rows copied from another comparison come first)."""
    from eval.learning_curves import compare

    def row(run: str, rate: float) -> dict:
        return {"run": run, "opponent": "expert", "steps": "100", "win_rate": str(rate),
                "ci_low": str(rate - 0.05), "ci_high": str(rate + 0.05)}

    rows = [row("sb3", 0.60), row("sync", 0.58), row("pipelined", 0.62)]
    assert compare(rows)[0] == "sync minus sb3, win percentage points (95% CI):"
    lines = compare(rows, ["sb3", "pipelined", "sync"])
    assert lines[0] == "pipelined minus sb3, win percentage points (95% CI):"
    assert any("+2.0" in line for line in lines)


def test_pipelined_loss_is_decoupled_ppo():
    """``--pipelined`` adds decoupled PPO's proximal policy to the learner: the learner's own
    log-probabilities before the update and the truncated importance weights; its loss is
    PPO's when the batch is fresh, and when the batch is stale it differs from PPO's against
    the proximal policy by the weights alone (at the proximal weights every ratio is 1)."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.evaluation.postprocessing import Postprocessing

    from train.rllib.learner import BEHAVIOUR_WEIGHT, PROXIMAL_LOGP, CardPPOLearner, ProximalPolicy, action_logp

    env = _env(n=32)
    config = _toy_config("--num-env-runners", "1", "--pipelined")
    learner = config.build_learner(env=None, spaces={"default_policy": (env.single_observation_space,
                                                                        env.single_action_space)})
    learner.build()
    pipeline = [type(c).__name__ for c in learner._learner_connector.connectors]
    assert pipeline[-3:] == ["NoGradGAE", "DropLossMaskedRows", "ProximalPolicy"]
    module = learner.module["default_policy"]
    obs, _ = env.reset()
    rng = np.random.default_rng(3)
    actions = torch.as_tensor(np.array([rng.choice(np.flatnonzero(m)) for m in obs[MASK_KEY] > 0]))
    gen = torch.Generator().manual_seed(3)
    adv = torch.randn(32, generator=gen)
    base = {Columns.OBS: {k: torch.as_tensor(v) for k, v in obs.items()}, Columns.ACTIONS: actions,
            Postprocessing.ADVANTAGES: (adv - adv.mean()) / adv.std(),
            Postprocessing.VALUE_TARGETS: torch.randn(32, generator=gen)}
    with torch.no_grad():
        _, fresh = action_logp(module.forward_train(base)[Columns.ACTION_DIST_INPUTS], actions)
    stale = fresh + 0.3 * torch.randn(32, generator=gen)  # the policy one update earlier

    def loss(batch: dict) -> torch.Tensor:
        with torch.no_grad():
            return CardPPOLearner.compute_loss_for_module(learner, module_id="default_policy", config=learner.config,
                                                          batch=batch, fwd_out=module.forward_train(batch))

    for behaviour in (fresh, stale):
        batch = ProximalPolicy()(rl_module=learner.module, batch={"default_policy": dict(
            base, **{Columns.ACTION_LOGP: behaviour})}, episodes=[])["default_policy"]
        torch.testing.assert_close(batch[PROXIMAL_LOGP], fresh)
        weight = torch.clamp(torch.exp(fresh - behaviour), max=1.0)
        torch.testing.assert_close(batch[BEHAVIOUR_WEIGHT], weight)
        plain = dict(base, **{Columns.ACTION_LOGP: fresh})  # PPO against the proximal policy
        torch.testing.assert_close(loss(batch) - loss(plain), -((weight - 1) * base[Postprocessing.ADVANTAGES]).mean(),
                                   rtol=1e-4, atol=1e-5)
    assert (weight < 1).any() and (weight == 1).any()  # the stale batch: truncated and down-weighted rows


def test_device_chooses_the_learners_gpus(monkeypatch):
    """``--device``: the learner's GPUs (RLlib's ``num_gpus_per_learner``) as torch sees the
    machine, the same choice as ``train.ppo``'s (``train.run.torch_device``)."""
    import torch

    from train.rllib.config import build_config, learner_gpus
    from train.rllib.ppo import parse_args

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert learner_gpus(parse_args([])) == 0.0  # auto on a CPU-only machine
    assert learner_gpus(parse_args(["--device", "cpu"])) == 0.0
    with pytest.raises(ValueError, match="--device cuda: torch .* was built"):
        learner_gpus(parse_args(["--device", "cuda"]))
    with pytest.raises(ValueError, match="torch sees no GPU here"):
        learner_gpus(parse_args(["--num-gpus-per-learner", "1"]))
    with pytest.raises(ValueError, match="--device cpu keeps the learner on the CPU"):
        learner_gpus(parse_args(["--device", "cpu", "--num-gpus-per-learner", "1"]))
    with pytest.raises(ValueError, match="--device must be one of auto, cpu, cuda"):
        parse_args(["--device", "gpu"]).validate()
    # Remote learners may have GPUs on other nodes: cuda is taken as said.
    assert learner_gpus(parse_args(["--device", "cuda", "--num-learners", "1"])) == 1.0

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert learner_gpus(parse_args([])) == 1.0  # auto picks the GPU when torch sees one
    assert learner_gpus(parse_args(["--device", "cuda", "--num-gpus-per-learner", "0.5"])) == 0.5
    assert learner_gpus(parse_args(["--device", "cpu"])) == 0.0
    from train.rllib.config import run_rules

    args = parse_args(["--device", "cuda", *TOY])
    assert build_config(args, run_rules(args), ["simple"], [1.0]).num_gpus_per_learner == 1.0


def test_device_cuda_without_cuda_is_one_line(monkeypatch, tmp_path: Path, capsys):
    import torch

    from train.rllib.ppo import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["--device", "cuda", "--run-name", "x", "--out-dir", str(tmp_path), *TOY]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --device cuda"), err
    assert not (tmp_path / "x").exists()  # refused before anything is written
