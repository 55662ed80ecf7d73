"""``hgin play --seat`` in any format, and save / replay / resume of format matches."""

from __future__ import annotations

import json

import pytest

from hgin_cli import cli
from hgin_cli.human import SeatPrompt
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

    monkeypatch.setattr(SeatPrompt, "read_line", read_line)
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
    assert data["format"] == "hgin-match" and data["players"][int(seat)] == "human"
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
    duel_policy = "ppo:agents/policies/hgin_ppo_scratch.zip"
    assert cli.main(["play", "--rules", "gin_partnership", "--opponent", duel_policy, "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "duel layout" in err and len(err.strip().splitlines()) == 2


def test_three_hand_says_who_dealt_and_sits_out(monkeypatch, capsys):
    """RULES.md §13.1: the three-hand dealer deals and sits out; the table game's "dealer"
    only plays the dealer's part, so the CLI never calls it the dealer. Results name the
    seats at the table and count the match's hands."""
    import re

    from hgin_env.match import Match
    from hgin_env.render import deal_text

    m = Match("gin_three_hand", seed=3, first_dealer=2)
    table = m.tables[0]
    assert table.sitting_out == 2 and table.seats == (0, 1) and table.non_dealer == 0
    assert deal_text(table) == "player_2 dealt and sits out; player_0 vs player_1, player_0 plays first"
    assert deal_text(table, ["ann", "bob", "cy"]) == "cy dealt and sits out; ann vs bob, ann plays first"
    assert m.hand_number == 1

    _auto_human(monkeypatch)
    assert cli.main(["play", "--rules", "gin_three_hand", "--seat", "0", "--seed", "3",
                     "--opponent", "simple", "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "dealer player_" not in out and " deals ===" not in out
    deals = re.findall(r"=== Table 0: player_(\d) \(\w+\) dealt and sits out; player_(\d) \(\w+\) vs "
                       r"player_(\d) \(\w+\), player_(\d) \(\w+\) plays first ===", out)
    assert len(deals) >= 3
    for dealer, a, b, first in deals:
        assert {dealer, a, b} == {"0", "1", "2"} and first == a
    # The human's table line names the dealer who sits out and the match's hand number.
    assert "player_2 dealt and sits out; player_0 vs player_1, player_0 plays first" in out
    numbers = [int(n) for n in re.findall(r"^Hand (\d+)  knock limit", out, re.M)]
    assert numbers == sorted(numbers) and numbers[-1] > 1
    # Each result names seats of its table, and the hands are counted over the match.
    results = re.findall(r"--- Table 0: player_(\d) v player_(\d) ---\nHand (\d+): (?:dead hand|"
                         r"player_(\d) (?:knocks|goes)[^\n]*-> player_(\d) scores)", out)
    assert [int(r[2]) for r in results] == list(range(1, len(results) + 1))
    for a, b, _, knocker, winner in results:
        assert knocker in ("", a, b) and winner in ("", a, b)
    assert any(r[3] and "0" not in r[:2] for r in results)  # a hand the human sat out


def test_env_render_three_hand_says_who_dealt():
    from hgin_env import hollywood_gin_v0

    env = hollywood_gin_v0.raw_env(rules="gin_three_hand", render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert "dealer player_" not in text
    assert "dealt and sits out;" in text.splitlines()[2] and text.splitlines()[1].startswith("Hand 1  knock")


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_play_a_format_against_its_learned_policy(monkeypatch, capsys, profile):
    """`--opponent ppo` in a format seats the shipped policy of that format's layout."""
    _auto_human(monkeypatch, stop_after=8)
    assert cli.main(["play", "--rules", profile, "--opponent", "ppo", "--seed", "2", "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "ppo" in out


@pytest.mark.parametrize("profile", ["hollywood_three_hand", "hollywood_partnership"])
def test_play_a_format_against_the_search(monkeypatch, capsys, profile):
    """`--opponent search` (here with toy options) seats the critic-valued search in a
    format: it plays every other seat with that format's policy and critic."""
    _auto_human(monkeypatch, stop_after=6)
    assert cli.main(["play", "--rules", profile, "--opponent", "search:rollouts=2,policy_plies=4",
                     "--seed", "2", "--ascii"]) == 0
    assert "search" in capsys.readouterr().out
