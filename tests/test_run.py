"""``train/run.py``: what both trainers' runs share behaves one way for both (the run folder
of a checkpoint, the resume merge, the logs cut back on a resume), and the RLlib trainer
takes it from there, not from the SB3 trainer."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from train import run

ROOT = Path(__file__).resolve().parents[1]


def _run_folder(tmp_path: Path, name: str = "r") -> Path:
    folder = tmp_path / name
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "args.json").write_text("{}")
    return folder


@pytest.mark.parametrize("checkpoint", ["model.zip", "checkpoints/ppo_4096_steps.zip",  # SB3's
                                        "checkpoint", "checkpoints/step_4096"])  # RLlib's folders
def test_a_checkpoint_continues_in_its_runs_folder(tmp_path: Path, checkpoint: str) -> None:
    folder = _run_folder(tmp_path)
    assert run.run_folder_of(folder / checkpoint) == folder.resolve()
    args = _Args(out_dir=str(tmp_path / "out"))
    assert run.run_folder(args, "x", folder / checkpoint) == folder.resolve()
    assert run.run_folder(_Args(out_dir=str(tmp_path / "out"), run_name="new"), "x", folder / checkpoint) \
        == tmp_path / "out" / "new"  # --run-name: a new folder


def test_a_checkpoint_outside_a_run_starts_a_new_folder(tmp_path: Path) -> None:
    """Both trainers alike: a checkpoint copied out of its run folder (no args.json beside
    it) is not written beside; the run goes to --out-dir under a new name."""
    (tmp_path / "loose").mkdir()
    assert run.run_folder_of(tmp_path / "loose" / "step_4096") is None
    folder = run.run_folder(_Args(out_dir=str(tmp_path / "out"), seed=7), "rllib", tmp_path / "loose" / "step_4096")
    assert folder.parent == tmp_path / "out" and folder.name.startswith("rllib_7_")


class _Args:
    def __init__(self, out_dir: str = "runs", run_name: str = "", seed: int = 0):
        self.out_dir, self.run_name, self.seed = out_dir, run_name, seed


def test_resume_takes_the_runs_arguments_under_the_flags_given_again() -> None:
    from train.ppo import NOT_RESUMED, Args

    saved = {"seed": 5, "learning_rate": 1e-4, "run_name": "old", "imitation_matches": 9, "ent_coef": 0.02}
    args = run.resume_args(["--resume", "x.zip", "--ent-coef", "0.03"], saved, Args, NOT_RESUMED)
    assert (args.seed, args.learning_rate, args.ent_coef) == (5, 1e-4, 0.03)
    assert (args.run_name, args.imitation_matches, args.resume) == ("", 0, "x.zip")  # not taken over
    assert set(run.NOT_RESUMED) < set(NOT_RESUMED)
    assert run.resume_args([], "not a dict", Args) == Args()


def test_rllib_resume_merges_alike() -> None:
    pytest.importorskip("ray.rllib")
    from train.rllib.ppo import NOT_RESUMED, Args

    saved = {"seed": 5, "n_envs": 64, "out_dir": "elsewhere"}
    args = run.resume_args(["--resume", "r", "--n-envs", "32"], saved, Args, NOT_RESUMED)
    assert (args.seed, args.n_envs, args.out_dir) == (5, 32, "runs")


def test_logs_are_cut_back_to_the_step(tmp_path: Path) -> None:
    log = tmp_path / "episodes.csv"
    log.write_text("timesteps,won\n100,1\n200,0\n300,1\n400,0\n500")  # the last line cut short by a kill
    writer = run.CsvWriter(tmp_path / "eval.csv", run.EVAL_FIELDS)
    writer.write({"timesteps": 250, "opponent": "simple", "matches": 2, "extra": "ignored"})
    writer.close()
    dropped = run.cut_logs(tmp_path, {"episodes.csv": "timesteps", "eval.csv": "timesteps", "gone.csv": "x"}, 200)
    assert log.read_text() == "timesteps,won\n100,1\n200,0\n"
    assert dropped == {"episodes.csv": 3, "eval.csv": 1}
    assert (tmp_path / "eval.csv").read_text().splitlines() == [",".join(run.EVAL_FIELDS)]
    assert not list(tmp_path.glob(".*.tmp"))


def test_resolved_fills_in_the_batched_defaults_for_both_trainers() -> None:
    from train.ppo import Args

    assert (run.resolved(Args()).n_envs, run.resolved(Args()).n_steps) == run.BATCHED_DEFAULTS["duel"]
    assert run.resolved(Args(rules="hollywood_three_hand")).n_envs == run.BATCHED_DEFAULTS["three_hand"][0]
    assert (run.resolved(Args(vec_env="subproc")).n_envs, run.resolved(Args(vec_env="subproc")).n_steps) \
        == run.PROCESS_DEFAULTS


#: The RLlib trainer's modules (the package train/rllib/).
RLLIB_FILES = sorted((ROOT / "train" / "rllib").glob("*.py"))


def test_the_rllib_trainer_takes_the_run_from_train_run() -> None:
    """Nothing from the SB3 trainer, nothing private from its callbacks."""
    assert {p.name for p in RLLIB_FILES} >= {"ppo.py", "config.py", "checkpoints.py", "run_log.py"}
    bad = []
    for path in RLLIB_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "train.ppo":
                bad.append(f"{path.name}: from train.ppo import {[a.name for a in node.names]}")
            elif isinstance(node, ast.Import) and any(a.name == "train.ppo" for a in node.names):
                bad.append(f"{path.name}: import train.ppo")
            elif isinstance(node, ast.ImportFrom) and node.module == "train.callbacks":
                bad += [f"{path.name}: train.callbacks.{a.name}" for a in node.names if a.name.startswith("_")]
        assert "10_000" not in path.read_text(encoding="utf-8")  # the evaluation seed is train.run.EVAL_SEED
    assert not bad, bad


#: What both trainers share, defined once in train/run.py (issue 55).
SHARED = {"Start", "ResumeError", "make_league", "open_run_folder", "warn", "Trainer"}


def test_what_both_trainers_share_is_defined_once_in_train_run() -> None:
    """Neither trainer defines its own start, league set-up, run folder or command-line
    skeleton; both mains are :func:`train.run.main`; no function of a trainer runs past 100
    lines."""
    defined = {}
    for path in [ROOT / "train" / "ppo.py", ROOT / "train" / "run.py", *RLLIB_FILES]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.setdefault(node.name, []).append(path.relative_to(ROOT).as_posix())
                assert isinstance(node, ast.ClassDef) or node.end_lineno - node.lineno < 100, \
                    f"{path.name}: {node.name} is over 100 lines"
    assert {name: defined[name] for name in SHARED} == {name: ["train/run.py"] for name in SHARED}
    trainers = ["train/ppo.py", "train/rllib/ppo.py"]
    assert sorted(defined["find_start"]) == trainers  # each reads its own kind of checkpoint...
    assert sorted(defined["run_meta"]) == [*trainers, "train/run.py"]  # ...and adds its own to run.py's
    for path in (ROOT / "train" / "ppo.py", ROOT / "train" / "rllib" / "ppo.py"):
        assert "run.main(" in path.read_text(encoding="utf-8")


def _resumed(tmp_path: Path, league: object, step: int = 512) -> run.Start:
    return run.Start(tmp_path, checkpoint=tmp_path / "checkpoints" / "x", step=step, league=league)


@pytest.mark.parametrize("trainer", ["train.ppo", "train.rllib.ppo"])
def test_both_trainers_resume_a_league_by_the_same_rules(trainer: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Resumed, the league is the one saved with the checkpoint less its missing snapshots
    (each said), joined by every opponent --opponents names; with none saved it starts again
    from --opponents (said); a new run's is --opponents'. One function, whichever trainer."""
    import importlib

    from train.league import League

    if trainer == "train.rllib.ppo":
        pytest.importorskip("ray.rllib")
    Args = importlib.import_module(trainer).Args
    args = Args(league=True, opponents="simple,expert", self_play_pool=3)
    kept = tmp_path / "snapshot_1.zip"
    kept.write_bytes(b"")
    saved = League(["simple", "random"], pool_size=3)
    saved.add_snapshot(kept, 256)
    saved.add_snapshot(tmp_path / "gone.zip", 384)
    saved.record("simple", 1.0)

    league = run.make_league(args, _resumed(tmp_path, saved))
    assert league.specs == ["simple", "random", "expert", f"snapshot:{kept}"]  # expert named again: joins
    assert league.members[2].added_step == 512 and league.members[0].total_games == 1
    err = capsys.readouterr().err
    assert f"league snapshot snapshot:{tmp_path / 'gone.zip'} is missing" in err

    fresh = run.make_league(args, _resumed(tmp_path, None))
    assert fresh.specs == ["simple", "expert"] and "no league state saved with" in capsys.readouterr().err
    assert run.make_league(args, run.Start(tmp_path)).specs == ["simple", "expert"]
    assert not capsys.readouterr().err
    assert run.make_league(Args(opponents="simple"), _resumed(tmp_path, saved)) is None  # no --league


def test_both_trainers_write_the_same_evaluation_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """One row maker on one seed: an evaluation row says the same whichever trainer wrote it."""
    calls = []

    def fake(agent, opponent, matches, seed, rules):
        calls.append(seed)
        return {"matches": matches, "a_win_rate": 0.5, "ci_low": 0.1, "ci_high": 0.9, "a_columns_won": 1.5,
                "hands_per_match": 6.0}

    monkeypatch.setattr("arena.evaluate.evaluate_against", fake)
    row = run.evaluation_row(object(), "simple", 4, "hollywood", 8192)
    assert calls == [run.EVAL_SEED] and list(row) == run.EVAL_FIELDS
    assert json.loads(json.dumps(row))["win_rate"] == 0.5


@pytest.mark.parametrize("trainer", ["train.ppo", "train.rllib.ppo"])
def test_both_trainers_refuse_a_missing_resume_checkpoint_in_one_line(trainer: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """One command-line skeleton (:func:`train.run.main`): a --resume with nothing to resume
    is one ``error:`` line and exit status 2 in both trainers, nothing written."""
    import importlib

    if trainer == "train.rllib.ppo":
        pytest.importorskip("ray.rllib")
    main = importlib.import_module(trainer).main
    assert main(["--resume", str(tmp_path / "nothing"), "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and str(tmp_path / "nothing") in err
    assert not (tmp_path / "out").exists()
