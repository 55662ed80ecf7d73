"""Search games (train.search_games) and the distillation loss (train.ppo --distill), at toy
size: what is recorded, that a rerun plays only the missing chunks, worker processes and Ray
tasks give the same files, and a distilled PPO run learns the search's moves and resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from train.search_games import Args, SearchTargets, load_targets, main, record

#: A cheap search (heuristic rollouts, four worlds) keeps the games quick.
CHEAP = "search:rollouts=4,width=1"


def _args(out: Path, **kw) -> Args:
    return Args(**{"out": str(out), "search": CHEAP, "opponents": "simple,expert", "matches": 2, "chunk": 1,
                   "workers": 1, "progress_bar": False, **kw})


def test_records_the_searched_decisions_of_the_search_seat(tmp_path):
    targets = record(_args(tmp_path / "g"))
    assert len(targets) > 20 and set(np.unique(targets.seeds)) == {30_000_000, 30_000_001}
    assert targets.observations.shape == (len(targets), 394) and targets.masks.shape == (len(targets), 108)
    for k in range(len(targets)):
        legal = np.flatnonzero(targets.masks[k])
        cands = targets.candidates[k][targets.candidates[k] >= 0]
        assert len(cands) >= 2 and targets.actions[k] in cands and targets.baselines[k] == cands[0]
        assert set(cands) <= set(legal)
    assert targets.worlds.min() == 4
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["decisions"] == len(targets) and summary["matches"] == 2
    # The same seeds give the same games.
    again = record(_args(tmp_path / "h"))
    for name in SearchTargets.FIELDS:
        assert np.array_equal(getattr(again, name), getattr(targets, name))


def test_a_rerun_plays_only_the_missing_chunks_and_refuses_other_settings(tmp_path, capsys):
    out = tmp_path / "g"
    record(_args(out, matches=1))
    first = out / "chunks" / "30000000.npz"
    stamp = first.stat().st_mtime_ns
    whole = record(_args(out, matches=3))
    assert first.stat().st_mtime_ns == stamp  # kept, not played again
    assert sorted(p.name for p in (out / "chunks").iterdir()) == ["30000000.npz", "30000001.npz", "30000002.npz"]
    assert np.unique(whole.seeds).size == 3
    assert main(["--out", str(out), "--search", CHEAP, "--opponents", "expert", "--matches", "3",
                 "--chunk", "1", "--workers", "1", "--no-progress-bar"]) == 2
    assert "other settings" in capsys.readouterr().err
    with pytest.raises(ValueError, match="holds no recorded search games"):
        load_targets(tmp_path / "empty")
    with pytest.raises(ValueError, match="not a search agent"):
        record(_args(tmp_path / "x", search="expert"))


def test_worker_processes_record_the_same_games(tmp_path):
    inline = record(_args(tmp_path / "inline"))
    pooled = record(_args(tmp_path / "pooled", workers=2))
    for name in SearchTargets.FIELDS:
        assert np.array_equal(getattr(pooled, name), getattr(inline, name))


def test_ray_tasks_record_the_same_games(tmp_path, monkeypatch):
    """RAY_ADDRESS=local starts a fresh local Ray: the cluster code path (remote tasks, the
    driver writing the files), on this machine."""
    inline = record(_args(tmp_path / "inline", matches=1))
    monkeypatch.setenv("RAY_ADDRESS", "local")
    try:
        by_ray = record(_args(tmp_path / "ray", matches=1))
    finally:
        import ray

        ray.shutdown()
    for name in SearchTargets.FIELDS:
        assert np.array_equal(getattr(by_ray, name), getattr(inline, name))


def test_distilled_ppo_learns_the_search_moves_and_resumes(tmp_path):
    """train.ppo --distill: the holdout agreement is logged, the lineage is in the metadata,
    and a resumed run ends where the uninterrupted one does."""
    import csv

    from agents.ppo import read_meta
    from train.ppo import main as ppo_main

    games = tmp_path / "games"
    record(_args(games, matches=4))
    common = ["--n-envs", "8", "--n-steps", "32", "--batch-size", "64", "--eval-every", "0",
              "--checkpoint-every", "512", "--distill", str(games), "--distill-holdout", "0.25",
              "--distill-deviation-weight", "3", "--privileged-critic", "--no-progress-bar",
              "--out-dir", str(tmp_path / "runs"), "--opponents", "simple"]
    assert ppo_main([*common, "--run-name", "whole", "--total-timesteps", "1024"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "runs" / "whole" / "progress.csv")))
    logged = [r for r in rows if r["distill/loss"]]
    assert logged and all(0.0 <= float(r["distill/holdout_agreement"]) <= 1.0 for r in logged)
    # Each update's figures are logged after it, the last one's at the final step.
    assert [int(r["time/total_timesteps"]) for r in logged] == [512, 768, 1024, 1024]
    meta = read_meta(tmp_path / "runs" / "whole" / "model.zip")
    assert meta["distilled_from"]["search"] == CHEAP and meta["distilled_from"]["matches"] == 4
    assert meta["distilled_from"]["decisions"] == len(load_targets(games))
    # Resumed from its 512-step checkpoint: the distillation goes on, the lineage stays.
    checkpoint = tmp_path / "runs" / "whole" / "checkpoints" / "ppo_512_steps.zip"
    assert ppo_main(["--resume", str(checkpoint), "--total-timesteps", "1536", "--no-progress-bar"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "runs" / "whole" / "progress.csv")))
    steps = [int(r["time/total_timesteps"]) for r in rows if r["distill/loss"]]
    assert max(steps) > 1024
    assert read_meta(tmp_path / "runs" / "whole" / "model.zip")["distilled_from"]["search"] == CHEAP


def test_the_distillation_gradient_follows_the_seed_and_step(tmp_path):
    """What makes a resumed run draw what the uninterrupted one would: an update's
    distillation gradient (added when PPO clears the gradients) depends on the run's seed
    and the step alone; the holdout is whole matches."""
    import torch

    from agents.ppo import SHIPPED_POLICY, PPOAgent
    from train.distill import Distillation

    games = tmp_path / "games"
    record(_args(games, matches=4))

    def gradient(step: int, seed: int = 3) -> list[torch.Tensor]:
        model = PPOAgent.load(SHIPPED_POLICY).model
        distillation = Distillation(str(games), holdout=0.25, seed=seed)
        distillation.install(model)
        model.num_timesteps = step
        model.policy.set_training_mode(True)
        model.policy.optimizer.zero_grad()  # PPO's call: the distillation gradient goes in here
        return [p.grad.clone() for p in model.policy.parameters() if p.grad is not None]

    first = gradient(512)
    assert first and any(g.abs().sum() > 0 for g in first)
    assert all(torch.equal(a, b) for a, b in zip(first, gradient(512), strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first, gradient(1024), strict=True))
    d = Distillation(str(games), holdout=0.25, seed=3)
    held = np.unique(d.targets.seeds[d.held_rows])
    assert held.size == 1 and not np.isin(d.targets.seeds[d.train_rows], held).any()
    with pytest.raises(ValueError, match="distill-coef"):
        Distillation(str(games), coef=-1)


def test_distill_flags_are_checked_before_anything_is_written(tmp_path, capsys):
    from train.ppo import main as ppo_main

    with pytest.raises(ValueError, match="no recorded search games"):
        ppo_main(["--distill", str(tmp_path / "nowhere"), "--total-timesteps", "64", "--out-dir", str(tmp_path)])
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    assert os.path.exists(tmp_path)


def test_three_hand_search_games_and_their_distillation(tmp_path):
    """A format's search games: the search at seat s % 3, the opponent at the other two; the
    recorded decisions are three-hand observations, and train.ppo distils games of its own
    rules only."""
    from train.ppo import main as ppo_main

    games = tmp_path / "games"
    targets = record(Args(out=str(games), search="search:rollouts=2,policy_plies=20", opponents="expert",
                          rules="hollywood_three_hand", matches=1, chunk=1, workers=1, progress_bar=False,
                          seed=30_000_001))
    assert len(targets) > 5 and targets.observations.shape[1] > 394  # the three-hand layout
    with pytest.raises(ValueError, match="its search games play 'hollywood_three_hand'"):
        ppo_main(["--distill", str(games), "--total-timesteps", "64", "--out-dir", str(tmp_path / "runs")])
