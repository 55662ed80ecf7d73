"""Ray RLlib self-play at toy size: one training iteration, then the checkpoint as an agent.

``make test`` installs the ``rllib`` extra, so this runs there; it is skipped only where Ray
is not installed (a base install). The checkpoint-refusal tests need no Ray.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.rllib_agent import META_NAME, RLlibCheckpointError, read_meta
from hgin_env import hollywood_gin_v0
from hgin_env.envs.rllib import MASK_KEY, OBS_KEY, SUMMARY_KEY, RLlibObservationWrapper, from_rllib_obs


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


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    pytest.importorskip("ray.rllib", reason="Ray RLlib not installed (pip install 'hgin_env[rllib]')")
    import ray

    from train.rllib_selfplay import Args, train

    out = tmp_path_factory.mktemp("rllib_runs")
    args = Args(run_name="toy", out_dir=str(out), iterations=2, num_cpus=2, num_env_runners=0,
                train_batch_size=256, minibatch_size=128, num_epochs=1, episode="hand",
                opponents="self:1,snapshot:1,random:1,simple:1,expert:1", snapshot_pool=1, snapshot_every=1,
                checkpoint_every=1, eval_matches=0, hidden="32")
    try:
        checkpoint = train(args)
    finally:
        ray.shutdown()
    return out / "toy", checkpoint


def test_one_iteration_writes_the_run_folder(toy_run):
    run_dir, checkpoint = toy_run
    assert checkpoint == run_dir / "checkpoint"
    for name in ("args.json", "progress.csv", "episodes.csv", "learning_curve.png"):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert (run_dir / "checkpoints" / "iter_000001" / META_NAME).exists()
    with (run_dir / "progress.csv").open() as f:
        progress = list(csv.DictReader(f))
    steps = [int(float(r["env_steps"])) for r in progress]
    assert len(steps) == 2 and 256 <= steps[0] and steps[0] + 256 <= steps[1] <= 2 * 256 + 8  # 4 envs: +-1 step each
    assert float(progress[-1]["perf/env_steps_per_s"]) > 0
    assert "charts/match_win_rate" in progress[0] and "charts/column1_total" in progress[0]
    with (run_dir / "episodes.csv").open() as f:
        episodes = list(csv.DictReader(f))
    assert episodes, "256-step iterations of one-hand episodes finish some hands"
    assert {r["opponent"] for r in episodes} <= {"self", "snapshot", "random", "simple", "expert"}
    meta = read_meta(run_dir)  # a run folder stands for its final checkpoint
    assert meta["format"] == "hgin-rllib-ppo" and meta["observation_size"] == 394


def test_checkpoint_plays_in_the_tournament_and_the_cli(toy_run, monkeypatch, capsys):
    from agents.rllib_agent import RLlibAgent
    from eval.tournament import run_tournament
    from hgin_cli import cli

    run_dir, checkpoint = toy_run
    monkeypatch.chdir(run_dir.parent)
    agent = make_agent("rllib:toy", seed=1, columns=3)  # a relative run folder
    assert isinstance(agent, RLlibAgent)
    env = hollywood_gin_v0.raw_env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    probs = agent.action_probabilities(obs)
    assert probs.sum() == pytest.approx(1.0) and probs[obs["action_mask"] == 0].sum() == 0
    assert obs["action_mask"][agent(obs)] == 1

    rules = {"max_hands": 2}  # short matches: the toy policy rarely knocks
    result = run_tournament([f"rllib:{checkpoint}", "random"], matches=2, workers=1, rules=rules, progress=False)
    assert len(result.rows) == 2 and all(r["hands"] >= 1 for r in result.rows)

    with pytest.raises(RLlibCheckpointError, match="column"):
        make_agent(f"rllib:{checkpoint}", columns=1)
    bad = run_dir / "bad_checkpoint"
    shutil.copytree(checkpoint, bad)
    meta = json.loads((bad / META_NAME).read_text())
    (bad / META_NAME).write_text(json.dumps(dict(meta, observation_version=0)))
    with pytest.raises(RLlibCheckpointError, match="observation layout version 0"):
        make_agent(f"rllib:{bad}")
    (bad / META_NAME).write_text(json.dumps(dict(meta, module="nope")))
    with pytest.raises(RLlibCheckpointError, match="no RLModule"):
        make_agent(f"rllib:{bad}")

    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("quit\n"))
    code = cli.main(["play", "--opponent", f"rllib:{run_dir}", "--seed", "2"])
    out = capsys.readouterr().out
    assert code == 0 and f"rllib:{run_dir}" in out


def test_opponent_mapping_and_episode_logging_without_a_cluster():
    pytest.importorskip("ray.rllib", reason="Ray RLlib not installed (pip install 'hgin_env[rllib]')")
    from types import SimpleNamespace

    from train.rllib_selfplay import EPISODES_METRIC, HollywoodCallbacks, OpponentMapping, opponent_mixture

    mixture = opponent_mixture("self:1,snapshot:1,expert:2", snapshot_pool=2)
    assert mixture == {"self": 0.25, "snapshot": 0.25, "expert": 0.5}
    with pytest.raises(ValueError, match="unknown opponent"):
        opponent_mixture("self:1,ppo:0.5", snapshot_pool=2)
    mapping = OpponentMapping(mixture, ["snapshot_0", "snapshot_1"], seed=0)
    drawn = []
    for i in range(400):
        episode = SimpleNamespace(id_=f"episode{i}")
        modules = [mapping("player_0", episode), mapping("player_1", episode)]
        assert "main" in modules and modules == [mapping("player_0", episode), mapping("player_1", episode)]
        drawn.append(modules)
    assert 150 < sum(mapping.draw(f"episode{i}")[0] for i in range(400)) < 250  # main's seat is random
    assert 150 < sum("expert" in m for m in drawn) < 250

    class Logger:
        def __init__(self):
            self.rows = []

        def log_value(self, key, value, reduce=None):
            assert key == EPISODES_METRIC and reduce == "item_series"
            self.rows.append(value)

    summary = {"won": True, "lost": False, "truncated": False, "columns_won": 2, "columns_lost": 1,
               "column_totals": [100, 40, 0], "opponent_column_totals": [20, 100, 0], "hands": 9,
               "dead_hands": 1, "hand_kinds": {"gin": 2}, "opponent_hand_kinds": {"knock": 3}}
    runner = SimpleNamespace(config=SimpleNamespace(policy_mapping_fn=mapping))
    logger = Logger()
    for i in range(20):
        seat, opponent = mapping.draw(f"episode{i}")
        learner = f"player_{seat}"
        # The last chunk of a long episode may hold only one seat; the summary is the learner's.
        chunk = {learner: SimpleNamespace(get_infos=lambda i: {SUMMARY_KEY: summary})}
        episode = SimpleNamespace(id_=f"episode{i}", agent_episodes=chunk)
        HollywoodCallbacks().on_episode_end(episode=episode, env_runner=runner, metrics_logger=logger)
        HollywoodCallbacks().on_episode_end(episode=SimpleNamespace(id_=f"episode{i}", agent_episodes={}),
                                            env_runner=runner, metrics_logger=logger)
        assert logger.rows[-1]["opponent"] == ("self" if opponent == "main" else
                                               "snapshot" if opponent.startswith("snapshot") else opponent)
    assert len(logger.rows) == 20
    assert logger.rows[0]["col1"] == 100 and logger.rows[0]["my_gin"] == 2 and logger.rows[0]["won"] == 1
