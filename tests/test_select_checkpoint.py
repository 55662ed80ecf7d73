"""eval.select_checkpoint: every checkpoint on the same held-out matches, resumable."""

from __future__ import annotations

from sb3_contrib import MaskablePPO

from agents.ppo import checkpoint_meta, save_checkpoint
from eval.select_checkpoint import best, checkpoints_of, main
from hgin_env.rules import get_rules
from train.envs import TrainingEnv


def test_selection_evaluates_every_checkpoint_and_resumes(tmp_path, capsys):
    rules = get_rules("hollywood_short")
    model = MaskablePPO("MlpPolicy", TrainingEnv(["random"], rules=rules), n_steps=64, batch_size=64,
                        device="cpu", seed=0)
    (tmp_path / "checkpoints").mkdir()
    for steps in (2000, 1000):
        save_checkpoint(model, tmp_path / "checkpoints" / f"ppo_{steps}_steps.zip", checkpoint_meta(rules))
    save_checkpoint(model, tmp_path / "model.zip", checkpoint_meta(rules))
    paths = checkpoints_of(tmp_path)
    assert [p.name for p in paths] == ["ppo_1000_steps.zip", "ppo_2000_steps.zip", "model.zip"]
    # Opponents that knock (an untrained policy against Random plays matches to the hand cap).
    assert main([str(tmp_path), "--matches", "4", "--seed", "7", "--opponents", "simple", "expert"]) == 0
    lines = (tmp_path / "selection.csv").read_text().splitlines()
    assert len(lines) == 1 + 3 * 2
    assert "best against simple" in capsys.readouterr().out
    # A rerun measures nothing again (same matches and seed): the file keeps its rows.
    assert main([str(tmp_path), "--matches", "4", "--seed", "7", "--opponents", "simple"]) == 0
    assert (tmp_path / "selection.csv").read_text().splitlines() == lines
    # model.zip rewritten (a resumed run): measured again, the other files are not.
    model.learn(64)
    save_checkpoint(model, tmp_path / "model.zip", checkpoint_meta(rules))
    assert main([str(tmp_path), "--matches", "4", "--seed", "7", "--opponents", "simple"]) == 0
    more = (tmp_path / "selection.csv").read_text().splitlines()
    assert more[:len(lines)] == lines and len(more) == len(lines) + 1 and "model.zip" in more[-1]
    rows = [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]
    assert best(rows, "simple")["opponent"] == "simple"
    assert main([str(tmp_path / "nothing")]) == 2
    # A step range: only 1000 of the numbered checkpoints (model.zip, unnumbered, always).
    (tmp_path / "selection.csv").unlink()
    assert main([str(tmp_path), "--matches", "4", "--seed", "7", "--opponents", "simple",
                 "--min-steps", "500", "--max-steps", "1500"]) == 0
    ranged = (tmp_path / "selection.csv").read_text()
    assert "ppo_1000_steps" in ranged and "ppo_2000_steps" not in ranged and "model.zip" in ranged
