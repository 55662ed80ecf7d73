"""Training that survives a kill: SIGKILL a real training process after its second checkpoint,
resume it, and check the step count, the logs, TensorBoard and the final model."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from agents.ppo import PPOAgent, read_meta
from train.ppo import main as train_main

ROOT = Path(__file__).resolve().parents[1]
N_STEPS, CKPT_EVERY, EVAL_EVERY, TOTAL = 64, 128, 192, 640
TOY = ["--n-envs", "1", "--vec-env", "dummy", "--n-steps", str(N_STEPS), "--batch-size", "64",
       "--n-epochs", "1", "--checkpoint-every", str(CKPT_EVERY), "--eval-every", str(EVAL_EVERY),
       "--eval-matches", "2", "--eval-opponents", "simple", "--self-play-every", "128",
       "--self-play-pool", "2", "--opponents", "simple", "--episode", "hand", "--no-progress-bar"]


def _step_of(path: Path) -> int:
    return int(path.name.split("_")[1])


def _progress_past(run: Path, step: int) -> bool:
    try:
        df = pd.read_csv(run / "progress.csv")
    except (FileNotFoundError, pd.errors.EmptyDataError, pd.errors.ParserError):
        return False
    return "time/total_timesteps" in df and (df["time/total_timesteps"] > step).any()


def _rows_upto(df: pd.DataFrame, column: str, step: int, columns: list[str]) -> pd.DataFrame:
    return df[df[column] <= step][columns].reset_index(drop=True)


def _tb_steps(folder: Path, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder))
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    run = out / "kill"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "train.ppo", "--run-name", "kill", "--out-dir", str(out),
                             "--total-timesteps", "100000", *TOY], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    second = None
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            ckpts = sorted((run / "checkpoints").glob("ppo_*_steps.zip"), key=_step_of)
            if len(ckpts) >= 2:
                second = ckpts[1]
                if _progress_past(run, _step_of(second)):
                    break
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
    assert second is not None and proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    # Whatever the moment of the kill, every checkpoint on disk is complete.
    before = {name: pd.read_csv(run / name) for name in ("progress.csv", "episodes.csv", "eval.csv")}
    killed_ckpts = sorted((run / "checkpoints").glob("*.zip"))
    for ckpt in killed_ckpts:
        assert read_meta(ckpt)["timesteps"] == _step_of(ckpt)
    t = _step_of(second)
    # Resume from the second checkpoint: the run's own folder and arguments.
    assert train_main(["--resume", str(second), "--total-timesteps", str(TOTAL)]) == 0
    return run, t, before, killed_ckpts


def test_resume_reaches_the_runs_total(killed_and_resumed):
    run, t, _, _ = killed_and_resumed
    meta = read_meta(run / "model.zip")
    assert TOTAL <= meta["timesteps"] < TOTAL + N_STEPS
    assert meta["args"]["n_steps"] == N_STEPS and meta["args"]["opponents"] == "simple"  # taken over
    steps = sorted(_step_of(p) for p in (run / "checkpoints").glob("*.zip"))
    assert steps == list(range(CKPT_EVERY, meta["timesteps"], CKPT_EVERY))
    # Nothing else but each checkpoint's resume state (train.callbacks.save_resume_state).
    assert sorted(p.name for p in (run / "checkpoints").iterdir() if not p.name.endswith("_steps.zip")) == \
        sorted(f"ppo_{s}_steps.resume.json" for s in steps)
    for path in (run / "checkpoints").glob("*.zip"):
        assert read_meta(path)["timesteps"] == _step_of(path)


def test_resumed_logs_have_no_lost_or_duplicated_rows(killed_and_resumed):
    run, t, before, _ = killed_and_resumed
    final = read_meta(run / "model.zip")["timesteps"]
    progress = pd.read_csv(run / "progress.csv")
    step = progress["time/total_timesteps"]
    assert step.is_monotonic_increasing
    rollouts = progress[progress["time/fps"].notna()]["time/total_timesteps"].tolist()
    assert rollouts == list(range(N_STEPS, final + 1, N_STEPS))  # every update logged once
    old = before["progress.csv"]
    assert (_rows_upto(progress, "time/total_timesteps", t, list(old.columns))
            .equals(_rows_upto(old, "time/total_timesteps", t, list(old.columns))))

    episodes = pd.read_csv(run / "episodes.csv")
    assert episodes["timesteps"].is_monotonic_increasing and episodes["timesteps"].is_unique
    cols = list(episodes.columns)
    assert _rows_upto(episodes, "timesteps", t, cols).equals(_rows_upto(before["episodes.csv"], "timesteps", t, cols))
    assert episodes["timesteps"].max() > t

    evals = pd.read_csv(run / "eval.csv")
    assert evals["timesteps"].tolist() == list(range(EVAL_EVERY, final + 1, EVAL_EVERY))  # once each
    cols = list(evals.columns)
    assert _rows_upto(evals, "timesteps", t, cols).equals(_rows_upto(before["eval.csv"], "timesteps", t, cols))


def test_tensorboard_continues_at_the_checkpoint(killed_and_resumed):
    run, t, _, _ = killed_and_resumed
    final = read_meta(run / "model.zip")["timesteps"]
    assert len(list((run / "tb").glob("events.out.tfevents.*"))) == 2  # the killed run's and the resumed one's
    assert _tb_steps(run / "tb", "time/fps") == list(range(N_STEPS, final + 1, N_STEPS))
    eval_steps = _tb_steps(run / "tb", "eval/win_rate_vs_simple")
    assert eval_steps == sorted(set(eval_steps)) and len(eval_steps) == final // EVAL_EVERY


def test_self_play_pool_and_final_model_after_resume(killed_and_resumed):
    run, t, _, _ = killed_and_resumed
    snaps = sorted(int(p.stem.split("_")[1]) for p in (run / "snapshots").glob("snapshot_*.zip"))
    assert snaps == list(range(128, read_meta(run / "model.zip")["timesteps"] + 1, 128))
    from hgin_env.match import Match
    from hgin_env.observation import encode

    agent = PPOAgent.load(run / "model.zip")
    match = Match(seed=3)
    for _ in range(40):
        game = match.current_game  # the hand being played (a new one after each hand)
        obs = {"observation": encode(game, game.current_player), "action_mask": game.legal_action_mask()}
        action = agent(obs)
        assert obs["action_mask"][action]
        match.apply(action)


def test_failed_resume_writes_nothing(killed_and_resumed, tmp_path, capsys):
    run, t, _, _ = killed_and_resumed
    args_before = (run / "args.json").read_bytes()
    stamp = {p: p.stat().st_mtime_ns for p in run.rglob("*")}
    # Already at (past) the asked total: refused with one line, nothing touched.
    assert train_main(["--resume", str(run / "model.zip"), "--total-timesteps", "100"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "leaves nothing to train" in err
    assert (run / "args.json").read_bytes() == args_before
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*")} == stamp


def test_resume_flags_override_the_checkpoints_hyperparameters(tmp_path):
    """``--resume CKPT --learning-rate X --ent-coef Y`` trains on with X and Y (args.json
    records the flags; the model must follow them, not the values saved in the zip)."""
    from sb3_contrib import MaskablePPO

    from train.envs import TrainingEnv
    from train.ppo import parse_args, resumed_hyperparameters

    env = TrainingEnv(["random"], rules="hollywood_short")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, learning_rate=3e-4, ent_coef=0.01,
                        device="cpu")
    model.save(tmp_path / "ckpt.zip")
    args = parse_args(["--learning-rate", "1e-4", "--ent-coef", "0.002", "--clip-range", "0.1",
                       "--target-kl", "0.02"])
    loaded = MaskablePPO.load(tmp_path / "ckpt.zip", env=env, device="cpu",
                              custom_objects=resumed_hyperparameters(args))
    assert loaded.learning_rate == 1e-4 and loaded.lr_schedule(1.0) == 1e-4
    assert loaded.ent_coef == 0.002 and loaded.clip_range(1.0) == 0.1 and loaded.target_kl == 0.02


def test_a_resumed_event_file_sorts_after_one_made_in_the_same_second(tmp_path):
    """TensorBoard reads event files in name order: a resume in the crashed run's first second
    (names then differ only in the process id) must still sort after it, so its purge marker
    hides the crashed run's later events."""
    from torch.utils.tensorboard import SummaryWriter  # noqa: F401  (imported before the clock starts)

    from train.callbacks import continued_tensorboard_output

    while time.time() % 1 > 0.2:  # early in a second, so the resume below falls in the same one
        time.sleep(0.01)
    crashed = tmp_path / f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.99999999.0"
    crashed.write_bytes(b"")
    out = continued_tensorboard_output(tmp_path, 10)
    out.close()
    names = sorted(p.name for p in tmp_path.glob("events.out.tfevents.*"))
    assert len(names) == 2 and names[0] == crashed.name


def test_a_pipelined_run_resumes_in_its_folder_and_deals_on(tmp_path):
    """train.ppo --pipeline on (train/pipeline.py): a checkpoint saved while the worker
    was already sampling the next rollout holds a deal state, and the run resumed from it
    in its folder keeps the rows up to the checkpoint and logs every update once."""
    from train.callbacks import read_resume_state

    common = ["--n-envs", "8", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1", "--hidden", "32",
              "--summary", "16", "--card-hidden", "8", "--opponents", "simple", "--eval-every", "0",
              "--checkpoint-every", "512", "--no-progress-bar", "--out-dir", str(tmp_path), "--pipeline", "on"]
    assert train_main(["--total-timesteps", "1024", "--run-name", "p", *common]) == 0
    run = tmp_path / "p"
    first = pd.read_csv(run / "episodes.csv")
    ckpt = run / "checkpoints" / "ppo_512_steps.zip"
    assert read_resume_state(ckpt)["generator_state"]
    assert train_main(["--resume", str(ckpt), "--total-timesteps", "1024", "--no-progress-bar"]) == 0
    assert read_meta(run / "model.zip")["timesteps"] == 1024
    progress = pd.read_csv(run / "progress.csv")
    rollouts = progress[progress["time/fps"].notna()]["time/total_timesteps"].tolist()
    assert rollouts == list(range(256, 1025, 256))  # every update logged once
    episodes = pd.read_csv(run / "episodes.csv")
    assert episodes["timesteps"].is_monotonic_increasing
    assert episodes[episodes.timesteps <= 512].equals(first[first.timesteps <= 512])
