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


@pytest.mark.parametrize("target", ["chosen", "soft"])
def test_the_distillation_gradient_follows_the_seed_and_step(tmp_path, target):
    """What makes a resumed run draw what the uninterrupted one would: an update's
    distillation gradient (added when PPO clears the gradients) depends on the run's seed
    and the step alone; the holdout is whole matches."""
    import torch

    from agents.ppo import SHIPPED_POLICY, PPOAgent
    from train.distill import Distillation

    games = tmp_path / "games"
    record(_args(games, matches=4, search=GUMBEL if target == "soft" else CHEAP))

    def gradient(step: int, seed: int = 3) -> list[torch.Tensor]:
        model = PPOAgent.load(SHIPPED_POLICY).model
        distillation = Distillation(str(games), holdout=0.25, seed=seed, target=target)
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


# ---------------------------------------------------------------- the soft target
#: A cheap critic search that values every candidate it draws (gumbel_k) and records the policy's log-probabilities.
GUMBEL = "search:rollouts=4,policy_plies=4,until=turn,gumbel_k=4"


def _synthetic(logits: list[float], candidates: list[int], means: list[float], visits: list[int]) -> SearchTargets:
    """One recorded decision whose legal moves are the first ``len(logits)`` actions."""
    from train.search_games import MAX_CANDIDATES

    n = len(logits)
    mask = np.zeros((1, 108), dtype=bool)
    mask[0, :n] = True
    row = np.zeros((1, 108), dtype=np.float32)
    row[0, :n] = np.asarray(logits) - np.log(np.exp(logits).sum())
    pad = MAX_CANDIDATES - len(candidates)
    return SearchTargets(np.zeros((1, 394), dtype=np.float32), mask, np.array([candidates[0]]),
                         np.array([candidates[0]]), np.array([candidates + [-1] * pad]),
                         np.array([means + [0.0] * pad], dtype=np.float32), np.array([max(visits)], dtype=np.int32),
                         np.array([1]), np.array([visits + [0] * pad], dtype=np.int32), row)


def test_improved_policy_completes_the_values_and_sharpens_the_prior(tmp_path):
    from train.distill import improved_policy

    t = _synthetic([1.0, 0.0, -1.0, 0.5], candidates=[0, 2], means=[0.1, 0.4], visits=[8, 4])
    prior = np.exp(t.logits[0, :4])
    assert np.allclose(improved_policy(t, 0.0)[0, :4], prior, atol=1e-6)  # c = 0: the prior itself
    # The unvalued moves get the prior-weighted mean of the values: (p0 * 0.1 + p2 * 0.4) / (p0 + p2).
    mix = (prior[0] * 0.1 + prior[2] * 0.4) / (prior[0] + prior[2])
    q = np.array([0.1, mix, 0.4, mix])
    expected = prior * np.exp(3.0 * q)
    assert np.allclose(improved_policy(t, 3.0)[0, :4], expected / expected.sum(), atol=1e-6)
    assert improved_policy(t, 3.0)[0, 4:].sum() == 0  # illegal moves get nothing
    assert improved_policy(t, 1000.0)[0].argmax() == 2  # a large c: the best valued move
    # A candidate valued on no world counts as unvalued.
    unvisited = _synthetic([1.0, 0.0, -1.0, 0.5], candidates=[0, 2], means=[0.1, 9.0], visits=[8, 0])
    assert np.allclose(improved_policy(unvisited, 3.0)[0, :4], prior, atol=1e-6)
    # Games without the policy's log-probabilities have no soft target.
    plain = record(_args(tmp_path / "plain", search="search:value=rollout,rollouts=4,width=1", matches=1))
    assert not plain.has_logits
    with pytest.raises(ValueError, match="log-probabilities"):
        improved_policy(plain, 1.0)


def test_gumbel_search_games_record_visits_and_the_policys_log_probabilities(tmp_path):
    targets = record(_args(tmp_path / "g", search=GUMBEL, matches=1))
    assert targets.has_logits and targets.visits.shape == targets.candidates.shape
    legal_sums = np.where(targets.masks, np.exp(targets.logits), 0.0).sum(axis=1)
    assert np.allclose(legal_sums, 1.0, atol=1e-4)
    valued = targets.candidates >= 0
    assert ((targets.visits > 0) == valued).all() and (targets.visits[:, 0] == targets.worlds).all()
    assert (valued.sum(axis=1) >= np.minimum(4, targets.masks.sum(axis=1))).all()


def test_soft_distillation_logs_the_kl_and_resumes(tmp_path):
    """train.ppo --distill-target soft: the holdout KL and agreements are logged, the lineage
    names the target, and a resumed run goes on distilling. (Its PPO part does not resume
    bit for bit: the matches in progress at a checkpoint are dealt anew; the distillation
    term's draws depend on the seed and step alone, the test below.)"""
    import csv

    from agents.ppo import read_meta
    from train.ppo import main as ppo_main

    games = tmp_path / "games"
    record(_args(games, search=GUMBEL, matches=2))
    common = ["--n-envs", "8", "--n-steps", "32", "--batch-size", "64", "--eval-every", "0",
              "--checkpoint-every", "512", "--distill", str(games), "--distill-holdout", "0.5",
              "--distill-target", "soft", "--distill-c", "5", "--privileged-critic", "--no-progress-bar",
              "--out-dir", str(tmp_path / "runs"), "--opponents", "simple"]
    assert ppo_main([*common, "--run-name", "whole", "--total-timesteps", "1024"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "runs" / "whole" / "progress.csv")))
    logged = [r for r in rows if r["distill/loss"]]
    assert logged and all(float(r["distill/holdout_kl"]) >= 0 and float(r["distill/loss"]) >= 0 for r in logged)
    assert all(0.0 <= float(r["distill/holdout_target_agreement"]) <= 1.0 for r in logged)
    meta = read_meta(tmp_path / "runs" / "whole" / "model.zip")["distilled_from"]
    assert meta["target"] == "soft" and meta["c"] == 5.0
    checkpoint = tmp_path / "runs" / "whole" / "checkpoints" / "ppo_512_steps.zip"
    assert ppo_main(["--resume", str(checkpoint), "--total-timesteps", "1536", "--no-progress-bar"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "runs" / "whole" / "progress.csv")))
    assert max(int(r["time/total_timesteps"]) for r in rows if r["distill/holdout_kl"]) > 1024
    assert read_meta(tmp_path / "runs" / "whole" / "model.zip")["distilled_from"]["target"] == "soft"
    with pytest.raises(ValueError, match="distill-target"):
        ppo_main([*common, "--run-name", "bad", "--distill-target", "hard", "--total-timesteps", "64"])
