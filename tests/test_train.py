"""Training at toy size end to end, and the checkpoint format."""

from __future__ import annotations

import json
import zipfile

import pytest

from agents.ppo import CheckpointError, PPOAgent, read_meta, write_meta
from train.ppo import Args, parse_args, parse_mixture, train


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    args = Args(run_name="toy", out_dir=str(out), total_timesteps=1024, n_envs=8, n_steps=64,
                batch_size=128, n_epochs=1, eval_every=512, eval_matches=2, eval_opponents="simple",
                checkpoint_every=512, self_play_every=512, opponents="simple:1,random:1,self:1",
                progress_bar=False)
    model_path = train(args)
    return out / "toy", model_path


def test_toy_training_writes_the_run_folder(toy_run):
    run_dir, model_path = toy_run
    assert model_path.exists()
    for name in ("args.json", "progress.csv", "episodes.csv", "eval.csv", "learning_curve.png"):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert list((run_dir / "checkpoints").glob("*.zip"))
    assert list((run_dir / "snapshots").glob("snapshot_*.zip"))
    assert "eval/win_rate_vs_simple" in (run_dir / "progress.csv").read_text().splitlines()[0]
    assert "charts/match_win_rate" in (run_dir / "progress.csv").read_text().splitlines()[0]
    meta = read_meta(model_path)
    assert meta["observation_size"] == 394 and meta["rules"]["columns"] == 3


def test_reload_evaluate_and_resume(toy_run, tmp_path):
    from arena.evaluate import evaluate_against

    run_dir, model_path = toy_run
    agent = PPOAgent.load(model_path)
    summary = evaluate_against(agent, "simple", matches=2, seed=0, rules="hollywood")
    assert summary["matches"] == 2 and 0.0 <= summary["a_win_rate"] <= 1.0
    ckpt = sorted((run_dir / "checkpoints").glob("*.zip"))[-1]
    args = Args(run_name="resumed", out_dir=str(tmp_path), total_timesteps=768, n_envs=1, n_steps=256,
                batch_size=128, n_epochs=1, eval_every=0, checkpoint_every=0, resume=str(ckpt),
                progress_bar=False, vec_env="dummy")
    assert read_meta(train(args))["timesteps"] == 768  # the run's total, counted from step 0


def test_toy_training_on_the_previous_path(tmp_path):
    """One TrainingEnv per environment (``--vec-env dummy``/``subproc``), hands as episodes."""
    args = Args(run_name="old", out_dir=str(tmp_path), total_timesteps=256, n_envs=2, n_steps=128,
                batch_size=128, n_epochs=1, eval_every=0, checkpoint_every=0, opponents="simple:1,random:1",
                episode="hand", vec_env="dummy", progress_bar=False)
    assert train(args).exists()
    assert "charts/match_win_rate" in (tmp_path / "old" / "progress.csv").read_text().splitlines()[0]


def test_help_shows_each_default_once(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = capsys.readouterr().out
    assert "(default: )" not in text and "(default: 0 = by --vec-env)" in text and "(default: 'batched')" in text


def test_checkpoints_are_refused_with_clear_messages(toy_run, tmp_path):
    _, model_path = toy_run
    with pytest.raises(CheckpointError, match="does not exist"):
        PPOAgent.load(tmp_path / "missing.zip")
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"not a zip at all")
    with pytest.raises(CheckpointError, match="corrupt"):
        PPOAgent.load(corrupt)
    bare = tmp_path / "bare.zip"
    with zipfile.ZipFile(bare, "w") as zf:
        zf.writestr("data", "{}")
    with pytest.raises(CheckpointError, match="not a hgin_env checkpoint"):
        PPOAgent.load(bare)
    for key, value, message in (("observation_version", 99, "observation layout version"),
                                ("rules_version", 99, "rules version")):
        other = tmp_path / f"other_{key}.zip"
        other.write_bytes(model_path.read_bytes())
        meta = read_meta(model_path)
        meta[key] = value
        write_meta(other, meta)
        with pytest.raises(CheckpointError, match=message):
            PPOAgent.load(other)
    broken = tmp_path / "broken_meta.zip"  # rebuilt, not appended: a second member of one name warns
    with zipfile.ZipFile(model_path) as src, zipfile.ZipFile(broken, "w") as zf:
        for name in src.namelist():
            zf.writestr(name, "{oops" if name == "hgin_meta.json" else src.read(name))
    with pytest.raises(CheckpointError):
        read_meta(broken)
    with pytest.raises(CheckpointError, match="column"):
        PPOAgent.load(model_path, columns=1)
    assert json.loads(json.dumps(read_meta(model_path)))["format"] == "hgin-maskable-ppo"


def test_agent_acts_legally_and_gives_probabilities(toy_run):
    import numpy as np

    from hgin_env.match import Match
    from hgin_env.observation import encode

    agent = PPOAgent.load(toy_run[1])
    match = Match(seed=1)
    for _ in range(30):
        game = match.current_game  # the hand being played (a new one after each hand)
        obs = {"observation": encode(game, game.current_player), "action_mask": game.legal_action_mask()}
        probs = agent.action_probabilities(obs)
        assert probs.sum() == pytest.approx(1.0, abs=1e-5) and (probs[obs["action_mask"] == 0] == 0).all()
        match.apply(agent(obs))
    assert np.isfinite(probs).all()


def test_argument_parsing():
    args = parse_args(["--total-timesteps", "5", "--no-progress-bar", "--opponents", "expert:2,simple"])
    assert args.total_timesteps == 5 and args.progress_bar is False
    assert parse_mixture(args.opponents) == (["expert", "simple"], [2.0, 1.0])
    assert parse_mixture("ppo:runs/a/model.zip:0.5") == (["ppo:runs/a/model.zip"], [0.5])


def test_imitation_records_teacher_and_warm_starts():
    import numpy as np
    from sb3_contrib import MaskablePPO

    from agents.nets.policy import CardAwarePolicy
    from train.envs import TrainingEnv
    from train.imitation import collect, pretrain

    demos = collect(2, teacher="simple", opponents=("random",), workers=1, progress=False)
    assert len(demos) > 20 and demos.observations.shape[1] == 394
    # Every recorded action is legal where it was taken.
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    model = MaskablePPO(CardAwarePolicy, TrainingEnv(["random"]), device="cpu", n_steps=64, batch_size=64)
    first = pretrain(model, demos, epochs=1, progress=False)
    last = pretrain(model, demos, epochs=3, progress=False)
    assert last["loss"] < first["loss"]


def test_demo_main_job_at_toy_size(tmp_path, capsys):
    import torch  # noqa: F401 - imported before the demo runs, as below says (whatever ran first)

    from train.demo import main

    out = tmp_path / "demo"
    assert main(["--timesteps", "256", "--imitation-matches", "2", "--matches", "2", "--n-envs", "1",
                 "--opponents", "simple", "--out", str(out), "--no-shipped"]) == 0
    # The first heading says whether the kernels are pinned (not here: this Python imported
    # torch before the demo could pin them), the second which engine trains and how long its
    # kernels took to be ready.
    kernels, engine = capsys.readouterr().out.splitlines()[:2]
    assert kernels.startswith("== kernels: NOT pinned (torch was imported before train.demo set them)")
    assert engine.startswith("== engine: compiled kernels (numba) ready in ") and " s (compiled once" in engine
    for name in ("model.zip", "learning_curve.png", "results.png", "results.md"):
        assert (out / name).exists(), name
    assert "| demo agent | simple |" in (out / "results.md").read_text()


#: Two settings a machine can differ in: torch's kernels (AVX-512 or AVX2 or none), MKL's
#: code path and the thread counts. The second stands for "another CPU".
DEMO_SETTINGS = ({}, {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2",
                      "MKL_ENABLE_INSTRUCTIONS": "AVX2"})


def _toy_demo(out, settings: dict, *flags: str) -> tuple[str, str]:
    """A toy demo run in a fresh Python under ``settings``: the hash of its trained
    network's weights, and its results table."""
    import hashlib
    import os
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in DEMO_SETTINGS[1] and k != "ATEN_CPU_CAPABILITY"}
    env.update(settings, PYTHONPATH=str(root))
    toy = ["--timesteps", "1024", "--imitation-matches", "4", "--matches", "4", "--n-envs", "4", "--opponents",
           "simple", "--no-shipped", "--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "train.demo", *toy, *flags], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    weights = zipfile.ZipFile(out / "model.zip").read("policy.pth")
    return hashlib.sha256(weights).hexdigest(), (out / "results.md").read_text()


def test_the_pinned_demo_trains_the_same_network_whatever_the_kernels_and_threads(tmp_path):
    """The demo's kernel pins (train.demo.PINNED_KERNELS) make its training the same floats
    under settings that otherwise change them: unpinned (--no-pin), torch's AVX-512 or
    portable kernels and 1 or 2 threads train different networks; pinned, the same one."""
    import torch

    pinned = [_toy_demo(tmp_path / f"pinned{i}", settings) for i, settings in enumerate(DEMO_SETTINGS)]
    assert pinned[0] == pinned[1]
    if torch.backends.cpu.get_cpu_capability() != "DEFAULT":  # a CPU with vector kernels to differ
        free = [_toy_demo(tmp_path / f"free{i}", settings, "--no-pin") for i, settings in enumerate(DEMO_SETTINGS)]
        assert free[0][0] != free[1][0], "the settings no longer change an unpinned training: the test tests nothing"


def test_demo_states_its_expectation_next_to_what_it_got():
    """The demo compares each pair with the recorded run: the same figure, or a difference
    (in capitals) inside or outside the recorded CI, and names a pair it has no record of."""
    from train.demo import EXPECTED, EXPECTED_CPU, EXPECTED_TORCH, expectation

    rate, low, high = EXPECTED[("demo agent", "simple")]
    rows = [{"agent_a": "demo agent", "agent_b": "simple", "a_win_rate": rate, "ci_low": low, "ci_high": high},
            {"agent_a": "demo agent", "agent_b": "expert", "a_win_rate": EXPECTED[("demo agent", "expert")][1],
             "ci_low": 0.1, "ci_high": 0.4},
            {"agent_a": "shipped policy", "agent_b": "expert", "a_win_rate": 0.99, "ci_low": 0.9, "ci_high": 1.0},
            {"agent_a": "demo agent", "agent_b": "search", "a_win_rate": 0.5, "ci_low": 0.3, "ci_high": 0.7}]
    text = expectation(rows, seconds=158.4, torch_version=EXPECTED_TORCH)
    assert "this run 2 min 38 s" in text
    lines = text.splitlines()
    assert f"kernels pinned: the same on the {EXPECTED_CPU} CPUs checked, with torch {EXPECTED_TORCH}" in lines[1]
    assert "on such a CPU every figure must repeat" in lines[1]
    assert lines[2].endswith("as recorded") and f"expected {rate:.1%}" in lines[2]
    assert lines[3].endswith("DIFFERS from the record, inside its CI")
    assert lines[4].endswith("DIFFERS from the record, OUTSIDE its CI")
    assert "no recorded figure" in lines[5]
    # Another torch build: the header says its floats may differ.
    assert "this run's torch is 9.9.9, whose floats may differ" in expectation(rows, 1.0, torch_version="9.9.9")


def test_demo_expectation_is_recorded_for_the_shipped_policy_and_copied_into_the_readme():
    """The demo's recorded figures name the shipped policy file they were measured with (its
    SHA-256), so replacing the policy without recording the demo again fails here; the
    README's sample block shows the same recorded figures and time."""
    import hashlib
    import re
    from pathlib import Path

    from agents.ppo import SHIPPED_POLICY
    from train.demo import EXPECTED, EXPECTED_MACHINE, EXPECTED_SHIPPED_SHA256, EXPECTED_WALL

    assert hashlib.sha256(SHIPPED_POLICY.read_bytes()).hexdigest() == EXPECTED_SHIPPED_SHA256, \
        "the shipped policy changed: run `make demo` and record its figures in train/demo.py and the README"
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    sample = readme[readme.index("== 6. expected (recorded run) against this run =="):]
    sample = sample[:sample.index("```")]
    assert f"recorded {EXPECTED_WALL} on {EXPECTED_MACHINE}, after set-up" in sample
    for (agent, opponent), (rate, low, high) in EXPECTED.items():
        line = re.search(rf"^  {agent} vs {opponent}: expected (.*?), got", sample, re.M)
        assert line and line.group(1) == f"{rate:.1%} ({low:.1%}-{high:.1%})", (agent, opponent)


def test_imitation_returns_follow_the_reward_mode(monkeypatch, tmp_path):
    """The imitation phase computes its returns in the run's ``--reward`` mode (not always
    points/100): train.ppo passes it to ``collect``."""
    import numpy as np

    import train.imitation as imitation
    from train.imitation import collect
    from train.ppo import parse_args, train

    points = collect(2, teacher="simple", opponents=("random",), workers=1, progress=False, reward="points")
    match = collect(2, teacher="simple", opponents=("random",), workers=1, progress=False, reward="match")
    assert np.array_equal(points.actions, match.actions) and not np.allclose(points.returns, match.returns)

    seen = {}

    def fake_collect(*args, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop after collect")

    monkeypatch.setattr(imitation, "collect", fake_collect)
    args = parse_args(["--imitation-matches", "1", "--reward", "columns", "--total-timesteps", "64",
                       "--out-dir", str(tmp_path), "--no-progress-bar", "--shaping", "0.5"])
    with pytest.raises(RuntimeError, match="stop after collect"):
        train(args)
    assert seen.get("reward") == "columns" and seen.get("shaping") == 0.5


def test_imitation_returns_include_the_shaping():
    """With ``shaping=w`` the recorded returns are those the training env pays: at the first
    decision of a match the shaped return is the plain one minus Φ(o_0) (the terms telescope
    under the same γ), and train.ppo passes ``--shaping`` to ``collect``."""
    import numpy as np

    from hgin_env.observation import ObservationLayout
    from hgin_env.rewards import deadwood_potential
    from hgin_env.rules import get_rules
    from train.imitation import _play_and_record

    rules = get_rules("hollywood_short")
    for gamma in (1.0, 0.95):
        plain = _play_and_record("simple", "random", 4, rules, gamma, 1.0, "points")
        shaped = _play_and_record("simple", "random", 4, rules, gamma, 1.0, "points", shaping=2.0)
        assert np.array_equal(plain.actions, shaped.actions)
        phi0 = 2.0 * deadwood_potential(plain.observations[0], ObservationLayout.for_rules(rules))
        assert shaped.returns[0] - plain.returns[0] == pytest.approx(-phi0, abs=1e-4)
        # Between consecutive decisions: the difference of the returns is the shaping term.
        phis = 2.0 * deadwood_potential(plain.observations, ObservationLayout.for_rules(rules))
        diff = shaped.returns - plain.returns
        assert np.allclose(diff, -phis, atol=1e-4)  # each decision's shaped-return offset is -Φ(o_k)


def test_progress_bar_total_is_where_learning_stops():
    """SB3 learns in whole rollouts: the bar's total is the first rollout boundary at or past
    the run's total (50,000 with rollouts of 2,048 ends at 51,200), counted from the step a
    resumed run starts at."""
    from train.callbacks import ProgressFps

    assert ProgressFps.planned_steps(50_000, 0, 2_048) == 51_200
    assert ProgressFps.planned_steps(4_096, 0, 2_048) == 4_096
    assert ProgressFps.planned_steps(1_100, 256, 256) == 1_280
    assert ProgressFps.planned_steps(1_000, 2_000, 256) == 2_000
    with pytest.raises(ValueError, match="rollout size"):
        ProgressFps.planned_steps(10, 0, 0)


@pytest.mark.parametrize("profile,partner", [("gin_three_hand", ""), ("gin_partnership", "simple")])
def test_a_format_trains_on_the_batched_engine_by_default(profile, partner, tmp_path):
    """``train.ppo --rules FORMAT``: the batched engine, the format's layout in the network
    and the checkpoint, the periodic evaluation in the format's seatings, a privileged
    critic over every hidden hand, a partner agent."""
    from hgin_env.batch import privileged_size
    from hgin_env.observation import ObservationLayout
    from hgin_env.rules import get_rules

    # A low target and a hand cap: an untrained deterministic policy may never knock, and two
    # copies of it at a three-hand table redeal dead hands until the cap.
    rules = get_rules(profile).replace(target=40, max_hands=12, name=profile)
    args = Args(run_name="fmt", out_dir=str(tmp_path), rules=rules.to_dict(), total_timesteps=512, n_envs=8,
                n_steps=32,
                batch_size=128, n_epochs=1, eval_every=256, eval_matches=2, eval_opponents="simple",
                checkpoint_every=0, opponents="simple:1,expert:1", privileged_critic=True, partner=partner,
                progress_bar=False)
    assert args.vec_env == "batched"
    model_path = train(args)
    meta = read_meta(model_path)
    assert meta["observation_format"] == rules.format
    assert meta["observation_size"] == ObservationLayout.for_rules(rules).size
    assert meta["privileged_size"] == privileged_size(rules.format)
    agent = PPOAgent.load(model_path, layout=ObservationLayout.for_rules(rules))
    assert agent.model.policy.format == rules.format
    rows = (tmp_path / "fmt" / "eval.csv").read_text().splitlines()
    assert len(rows) >= 2 and rows[1].split(",")[1] == "simple"


def test_a_run_shorter_than_eval_every_evaluates_at_its_end_and_prints_a_summary(tmp_path, capsys):
    """``--eval-every`` is 100,000 by default: a shorter run still evaluates once, at its last
    step, and every run ends with its steps, steps/s, win rates and where its curve is."""
    import csv

    args = Args(run_name="short", out_dir=str(tmp_path), total_timesteps=256, n_envs=8, n_steps=32,
                batch_size=128, n_epochs=1, eval_matches=2, eval_opponents="simple", checkpoint_every=0,
                opponents="simple", rules="hollywood_short", progress_bar=False)
    assert args.eval_every > args.total_timesteps
    train(args)
    with (tmp_path / "short" / "eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["timesteps"], r["opponent"], r["matches"]) for r in rows] == [("256", "simple", "2")]
    lines = capsys.readouterr().out.splitlines()[-4:]
    assert lines[0].startswith(f"run {tmp_path / 'short'}: 256 steps in ") and lines[0].endswith(
        "steps/s (evaluations included)")
    assert lines[1].startswith("training matches: ")
    assert lines[2].startswith("evaluation at step 256 (2 duplicate matches each): simple ")
    assert lines[3] == (f"curve: {tmp_path / 'short' / 'learning_curve.png'} "
                        f"(python -m train.plots {tmp_path / 'short'} redraws it)")


def test_run_summary_reads_the_logs(tmp_path):
    """The summary's win rates are the newest 100 training matches' (per opponent, the
    run's snapshots as one) and the newest evaluation's."""
    import csv

    from train.callbacks import EPISODE_FIELDS
    from train.summary import run_summary

    run = tmp_path / "run"
    run.mkdir()
    with (run / "episodes.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=EPISODE_FIELDS, restval=0)
        writer.writeheader()
        for i in range(150):  # the first 50 (all lost) fall out of the window
            writer.writerow({"timesteps": i, "opponent": "simple" if i % 2 else f"ppo:{run}/snapshots/s.zip",
                             "won": int(i >= 50 and i % 4 == 1), "hands": 4, "my_knock": 1, "points": 30,
                             "opp_points": 10})
    (run / "eval.csv").write_text("timesteps,opponent,matches,win_rate,ci_low,ci_high,columns_won,hands_per_match\n"
                                  "100,simple,10,0.1,0.0,0.3,0.5,9\n200,simple,10,0.25,0.05,0.45,1,9\n"
                                  "200,expert,10,0.0,0.0,0.0,0,9\n")
    text = run_summary(run, steps=300, trained_steps=100, seconds=50.0)
    assert text.splitlines() == [
        f"run {run}: 300 steps (100 of them in this run, resumed at 200) in 50 s of training, "
        "2 steps/s (evaluations included)",
        "training matches: 150 finished; the last 100 won 25% (self-play 0% of 50, simple 50% of 50); "
        "their hands: 25% won, +5.0 points per hand",
        "evaluation at step 200 (10 duplicate matches each): simple 25.0% (5.0%-45.0%), expert 0.0% (0.0%-0.0%)"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "none finished yet" in run_summary(empty, 64, 64, 1.0) and "evaluation: none" in run_summary(
        empty, 64, 64, 1.0)
    assert run_summary(empty, 0, 0, 0.0) == f"run {empty}: no PPO steps"
    (empty / "imitation.json").write_text("{}")
    assert run_summary(empty, 0, 0, 0.0) == f"run {empty}: no PPO steps (the imitation warm start alone)"


def test_flag_combinations_are_refused_by_the_arguments():
    """``Args.validate`` (called by ``train`` before anything is built) names the flags."""
    Args().validate()
    for args, message in ((Args(vec_env="dummy", opponents="simple,self"), "'self' opponent needs --vec-env batched"),
                          (Args(episode="hand", rules="hollywood_three_hand"),
                           "--episode hand plays one hand of the duel"),
                          (Args(pfsp="easy"), "--pfsp must be one of hard, even, uniform"),
                          (Args(rules="hollywood_three_hand", imitation_matches=2),
                           "--imitation-matches records duel demonstrations"),
                          (Args(rules="hollywood_three_hand", partner="simple"), "--partner is for a partnership"),
                          (Args(rules="gin_partnership", partner="simple", vec_env="dummy"),
                           "--partner plays the learner's partner on the batched engine"),
                          (Args(league=True), "--league adds a snapshot every --self-play-every steps"),
                          (Args(privileged_critic=True, imitation_matches=5), "--privileged-critic is for the card"),
                          (Args(opponents=""), "no opponents"),
                          (Args(pipeline="maybe"), "--pipeline must be auto, on or off"),
                          (Args(pipeline="on", vec_env="dummy"), "--pipeline on samples the batched engine"),
                          (Args(device="gpu"), "--device must be one of auto, cpu, cuda")):
        with pytest.raises(ValueError, match=message):
            args.validate()


def test_the_demo_says_how_many_steps_its_bar_counts():
    from train.demo import training_steps

    assert training_steps(50_000, 2_048) == ("50,000 steps (the bar counts to 51,200: PPO learns in whole "
                                             "rollouts of 2,048 decisions)")
    assert training_steps(4_096, 2_048) == "4,096 steps"


# ---------------------------------------------------------------------- the pipelined learner and --device
PIPELINE_TOY = dict(total_timesteps=1024, n_envs=8, n_steps=32, batch_size=128, n_epochs=2, eval_every=0,
                    checkpoint_every=512, self_play_every=512, opponents="simple:1,expert:1,self:1",
                    progress_bar=False, hidden=32, summary=16, card_hidden=8, seed=5, pipeline="on")


def _policy_state(path):
    import io

    import torch

    with zipfile.ZipFile(path) as z:  # no map_location: the tensors must have been saved on the CPU
        return torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)


def test_the_pipelined_learner_is_repeatable_and_resumes_on_both_paths(tmp_path):
    """``train.ppo --pipeline on`` samples in a worker process (train/pipeline.py): the same seed
    gives the same weights, its callbacks write what a synchronous run writes, and its
    checkpoint resumes on the pipelined path and on the synchronous one."""
    assert not Args().pipelined  # the synchronous loop until the pipeline measures faster
    assert Args(pipeline="auto").pipelined and not Args(pipeline="auto", vec_env="dummy").pipelined
    assert not Args(total_timesteps=0).pipelined  # imitation only: no worker to start
    first = train(Args(run_name="a", out_dir=str(tmp_path), **PIPELINE_TOY))
    again = train(Args(run_name="b", out_dir=str(tmp_path), **PIPELINE_TOY))
    a, b = _policy_state(first), _policy_state(again)
    assert a.keys() == b.keys() and all(a[k].equal(b[k]) for k in a)
    run = tmp_path / "a"
    header = (run / "progress.csv").read_text().splitlines()[0]
    assert "train/behaviour_weight" in header and "charts/match_win_rate" in header
    steps = [int(line.split(",")[0]) for line in (run / "episodes.csv").read_text().splitlines()[1:]]
    assert steps and steps == sorted(steps) and all(s % 8 == 0 and 0 < s <= 1024 for s in steps)
    assert (run / "snapshots" / "snapshot_000000512.zip").exists()
    ckpt = run / "checkpoints" / "ppo_512_steps.zip"
    assert "generator_state" in json.loads((run / "checkpoints" / "ppo_512_steps.resume.json").read_text())
    for pipeline in ("on", "off"):
        resumed = train(Args(run_name=f"resumed_{pipeline}", out_dir=str(tmp_path), resume=str(ckpt),
                             **{**PIPELINE_TOY, "total_timesteps": 768, "pipeline": pipeline}))
        assert read_meta(resumed)["timesteps"] == 768


def test_several_rollout_workers_sample_one_wide_rollout_and_resume(tmp_path):
    """``--rollout-workers 2``: two worker processes, each n_envs / 2 of the environments, their
    parts joined into one rollout (worker 0's environments first); the checkpoint holds each
    worker's deal state, and it resumes with the same count only (said in one line)."""
    import dataclasses
    import functools

    import numpy as np

    from hgin_env.rules import get_rules
    from train.pipeline import ROLLOUT_WORKERS_KEY, PipelinedEnv, worker_seed
    from train.ppo import Start, new_model, worker_envs
    from train.run import ResumeError, resolved

    assert worker_seed(5, 0) == 5 and worker_seed(5, 1) != worker_seed(5, 2)
    two = {**PIPELINE_TOY, "rollout_workers": 2}
    # (Repeatable: the joined rollout below is the workers' own, each seeded; one worker's
    # run trains twice to equal weights in the test above.)
    train(Args(run_name="w2", out_dir=str(tmp_path), **two))
    ckpt = tmp_path / "w2" / "checkpoints" / "ppo_512_steps.zip"
    state = json.loads((ckpt.parent / "ppo_512_steps.resume.json").read_text())["generator_state"]
    assert len(state[ROLLOUT_WORKERS_KEY]) == 2
    resumed = train(Args(run_name="w2r", out_dir=str(tmp_path), resume=str(ckpt), **{**two, "total_timesteps": 768}))
    assert read_meta(resumed)["timesteps"] == 768
    with pytest.raises(ResumeError, match="sampled in 2 part.*--update-processes 2 .*--rollout-workers 2"):
        train(Args(run_name="w2x", out_dir=str(tmp_path), resume=str(ckpt),  # (synchronous: no worker to start)
                   **{**PIPELINE_TOY, "pipeline": "off", "rollout_workers": 1, "update_processes": 1,
                      "total_timesteps": 768}))
    with pytest.raises(ValueError, match="--rollout-workers 3 share --n-envs 8 evenly"):
        Args(**{**PIPELINE_TOY, "rollout_workers": 3}).validate()
    with pytest.raises(ValueError, match="--rollout-workers 2: .*--pipeline on"):
        Args(**{**PIPELINE_TOY, "rollout_workers": 2, "pipeline": "off"}).validate()

    # The joined rollout is the two workers' own rollouts side by side.
    args = resolved(Args(run_name="parts", out_dir=str(tmp_path), **two))
    rules = get_rules(args.rules)
    specs, weights = parse_mixture(args.opponents)
    part = [functools.partial(worker_envs, dataclasses.asdict(dataclasses.replace(
        args, n_envs=4, seed=worker_seed(args.seed, w))), rules, specs, weights) for w in range(2)]
    both, alone = PipelinedEnv(part), [PipelinedEnv(f) for f in part]
    try:
        model = new_model(args, both, rules, Start(run_dir=tmp_path / "parts"))
        for w, env in enumerate([both, *alone]):
            env.start_policy(model, seed=7 if w == 0 else worker_seed(7, w - 1))
            env.send_weights(model.policy)
            env.request_rollout(4)
        joined, parts = both.receive_rollout(), [env.receive_rollout() for env in alone]
        for name in ("observations", "actions", "rewards", "log_probs", "action_masks", "dones"):
            assert np.array_equal(getattr(joined, name), np.concatenate([getattr(p, name) for p in parts], axis=1))
        assert joined.generator_state == {ROLLOUT_WORKERS_KEY: [p.generator_state for p in parts]}
        assert [len(step) for step in joined.infos] == [8] * 4
    finally:
        for env in [both, *alone]:
            env.close()


def test_the_decoupled_loss_is_ppos_on_a_synchronous_rollout():
    """The pipelined buffer's minibatch advantages are SB3's normalised ones times the
    truncated behaviour weight: unchanged where the weights are 1 (a synchronous rollout)."""
    import gymnasium
    import numpy as np
    import torch

    from train.pipeline import DecoupledRolloutBuffer

    buffer = DecoupledRolloutBuffer(4, gymnasium.spaces.Box(-1, 1, (3,)), gymnasium.spaces.Discrete(2), "cpu",
                                    n_envs=2)
    buffer.reset()
    rng = np.random.default_rng(0)
    buffer.advantages[:] = rng.normal(size=(4, 2))
    buffer.full = True
    plain = buffer.swap_and_flatten(buffer.advantages.copy()).flatten()
    order = np.arange(8)
    batch = next(buffer.get(8))  # flattens the arrays; indices are drawn at random
    expected = torch.as_tensor((plain - plain.mean()) / (plain.std(ddof=1) + 1e-8), dtype=torch.float32)
    assert torch.allclose(torch.sort(batch.advantages).values, torch.sort(expected).values, atol=1e-6)
    buffer.behaviour_weights[:] = 0.5
    assert torch.allclose(buffer._get_samples(order).advantages, 0.5 * expected, atol=1e-6)
    buffer.normalize = False
    assert torch.allclose(buffer._get_samples(order).advantages, 0.5 * torch.as_tensor(plain, dtype=torch.float32))


def test_a_failing_rollout_worker_is_reported_with_its_traceback():
    import functools

    from train.pipeline import PipelinedEnv, WorkerError

    with pytest.raises(WorkerError, match="(?s)rollout worker failed.*ValueError"):
        PipelinedEnv(functools.partial(int, "not an environment"))


def test_device_and_thread_choices(monkeypatch):
    import torch

    from train.run import available_cores, torch_device, torch_threads

    assert torch_device("cpu") == "cpu"
    assert torch_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="--device cuda: torch .* was built"):
            torch_device("cuda")
        with pytest.raises(ValueError, match="--device cuda"):
            Args(device="cuda").validate()
    with pytest.raises(ValueError, match="--device must be one of"):
        torch_device("tpu")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert torch_threads(3) == 3
    assert torch_threads(0) == max(1, available_cores() // 2)
    assert torch_threads(0, processes=2) == max(1, available_cores() // 4)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert torch_threads(0, processes=2) == 1 and torch_threads(4) == 4
    with pytest.raises(ValueError, match="--torch-threads must be >= 0"):
        torch_threads(-1)


def test_device_cuda_without_cuda_is_one_line(monkeypatch, tmp_path, capsys):
    """The command line refuses ``--device cuda`` on a machine without CUDA in one line
    (exit status 2, nothing written), as ``train.rllib.ppo`` does (tests/test_rllib.py)."""
    import torch

    from train.ppo import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["--device", "cuda", "--run-name", "x", "--out-dir", str(tmp_path), "--total-timesteps", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --device cuda"), err
    assert not (tmp_path / "x").exists()


def test_a_model_trained_with_a_device_saves_weights_that_load_on_the_cpu(tmp_path):
    """``--device`` (here cpu, the same code path as cuda) on both paths: the checkpoint's
    tensors are saved on the CPU and the ``ppo:`` agent loads it."""
    for pipeline in ("on", "off"):
        path = train(Args(run_name=f"dev_{pipeline}", out_dir=str(tmp_path), device="cpu",
                          **{**PIPELINE_TOY, "pipeline": pipeline, "total_timesteps": 256,
                             "checkpoint_every": 0, "self_play_every": 0}))
        assert all(t.device.type == "cpu" for t in _policy_state(path).values())
        assert PPOAgent.load(path).model.device.type == "cpu"
