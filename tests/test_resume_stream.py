"""``train.ppo --resume`` (issue 22): the deal stream continues where the checkpoint left it
(the vector env's generator state is saved beside each checkpoint), and the train/* metrics
of the last update before the checkpoint still reach progress.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd

from train.envs import BatchedVecEnv
from train.ppo import main as train_main


def _random_step(env: BatchedVecEnv, rng: np.random.Generator) -> None:
    masks = env.action_masks()
    env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))


def test_train_ppo_resume_continues_the_deal_stream():
    rng = np.random.default_rng(0)
    first = BatchedVecEnv(3, ["random"], seed=4, rules={"max_hands": 1})
    first.reset()
    dealt = set(first.core.batch.match_seeds.tolist())
    for _ in range(60):
        _random_step(first, rng)
    state = first.generator_state()
    dealt |= set(first.core.batch.match_seeds.tolist())
    expected = first.core.batch.rng.integers(2**63 - 1, size=3).tolist()  # the next seeds it would draw
    resumed = BatchedVecEnv(3, ["random"], seed=4, rules={"max_hands": 1})  # as train.ppo builds it
    resumed.continue_from(state)
    resumed.reset()
    seeds = resumed.core.batch.match_seeds.tolist()
    assert seeds == expected and not set(seeds) & dealt  # no match of the run is dealt again
    assert (resumed.core.batch.current_player == resumed.core.seat).all()
    assert resumed.core.episode_length.sum() == 0
    _random_step(resumed, rng)  # and it plays on


def test_train_ppo_resume_keeps_the_last_train_metrics_row(tmp_path):
    toy = ["--vec-env", "batched", "--n-envs", "2", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1",
           "--checkpoint-every", "64", "--eval-every", "0", "--opponents", "simple", "--no-progress-bar",
           "--out-dir", str(tmp_path), "--total-timesteps", "192"]
    assert train_main(["--run-name", "a", *toy]) == 0
    run = tmp_path / "a"
    whole = pd.read_csv(run / "progress.csv")
    checkpoint = run / "checkpoints" / "ppo_128_steps.zip"
    assert checkpoint.exists() and (run / "checkpoints" / "ppo_128_steps.resume.json").exists()
    assert train_main(["--resume", str(checkpoint), "--no-progress-bar"]) == 0
    resumed = pd.read_csv(run / "progress.csv")
    train_cols = [c for c in whole.columns if c.startswith("train/")]
    assert train_cols
    last = whole[whole["time/total_timesteps"] == 192][train_cols].reset_index(drop=True)
    again = resumed[resumed["time/total_timesteps"] == 192][train_cols].reset_index(drop=True)
    assert len(again) == 1 and not again.isna().all(axis=None)
    # The update made just before the checkpoint: the same figures as in the run never stopped.
    for col in ("train/loss", "train/approx_kl", "train/clip_fraction", "train/learning_rate"):
        if col in train_cols:
            assert np.isclose(again[col][0], last[col][0]), col
