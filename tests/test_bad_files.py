"""Bad files and the CLI: every `hgin` command that takes a file answers each bad file with exit
code 2 and one line on stderr, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agents.ppo import META_NAME, CheckpointError, read_meta
from hgin_cli.cli import MatchFileError, load_match, main, save_match
from hgin_env.match import Match

ROOT = Path(__file__).resolve().parents[1]


def _rezip(src: Path, dst: Path, replace: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members.update(replace)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dst


def _flip_byte_in_member(src: Path, dst: Path, member: str) -> Path:
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as zf:
        info = zf.getinfo(member)
    name_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0xFF
    dst.write_bytes(bytes(data))
    return dst


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    from sb3_contrib import MaskablePPO

    from agents.ppo import checkpoint_meta, save_checkpoint
    from hgin_env.rules import get_rules
    from train.envs import TrainingEnv

    d = tmp_path_factory.mktemp("bad")
    rules = get_rules("hollywood")
    model = MaskablePPO("MlpPolicy", TrainingEnv(["random"]), n_steps=64, batch_size=64, device="cpu")
    good = save_checkpoint(model, d / "good.zip", checkpoint_meta(rules, {
        "args": {"n_envs": 1, "vec_env": "dummy", "n_steps": 64, "batch_size": 64, "opponents": "random",
                 "policy": "mlp", "eval_every": 0, "checkpoint_every": 0, "progress_bar": False}}))
    meta = read_meta(good)
    other = dict(meta, observation_version=99)
    out = {
        "missing": d / "missing.zip",
        "directory": d / "a_directory",
        "empty": d / "empty.zip",
        "not_a_zip": d / "garbage.zip",
        "not_utf8": d / "latin1.json",
        "zip_without_meta": _rezip(good, d / "nometa.zip", {}),
        "flipped_meta_byte": _flip_byte_in_member(good, d / "flipped.zip", META_NAME),
        "meta_is_a_list": _rezip(good, d / "list.zip", {META_NAME: b"[1, 2, 3]"}),
        "meta_bad_json": _rezip(good, d / "badjson.zip", {META_NAME: b"{oops"}),
        "meta_not_utf8": _rezip(good, d / "meta_latin1.zip", {META_NAME: b'{"format": "\xe9"}'}),
        "meta_other_layout": _rezip(good, d / "other.zip", {META_NAME: json.dumps(other).encode()}),
        "meta_no_rules": _rezip(good, d / "norules.zip", {META_NAME: json.dumps(
            {k: v for k, v in meta.items() if k != "rules"}).encode()}),
        "damaged_weights": _rezip(good, d / "weights.zip", {"policy.pth": b"not torch"}),
        "replay_list": d / "list.json",
        "replay_single_hand_no": d / "single_hand.json",
    }
    with zipfile.ZipFile(good) as zf:
        out["zip_without_meta"] = _rezip(good, d / "nometa.zip", {})
        members = {n: zf.read(n) for n in zf.namelist() if n != META_NAME}
    with zipfile.ZipFile(out["zip_without_meta"], "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    out["directory"].mkdir()
    out["empty"].write_bytes(b"")
    out["not_a_zip"].write_bytes(b"this is not a zip file at all")
    out["not_utf8"].write_bytes("{\"format\": \"hgin-match\", \"é\": 1}".encode("latin-1"))
    out["replay_list"].write_text("[1, 2]")
    match = save_match(Match(seed=4), d / "match.json")
    data = json.loads(match.read_text())
    data["single_hand"] = "no"
    out["replay_single_hand_no"].write_text(json.dumps(data))
    return out


def test_read_meta_refuses_each_bad_checkpoint(files):
    for name, path in files.items():
        if name.startswith("replay") or name == "damaged_weights":
            continue
        with pytest.raises(CheckpointError):
            read_meta(path)


def test_replay_refuses_single_hand_no(files):
    with pytest.raises(MatchFileError, match="single_hand"):
        load_match(files["replay_single_hand_no"])


def commands(path: Path, tmp: Path) -> dict[str, list[str]]:
    train = ["--total-timesteps", "128", "--no-progress-bar", "--n-envs", "1", "--vec-env", "dummy",
             "--out-dir", str(tmp / "runs"), "--eval-every", "0", "--checkpoint-every", "0"]
    return {
        "replay": ["replay", str(path)],
        "play": ["play", "--opponent", str(path), "--seed", "1"],
        "play ppo:": ["play", "--opponent", f"ppo:{path}", "--seed", "1"],
        "tournament": ["tournament", "--agents", f"ppo:{path}", "simple", "--matches", "2", "--workers", "1",
                       "--out", str(tmp / "t"), "--quiet", "--no-plot"],
        "train --resume": ["train", "--resume", str(path), *train],
        "train --init-from": ["train", "--init-from", str(path), *train],
    }


def test_every_command_answers_every_bad_file_with_one_line(files, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open("/dev/null"))  # noqa: SIM115 (play must not wait for input)
    for name, path in files.items():
        for command, argv in commands(path, tmp_path).items():
            code = main(argv)
            captured = capsys.readouterr()
            err = captured.err.strip("\n")
            assert code == 2, (name, command, code, captured.err[-500:])
            assert err.count("\n") == 0 and err, (name, command, captured.err)
            assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "runs").exists()  # no failed train wrote a run folder
    assert not (tmp_path / "t" / "matches.csv").exists()


def test_no_traceback_as_a_process(files, tmp_path):
    """The same through the console entry point, as a process (a few files, every command)."""
    for name in ("directory", "flipped_meta_byte"):
        for command, argv in commands(files[name], tmp_path).items():
            proc = subprocess.run([sys.executable, "-c", "import sys; from hgin_cli.cli import main; "
                                   "sys.exit(main())", *argv], cwd=ROOT, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT), "PATH": "",
                                                                 "PYTHONWARNINGS": "ignore"})
            assert proc.returncode == 2, (name, command, proc.stderr[-800:])
            assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, (name, command, proc.stderr)
