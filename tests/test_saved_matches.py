"""Saved matches written by the old writers (tests/data/saved_matches, see its README) still
load, replay and resume with today's one reader, and print what they printed then."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from arena.records import load_match, save_match
from hgin_cli import cli
from hgin_env.match import Match

ROOT = Path(__file__).resolve().parents[1]
SAVED = Path("tests/data/saved_matches")  # relative: the recorded output names it so
OLD_FILES = sorted(p.name for p in (ROOT / SAVED).glob("old_*.json"))


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _run(argv: list[str], stdin: str, monkeypatch, capsys) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert cli.main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("name", OLD_FILES)
def test_old_file_loads_as_the_match_it_recorded(name):
    """The file's seed and actions replayed on a fresh Match give the loaded match."""
    data, match = load_match(SAVED / name)
    assert isinstance(match, Match) and match.format == data["rules"].get("format", "duel")
    fresh = Match(match.rules, seed=data["seed"], first_dealer=data["first_dealer"],
                  single_hand=bool(data.get("single_hand", False)))
    for action in data["actions"]:
        fresh.apply(action)
    assert fresh.action_history == match.action_history == data["actions"]
    assert fresh.is_over == match.is_over == data["complete"]
    assert fresh.sheet.to_dict() == match.sheet.to_dict()


@pytest.mark.parametrize("name", OLD_FILES)
def test_old_file_replays_as_it_did(name, monkeypatch, capsys):
    out = _run(["replay", str(SAVED / name), "--moves", "--ascii"], "", monkeypatch, capsys)
    assert out == (ROOT / SAVED / name).with_suffix(".replay.txt").read_text()


@pytest.mark.parametrize("name", [n for n in OLD_FILES if "unfinished" in n])
def test_old_file_resumes_as_it_did(name, tmp_path, monkeypatch, capsys):
    save = tmp_path / "copy.json"
    out = _run(["play", "--resume", str(SAVED / name), "--save", str(save), "--ascii"], "help\nshow\nknock\n",
               monkeypatch, capsys)
    expected = (ROOT / SAVED / name).with_suffix(".resume.txt").read_text()
    assert out == expected.replace("{SAVE}", str(save))
    old = json.loads((ROOT / SAVED / name).read_text())
    new = json.loads(save.read_text())
    assert new["actions"][:len(old["actions"])] == old["actions"] and new["players"] == old["players"]
    assert new["format"] == "hgin-match" and new["complete"] is False
    assert new["seed"] == old["seed"] and new["rules"] == old["rules"]


@pytest.mark.parametrize("name", OLD_FILES)
def test_old_file_saved_again_loads_the_same(name, tmp_path):
    """Written again by today's writer (one format for every format), the match is the same."""
    data, match = load_match(SAVED / name)
    again = save_match(match, tmp_path / name, players=data["players"])
    data2, match2 = load_match(again)
    assert data2["actions"] == data["actions"] and data2["players"] == data["players"]
    assert match2.sheet.to_dict() == match.sheet.to_dict() and match2.is_over == match.is_over


@pytest.mark.parametrize("name", OLD_FILES)
def test_web_table_reads_old_files_with_the_same_reader(name):
    from hgin_web.files import load_path

    data, match = load_match(SAVED / name)
    recording = load_path(ROOT / SAVED / name, name)
    assert list(recording.actions) == data["actions"] and list(recording.players) == data["players"]
    assert recording.complete == match.is_over and recording.rules == match.rules
    again = recording.new_match()
    for action in recording.actions:
        again.apply(action)
    assert again.sheet.to_dict() == match.sheet.to_dict()


def test_one_format_written_for_every_format(tmp_path):
    """Every match format is written as ``hgin-match`` with the same keys; a one-hand file is
    a duel's, and a format's file claiming one is refused naming the option."""
    keys = None
    for rules in ("hollywood", "hollywood_three_hand", "gin_partnership"):
        match = Match(rules, seed=3)
        for _ in range(12):
            match.apply(match.legal_actions()[-1])
        data = json.loads(save_match(match, tmp_path / f"{rules}.json").read_text())
        assert data["format"] == "hgin-match" and data["players"] == [f"player_{s}" for s in
                                                                       range(match.num_players)]
        assert keys is None or set(data) == keys
        keys = set(data)
        _, loaded = load_match(tmp_path / f"{rules}.json")
        assert loaded.action_history == match.action_history
    data["single_hand"] = True
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="single_hand"):
        load_match(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="players must name the 4 seats"):
        save_match(match, tmp_path / "x.json", players=["a", "b"])
