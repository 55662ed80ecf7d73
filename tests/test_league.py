"""The PFSP league: weights, records, the pool, persistence, and a toy league run that
resumes with its league."""

from __future__ import annotations

import json

import numpy as np
import pytest

from train.league import WEIGHT_FLOOR, League, pfsp_weights
from train.ppo import Args, train


def test_pfsp_weights_follow_their_formulas():
    x = np.array([0.1, 0.5, 0.9])
    for mode, f in (("hard", (1 - x) ** 2), ("even", x * (1 - x)), ("uniform", np.ones(3))):
        w = pfsp_weights(x, mode)
        assert w.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(w, (1 - WEIGHT_FLOOR) * f / f.sum() + WEIGHT_FLOOR / 3)
    hard = pfsp_weights(x, "hard", exponent=4.0)
    assert hard[0] > hard[1] > hard[2]  # the hardest opponent (lowest win rate) most
    even = pfsp_weights(x, "even")
    assert even[1] > even[0] and even[1] > even[2]
    assert (pfsp_weights(np.array([1.0, 1.0]), "hard") == 0.5).all()  # all beaten: uniform, no NaN


def test_refusals():
    with pytest.raises(ValueError, match="PFSP mode"):
        pfsp_weights(np.array([0.5]), "easy")
    with pytest.raises(ValueError, match="PFSP mode"):
        League(["simple"], mode="easy")
    with pytest.raises(ValueError, match="differ"):
        League(["simple", "simple"])
    with pytest.raises(ValueError, match="pool_size"):
        League(["simple"], pool_size=0)
    with pytest.raises(ValueError, match="not a league state"):
        League.from_dict({"mode": "hard"})
    with pytest.raises(ValueError, match="--league"):
        train(Args(league=True, self_play_every=0, progress_bar=False))
    with pytest.raises(ValueError, match="--privileged-critic"):
        train(Args(privileged_critic=True, vec_env="dummy", progress_bar=False))


def test_records_decay_and_the_pool_keeps_the_newest_snapshots():
    league = League(["simple", "expert"], pool_size=2, memory=10)
    assert league.members[0].win_rate == 0.5  # Beta(1, 1) prior
    for _ in range(50):
        league.record("simple", 1.0)
        league.record("expert", 0.0)
    league.record("snapshot:gone.zip", 1.0)  # not a member: ignored
    simple, expert = league.members
    assert simple.total_games == expert.total_games == 50
    assert simple.games == pytest.approx(sum(0.9 ** k for k in range(50)))  # decayed counts
    assert simple.win_rate > 0.9 and expert.win_rate < 0.1
    w = league.weights()
    assert w[1] > 0.9 and w[0] > 0  # chase the Expert, keep Simple in play
    for step in (100, 200, 300):
        dropped = league.add_snapshot(f"s{step}.zip", step)
    assert dropped == ["snapshot:s100.zip"]
    assert league.specs == ["simple", "expert", "snapshot:s200.zip", "snapshot:s300.zip"]
    assert [m.name for m in league.members][2:] == ["s200", "s300"]
    again = League.from_dict(json.loads(json.dumps(league.to_dict())))
    assert again.to_dict() == league.to_dict()
    assert "s300" in league.table()
    assert league.add_member("random", 400) and not league.add_member("simple")
    assert league.specs[:3] == ["simple", "expert", "random"]  # fixed members before the snapshots
    assert league.drop_missing() == ["snapshot:s200.zip", "snapshot:s300.zip"]  # no such files here
    assert league.specs == ["simple", "expert", "random"]


@pytest.mark.parametrize("pipeline", ["on", "off"])
def test_toy_league_run_logs_members_and_resumes_with_its_league(tmp_path, pipeline):
    """On both of train.ppo's paths: the pipelined learner (the league's pushes reach the
    rollout worker) and the synchronous loop (--pipeline off)."""
    common = dict(pipeline=pipeline, out_dir=str(tmp_path), n_envs=8, n_steps=64, batch_size=256, n_epochs=1,
                  eval_every=0,
                  opponents="simple", league=True, self_play_every=512, self_play_pool=2,
                  checkpoint_every=1024, privileged_critic=True, shared_trunk=True, progress_bar=False,
                  hidden=32, summary=16, card_hidden=8)
    train(Args(run_name="lg", total_timesteps=2048, **common))
    run = tmp_path / "lg"
    league = League.load(run / "league.json")
    assert league.specs[0] == "simple" and len(league.specs) == 3  # simple + the newest 2 snapshots
    assert all(spec.startswith("snapshot:") for spec in league.specs[1:])
    header = (run / "progress.csv").read_text().splitlines()[0]
    assert "league/win_rate/simple" in header and "league/weight/simple" in header
    saved = League.load(run / "checkpoints" / "league_1024.json")
    assert saved.step == 1024 and len(saved.specs) == 3
    # Resume from the 1024-step checkpoint: the league is the one saved with it (later
    # snapshots and league states are removed with the rest of the run after that step).
    ckpt = run / "checkpoints" / "ppo_1024_steps.zip"
    train(Args(resume=str(ckpt), total_timesteps=1536, **common))
    assert not (run / "checkpoints" / "league_2048.json").exists()
    resumed = League.load(run / "league.json")
    assert resumed.members[0].total_games >= saved.members[0].total_games
    assert {s for s in resumed.specs if "snapshot_000001" in s}  # the snapshot at 1536 joined
