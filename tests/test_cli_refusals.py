"""Issue 22 on the command line, and the `hgin play` papercuts: one line and exit code 2 for
bad arguments, exit 130 on Ctrl-C, the turn in words, one card notation; every import in
``hgin_cli`` points down."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest

from hgin_cli import cli
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args,words", [
    (["--agents", "expert"], "at least two agents"),
    (["--agents", "simple", "simple"], "names simple twice"),
    (["--agents", "simple", "random", "--matches", "0"], "--matches 0: must be >= 1"),
    (["--agents", "simple", "random", "--matches", "-4"], "--matches -4: must be >= 1"),
    (["--agents", "simple", "random", "--workers", "0"], "--workers 0"),
])
def test_hgin_tournament_bad_agents_or_matches_one_line_exit_2(args, words, tmp_path, capsys):
    code = cli.main(["tournament", *args, "--out", str(tmp_path / "t"), "--quiet", "--no-plot"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "t" / "matches.csv").exists()


def test_hgin_play_negative_seed_one_line_exit_2(monkeypatch, capsys):
    for rules in ("hollywood", "hollywood_three_hand"):
        code, out, err = run_cli(["play", "--seed", "-5", "--rules", rules], "", monkeypatch, capsys)
        assert code == 2 and err.count("\n") == 1 and "--seed -5" in err and out == ""


class _CtrlC(io.StringIO):
    """A stdin where the person presses Ctrl-C at the first prompt after ``after`` lines."""

    def __init__(self, lines: list[str]):
        super().__init__()
        self.lines = lines

    def readline(self, size: int = -1) -> str:  # noqa: ARG002 - file protocol
        if not self.lines:
            raise KeyboardInterrupt
        return self.lines.pop(0) + "\n"


@pytest.mark.parametrize("rules", ["hollywood", "hollywood_partnership"])
def test_hgin_play_ctrl_c_exits_130_with_one_line(rules, tmp_path, monkeypatch, capsys):
    save = tmp_path / "m.json"
    code, out, err = run_cli(["play", "--opponent", "random", "--seed", "3", "--rules", rules,
                              "--save", str(save)], _CtrlC(["pass"]), monkeypatch, capsys)
    assert code == 130
    assert err.count("\n") == 1 and err.startswith("interrupted: the match was not finished")
    assert f"hgin play --resume {save}" in err and save.exists()
    assert "Traceback" not in out + err


def test_hgin_play_says_the_turn_in_words_and_one_card_notation(monkeypatch, capsys):
    code, out, _ = run_cli(["play", "--opponent", "simple", "--seed", "7"], "pass\ndraw\nquit\n",
                           monkeypatch, capsys)
    assert code == 0
    assert "Your turn: take the first upcard or pass" in out
    assert "first_upcard" not in out and "(draw)" not in out and "to act (" not in out
    assert "legal moves: take (the upcard T♣), pass" in out
    moves = [line for line in out.splitlines() if line.startswith("legal moves: discard")]
    assert moves and not re.search(r"\b[A2-9TJQK][CDHS]\b", " ".join(moves))  # no 3H beside 3♥
    code, out, _ = run_cli(["play", "--opponent", "simple", "--seed", "7", "--ascii"], "pass\ndraw\nquit\n",
                           monkeypatch, capsys)
    assert "legal moves: take (the upcard TC), pass" in out and "♣" not in out


def test_hgin_cli_imports_point_down():
    """No module of hgin_cli imports cli.py (the top); common.py imports no other hgin_cli
    module; and the imports have no circle."""
    edges: dict[str, set[str]] = {}
    for path in sorted((ROOT / "hgin_cli").glob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names |= {node.module} if node.module else {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hgin_cli."):
                names.add(node.module.split(".")[1])
        edges[path.stem] = names
    assert not any("cli" in deps for name, deps in edges.items() if name not in ("cli", "__main__"))
    assert edges["common"] == set()
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:  # depth first: a module on its own path is a circle
        assert name not in path, f"import circle: {' -> '.join((*path, name))}"
        if name not in done:
            for dep in edges.get(name, set()):
                visit(dep, (*path, name))
            done.add(name)

    for name in edges:
        visit(name, ())
    assert all(hasattr(module, "register") for module in cli.SUBCOMMANDS)
