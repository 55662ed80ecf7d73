"""train.average: the mean of checkpoints' weights, as a loadable checkpoint; mismatches refused."""

from __future__ import annotations

import pytest
import torch
from sb3_contrib import MaskablePPO

from agents.ppo import META_NAME, CheckpointError, PPOAgent, checkpoint_meta, read_meta, save_checkpoint
from hgin_env.rules import get_rules
from train.average import average_checkpoints, main, ship, ship_successor
from train.envs import TrainingEnv


def _model(rules, net_arch=(16,)):
    return MaskablePPO("MlpPolicy", TrainingEnv(["random"], rules=rules), n_steps=64, batch_size=64,
                       device="cpu", seed=0, policy_kwargs={"net_arch": list(net_arch)})


def test_average_is_the_mean_of_the_weights_and_loads(tmp_path):
    rules = get_rules("hollywood_short")
    model = _model(rules)
    paths, states = [], []
    for i in range(3):
        if i:
            model.learn(64, reset_num_timesteps=False)  # different weights at each checkpoint
        paths.append(save_checkpoint(model, tmp_path / f"ppo_{model.num_timesteps}_steps.zip",
                                     checkpoint_meta(rules)))
        states.append({k: v.clone() for k, v in model.policy.state_dict().items()})
    assert any(not torch.equal(states[0][k], states[2][k]) for k in states[0])

    out = average_checkpoints(list(reversed(paths)), tmp_path / "averaged.zip")
    averaged = MaskablePPO.load(out, device="cpu").policy.state_dict()
    for key, value in averaged.items():
        torch.testing.assert_close(value, sum(s[key] for s in states) / 3)
    meta = read_meta(out)
    assert meta["timesteps"] == model.num_timesteps  # the newest input's settings and steps
    assert [a["checkpoint"] for a in meta["averaged_from"]] == [p.name for p in paths]  # by steps
    assert "lineage" not in meta and "imitation" not in meta
    agent = PPOAgent.load(out)
    from hgin_env.envs.aec import raw_env

    env = raw_env(rules="hollywood_short")
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent(observation)]


def test_average_refuses_what_cannot_be_averaged(tmp_path, capsys):
    rules = get_rules("hollywood_short")
    a = save_checkpoint(_model(rules), tmp_path / "a.zip", checkpoint_meta(rules))
    wider = save_checkpoint(_model(rules, net_arch=(32,)), tmp_path / "wider.zip", checkpoint_meta(rules))
    with pytest.raises(CheckpointError, match="network differs"):
        average_checkpoints([a, wider], tmp_path / "out.zip")
    with pytest.raises(ValueError, match="at least 2"):
        average_checkpoints([a], tmp_path / "out.zip")
    with pytest.raises(ValueError, match="one of the inputs"):
        average_checkpoints([a, a], a)
    other_rules = get_rules("hollywood")
    other = save_checkpoint(_model(other_rules), tmp_path / "other.zip", checkpoint_meta(other_rules))
    with pytest.raises(CheckpointError, match="differs"):
        average_checkpoints([a, other], tmp_path / "out.zip")
    with pytest.raises(ValueError, match="lineage"):
        average_checkpoints([a, a], tmp_path / "out.zip", lineage=[{"stage": "no imitation_matches"}])
    assert main([str(a), str(tmp_path / "missing.zip"), "--out", str(tmp_path / "out.zip")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "out.zip").exists()


def test_lineage_is_kept_with_whether_any_stage_imitated(tmp_path):
    import json

    rules = get_rules("hollywood_short")
    model = _model(rules)
    a = save_checkpoint(model, tmp_path / "a.zip", checkpoint_meta(rules))
    model.learn(64)
    b = save_checkpoint(model, tmp_path / "b.zip", checkpoint_meta(rules))
    stages = [{"stage": "from random weights", "imitation_matches": 0}]
    (tmp_path / "lineage.json").write_text(json.dumps(stages))
    assert main([str(a), str(b), "--out", str(tmp_path / "out.zip"), "--lineage", str(tmp_path / "lineage.json")]) == 0
    meta = read_meta(tmp_path / "out.zip")
    assert meta["lineage"] == stages and meta["imitation"] is False
    cloned = [*stages, {"stage": "clone", "imitation_matches": 9}]
    out = average_checkpoints([a, b], tmp_path / "cloned.zip", lineage=cloned)
    assert read_meta(out)["imitation"] is True


def test_ship_copies_the_checkpoint_with_the_lineage_and_refuses_a_bad_one(tmp_path):
    import zipfile

    rules = get_rules("hollywood_short")
    source = save_checkpoint(_model(rules), tmp_path / "avg.zip", checkpoint_meta(rules))
    shipped = tmp_path / "shipped.zip"
    stages = [{"stage": "from random weights", "imitation_matches": 0}]
    meta = ship(source, stages, to=shipped)
    assert meta == read_meta(shipped) and meta["lineage"] == stages and meta["imitation"] is False
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(shipped) as b:  # everything but the metadata as it was
        assert {n: a.read(n) for n in a.namelist() if n != META_NAME} == {
            n: b.read(n) for n in b.namelist() if n != META_NAME}
    before = shipped.read_bytes()
    with pytest.raises(ValueError, match="imitation_matches"):
        ship(source, [{"stage": "no count"}], to=shipped)
    assert shipped.read_bytes() == before


def test_a_successor_ships_on_the_replaced_file_s_lineage_once(tmp_path):
    rules = get_rules("hollywood_short")
    source = save_checkpoint(_model(rules), tmp_path / "avg.zip", checkpoint_meta(rules))
    shipped = tmp_path / "shipped.zip"
    first = [{"stage": "round 1", "run": "r1", "imitation_matches": 0}]
    ship(source, first, to=shipped)
    then = [{"stage": "round 2", "run": "r2", "imitation_matches": 0}, {"stage": "its average", "run": "r2",
                                                                       "imitation_matches": 0}]
    meta = ship_successor(source, then, to=shipped)
    assert meta["lineage"] == first + then and read_meta(shipped) == meta
    before = shipped.read_bytes()
    with pytest.raises(ValueError, match=r"holds runs \['r2'\] already"):
        ship_successor(source, then, to=shipped)  # the file is round 2's already
    assert shipped.read_bytes() == before
