"""``hgin play`` for a new user: own moves echoed, hands and legal moves in one order, resuming."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from hgin_env.cards import parse_card
from hgin_env.match import Match
from hgin_env.render import grouped_hand, hand_groups, hand_order
from tests.test_cli import ScriptedHuman, run_cli

_LETTERS = str.maketrans({"♣": "C", "♦": "D", "♥": "H", "♠": "S"})


def _cards_of(line: str) -> list[str]:
    """The cards of a ``Your hand: [A♥ 2♥ 3♥] J♣ 4♦ ... (deadwood 61)`` line, in order, as ``AH``."""
    body = line.split(":", 1)[1].split("(deadwood")[0]
    return body.replace("[", " ").replace("]", " ").translate(_LETTERS).split()


def test_own_moves_are_echoed_and_moves_follow_the_hand(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    code, out, err = run_cli(["play", "--opponent", "expert", "--seed", "7"], "pass\ndraw\n7D\ndraw\nKS\n",
                             monkeypatch, capsys)
    assert code == 0, err
    assert "You pass on the upcard T♣" in out
    assert "You draw 6♠ from the stock" in out
    assert "You discard 7♦" in out and "You discard K♠" in out
    # Loose cards by suit then rank, like the melds: ♣ ♦ ♥ ♠.
    assert "player_0 hand: [A♥ 2♥ 3♥] J♣ 4♦ 7♦ Q♦ 4♠ Q♠ K♠  (deadwood 55)" in out
    # In the discard phase the legal moves list the cards in the order the hand shows them.
    lines = out.splitlines()
    checked = 0
    for i, line in enumerate(lines):
        if line.startswith("Your hand:"):
            moves = lines[i + 1]
            assert moves.startswith("legal moves: discard ")
            discards = moves.split("discard ", 1)[1].split(" |")[0].translate(_LETTERS).split()
            assert discards == [c for c in _cards_of(line) if c in discards]
            checked += 1
    assert checked >= 2


def test_hand_order_groups_melds_then_sorted_loose_cards() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        cards = rng.choice(52, size=int(rng.integers(10, 12)), replace=False)
        mask = sum(1 << int(c) for c in cards)
        melds, loose, dw = hand_groups(mask)
        assert list(loose) == sorted(loose)
        assert all(list(m) == sorted(m) for m in melds) and melds == sorted(melds)
        order = hand_order(mask)
        assert sorted(order) == sorted(int(c) for c in cards)
        assert order == [c for m in melds for c in m] + list(loose)
        text = grouped_hand(mask, symbols=False)
        assert [parse_card(t) for t in text.split("(deadwood")[0].replace("[", " ").replace("]", " ").split()] \
            == order
        assert text.endswith(f"(deadwood {dw})")


def test_resume_a_saved_match_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture) -> None:
    save = tmp_path / "match.json"
    first = ScriptedHuman(io.StringIO(), max_prompts=25)  # a few turns, then end of input
    code, out, err = run_cli(["play", "--opponent", "simple", "--seed", "11", "--seat", "1", "--save", str(save)],
                             first, monkeypatch, capsys)
    assert code == 0, err
    assert "Match abandoned (end of input)" in out and f"hgin play --resume {save}" in out
    partial = json.loads(save.read_text())
    assert partial["complete"] is False and partial["players"] == ["simple", "human"]

    code, out, err = run_cli(["play", "--resume", str(save)], ScriptedHuman(io.StringIO()), monkeypatch, capsys)
    assert code == 0, err
    assert f"Resuming {save} in hand " in out, out[:600]
    assert f"and {len(partial['actions'])} moves" in out
    assert "You are player_1; player_0 (simple) is your opponent" in out
    assert re.search(r"Match over after \d+ hands: player_\d \((you|simple)\) wins", out)
    final = json.loads(save.read_text())  # saved back to the same file
    assert final["complete"] is True and final["players"] == ["simple", "human"]
    assert final["actions"][:len(partial["actions"])] == partial["actions"]
    assert (final["seed"], final["rules"], final["first_dealer"]) == \
        (partial["seed"], partial["rules"], partial["first_dealer"])
    replayed = Match(final["rules"], seed=final["seed"], first_dealer=final["first_dealer"])
    for action in final["actions"]:
        replayed.apply(action)
    assert replayed.is_over


def test_resume_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    save = tmp_path / "m.json"
    run_cli(["play", "--opponent", "random", "--seed", "1", "--save", str(save)], "pass\n", monkeypatch, capsys)
    data = json.loads(save.read_text())

    def refused(argv: list[str], message: str) -> None:
        code, out, err = run_cli(argv, "", monkeypatch, capsys)
        assert code == 2 and out == "" and err.startswith("hgin: error: ") and message in err, (argv, err)

    refused(["play", "--resume", str(save), "--seed", "3", "--rules", "oklahoma"],
            "drop --seed, --rules")
    refused(["play", "--resume", str(tmp_path / "nope.json")], "cannot read")
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({**data, "players": ["player_0", "player_1"]}))
    refused(["play", "--resume", str(odd)], "no human seat")
    odd.write_text(json.dumps({**data, "players": ["human", "ppo my_policy.zip"]}))
    refused(["play", "--resume", str(odd)], "with --opponent")
    done = tmp_path / "done.json"
    run_cli(["play", "--opponent", "random", "--seed", "5", "--save", str(done)], ScriptedHuman(io.StringIO()),
            monkeypatch, capsys)
    assert json.loads(done.read_text())["complete"] is True
    refused(["play", "--resume", str(done)], "already finished")
    # A named opponent overrides the saved one.
    code, out, _ = run_cli(["play", "--resume", str(odd), "--opponent", "simple"], "quit\n", monkeypatch, capsys)
    assert code == 0 and "player_1 (simple) is your opponent" in out and "Match abandoned (you quit)" in out


def test_gin_classic_starts_with_a_draw_and_refuses_pass(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture) -> None:
    code, out, err = run_cli(["play", "--opponent", "simple", "--seed", "3", "--rules", "gin_classic",
                              "--ascii"], "pass\ndraw\n", monkeypatch, capsys)
    assert code == 0, err
    assert "Your turn: draw from the stock or take the discard" in out and "upcard or pass" not in out
    assert "These rules have no first-upcard offer (004)" in out
    assert "legal moves: draw (from the stock), take (3H)" in out
    assert "You draw KC from the stock" in out


def test_play_and_resume_against_the_search_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    """`--opponent search` is the default search (valued by the shipped policy's critic),
    and a saved match against it resumes without naming it again."""
    save = tmp_path / "match.json"
    code, out, err = run_cli(["play", "--opponent", "search", "--seed", "4", "--save", str(save)],
                             ScriptedHuman(io.StringIO(), max_prompts=6), monkeypatch, capsys)
    assert code == 0, err
    assert "player_1 (search)" in out and json.loads(save.read_text())["players"] == ["human", "search"]
    code, out, err = run_cli(["play", "--resume", str(save)], ScriptedHuman(io.StringIO(), max_prompts=3),
                             monkeypatch, capsys)
    assert code == 0, err
    assert "player_1 (search) is your opponent" in out
