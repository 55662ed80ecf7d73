"""``hgin play --seat`` in any format, and save / replay / resume of format matches."""

from __future__ import annotations

import json

import pytest

from hgin_cli import cli
from hgin_cli.cli_formats import _SeatPrompt
from hgin_env import actions as A
from hgin_env.cards import format_card


def _auto_human(monkeypatch, stop_after: int | None = None):
    """Answer the prompt like a person typing legal moves (knock when possible)."""
    typed = []

    def read_line(self, prompt):
        if stop_after is not None and len(typed) >= stop_after:
            return "quit\n"
        legal = self.game.legal_actions()
        knocks = [a for a in legal if A.KNOCK <= a < A.DRAW_STOCK]
        if knocks:
            word = f"knock {format_card(A.action_card(knocks[0]), False)}"
        elif A.DRAW_STOCK in legal:
            word = "draw"
        elif A.PASS in legal:
            word = "pass"
        else:
            word = format_card(A.action_card(legal[0]), False)
        typed.append(word)
        return word + "\n"

    monkeypatch.setattr(_SeatPrompt, "read_line", read_line)
    return typed


@pytest.mark.parametrize("profile, seat", [("gin_three_hand", "2"), ("gin_partnership", "3")])
def test_play_any_seat_save_and_replay(profile, seat, monkeypatch, tmp_path, capsys):
    typed = _auto_human(monkeypatch)
    path = tmp_path / "m.json"
    assert cli.main(["play", "--rules", profile, "--seat", seat, "--seed", "3", "--opponent", "simple",
                     "--ascii", "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"You are player_{seat}" in out and "Match over" in out and typed
    data = json.loads(path.read_text())
    assert data["format"] == "hgin-format-match" and data["players"][int(seat)] == "human"
    assert data["complete"] is True
    assert cli.main(["replay", str(path), "--ascii"]) == 0
    replay = capsys.readouterr().out
    assert out.strip().splitlines()[-2].split(":")[0] in replay  # the same result line


def test_resume_unfinished_format_match(monkeypatch, tmp_path, capsys):
    _auto_human(monkeypatch, stop_after=3)
    path = tmp_path / "m.json"
    cli.main(["play", "--rules", "hollywood_three_hand", "--seat", "1", "--seed", "5",
              "--opponent", "random", "--ascii", "--save", str(path)])
    first = json.loads(path.read_text())
    assert first["complete"] is False
    _auto_human(monkeypatch, stop_after=6)
    assert cli.main(["play", "--resume", str(path), "--ascii"]) == 0
    again = json.loads(path.read_text())
    assert again["actions"][:len(first["actions"])] == first["actions"]
    assert len(again["actions"]) > len(first["actions"])
    capsys.readouterr()


def test_bad_seat_and_ppo_refused(capsys):
    assert cli.main(["play", "--rules", "gin_three_hand", "--seat", "3", "--seed", "1"]) == 2
    assert "seats 0..2" in capsys.readouterr().err
    assert cli.main(["play", "--seat", "2", "--seed", "1"]) == 2
    assert cli.main(["play", "--rules", "gin_partnership", "--opponent", "ppo", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "duel layout" in err and len(err.strip().splitlines()) == 2
