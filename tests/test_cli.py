"""The ``hgin`` command line: whole matches typed by a scripted human, save/replay, help pages."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hgin_cli import cli
from hgin_env.match import Match
from hgin_env.rules import RULES_VERSION

ROOT = Path(__file__).resolve().parents[1]


class ScriptedHuman(io.TextIOBase):
    """A stdin that answers each prompt by reading what the CLI printed, as a person would.

    It only looks at the transcript: the last ``legal moves:`` line and, in the discard
    phase, the deadwood table that ``help`` prints. It plays a plain greedy game (pass the
    upcard, draw from the stock, discard the card that leaves the least deadwood, knock as
    soon as that is allowed) and mixes in bad input: typos, moves of the wrong phase,
    knocking with too much deadwood or with a card it does not hold, blank lines.
    """

    def __init__(self, transcript: io.StringIO, max_prompts: int = 5000):
        self.transcript = transcript
        self.prompts = 0
        self.max_prompts = max_prompts
        self.bad_inputs = 0
        self.knock_refusals = 0
        self._pending: list[str] = []

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:  # noqa: ARG002 - file protocol
        self.prompts += 1
        if self.prompts > self.max_prompts:
            return ""  # EOF: the CLI must end gracefully
        if self._pending:
            return self._pending.pop(0) + "\n"
        return self._answer() + "\n"

    def _answer(self) -> str:
        text = self.transcript.getvalue()
        legal = [line for line in text.splitlines() if line.startswith("legal moves:")][-1]
        legal = legal.translate(str.maketrans("♣♦♥♠", "CDHS"))  # typed in letters (both are read)
        n = self.prompts
        if "discard" not in legal:  # first upcard or draw phase
            if n % 7 == 0:
                self.bad_inputs += 1
                return "7Z"  # not a card
            if n % 11 == 0:
                self.bad_inputs += 1
                return "knock AS"  # wrong phase
            if n % 13 == 0:
                self.bad_inputs += 1
                return ""
            return "pass" if "pass" in legal else "draw"
        discards = legal.split("discard ", 1)[1].split(" |")[0].split()
        knocks = re.findall(r"knock (\S+)", legal)
        help_at = text.rfind("Deadwood after discarding:")
        if help_at < text.rfind("Your hand:"):  # no help table yet for this decision
            # Ask for the deadwood table of this decision (help), then decide on it.
            if n % 5 == 0:
                not_knockable = [c for c in discards if c not in knocks]
                if not_knockable:
                    self.bad_inputs += 1
                    self.knock_refusals += 1
                    self._pending.append("help")
                    return f"knock {not_knockable[0]}"  # too much deadwood
            if n % 9 == 0:
                self.bad_inputs += 1
                self._pending.append("help")
                return "take"  # already drew
            return "help"
        table = text[help_at:].splitlines()[0]
        best = table.split(":", 1)[1].split(",")[0].split()[0]
        best = best.replace("♣", "C").replace("♦", "D").replace("♥", "H").replace("♠", "S")
        return f"knock {best}" if best in knocks else best


def run_cli(argv: list[str], stdin: io.TextIOBase | str, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run ``cli.main(argv)`` in this process with the given stdin; returns (code, out, err)."""
    out = io.StringIO()
    if isinstance(stdin, str):
        stdin = io.StringIO(stdin)
    if isinstance(stdin, ScriptedHuman):
        stdin.transcript = out
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", out)
    code = cli.main(argv)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.mark.parametrize("opponent,seed,seat", [("random", 5, "0"), ("simple", 11, "1")])
def test_whole_match_with_bad_input(opponent: str, seed: int, seat: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    human = ScriptedHuman(io.StringIO())
    save = tmp_path / "match.json"
    code, out, err = run_cli(["play", "--opponent", opponent, "--seed", str(seed), "--seat", seat,
                              "--save", str(save)], human, monkeypatch, capsys)
    assert code == 0, err
    assert "Traceback" not in out + err
    pattern = r"Match over after \d+ hands: player_\d \((you|" + opponent + r")\) wins"
    assert re.search(pattern, out), out[-2000:]
    assert human.bad_inputs >= 3 and human.knock_refusals >= 1
    # Bad input was answered, never fatal.
    assert "Cannot read '7Z'" in out
    assert "above the knock limit" in out
    assert "You have already drawn" in out or "draw a card first" in out
    # What each turn shows: grouped hand with deadwood, scoreboard, opponent's moves, results.
    assert "(deadwood " in out and "wins" in out and "III" in out
    assert re.search(r"player_\d \(" + opponent + r"\) (draws from the stock|discards \S+)", out)
    assert re.search(r"Hand 1: player_\d (knock|gin|undercut|dead hand)", out)
    # The saved file replays to the same match in the engine itself: a Match of its seed
    # given its actions.
    data = json.loads(save.read_text())
    assert data["format"] == "hgin-match" and data["rules_version"] == RULES_VERSION
    assert data["complete"] is True and data["seed"] == seed
    game = Match(data["rules"], seed=data["seed"], first_dealer=data["first_dealer"])
    for action in data["actions"]:
        game.apply(action)
    assert game.is_over
    me = int(seat)
    assert data["players"][me] == "human" and data["players"][1 - me] == opponent
    winner = game.match_winner
    assert f"player_{winner} (" in out.rsplit("Match over", 1)[1]


def test_replay_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture) -> None:
    human = ScriptedHuman(io.StringIO())
    save = tmp_path / "m.json"
    code, played, _ = run_cli(["play", "--opponent", "simple", "--seed", "3", "--save", str(save),
                               "--ascii"], human, monkeypatch, capsys)
    assert code == 0
    code, out, err = run_cli(["replay", str(save), "--ascii"], "", monkeypatch, capsys)
    assert code == 0, err
    # Every hand result printed during play is printed again by the replay, in order.
    hands_played = re.findall(r"^Hand \d+: .*$", played, flags=re.M)
    hands_replayed = re.findall(r"^Hand \d+: .*$", out, flags=re.M)
    assert hands_played and hands_played == hands_replayed
    assert played.rsplit("Match over", 1)[1].split(":")[0] == out.rsplit("Match over", 1)[1].split(":")[0]
    code, moves, _ = run_cli(["replay", str(save), "--moves"], "", monkeypatch, capsys)
    assert code == 0 and "draws from the stock" in moves and "player_0 (human):" in moves
    # The library pair save_match / load_match round-trips too.
    data, match = cli.load_match(save)
    again = tmp_path / "again.json"
    cli.save_match(match, again, players=data["players"])
    assert json.loads(again.read_text()) == json.loads(save.read_text())


def test_abandoned_match_ends_gracefully_and_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    save = tmp_path / "partial.json"
    code, out, err = run_cli(["play", "--opponent", "random", "--seed", "1", "--save", str(save)],
                             "help\nshow\nfoo bar baz\n", monkeypatch, capsys)  # then EOF
    assert code == 0 and "Traceback" not in err
    assert "Match abandoned (end of input)" in out
    code, out, _ = run_cli(["play", "--opponent", "random", "--seed", "1"], "quit\n", monkeypatch, capsys)
    assert code == 0 and "Match abandoned (you quit)" in out
    assert json.loads(save.read_text())["complete"] is False
    code, out, _ = run_cli(["replay", str(save)], "", monkeypatch, capsys)
    assert code == 0 and "not finished" in out


def _corrupt_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    match = Match(seed=4)
    while not match.is_over and len(match.action_history) < 40:
        match.apply(match.legal_actions()[0])
    good = json.loads(cli.save_match(match, tmp_path / "good.json").read_text())
    cases: dict[str, tuple[object, str]] = {
        "bad_json": ("{not json", "invalid JSON"),
        "not_object": ([1, 2], "expected a JSON object"),
        "wrong_format": ({**good, "format": "other"}, "not a saved match"),
        "missing_keys": ({k: v for k, v in good.items() if k != "actions"}, "missing actions"),
        "other_version": ({**good, "rules_version": RULES_VERSION + 1}, "rules version"),
        "bad_rules": ({**good, "rules": {**good["rules"], "knock_limit": -3}}, "bad rules"),
        "unknown_rule": ({**good, "rules": {**good["rules"], "wild_cards": True}}, "bad rules"),
        "illegal_action": ({**good, "actions": good["actions"][:5] + [104, 104]}, "is illegal"),
        "bad_actions": ({**good, "actions": "draw"}, "list of action ids"),
        "bad_seed": ({**good, "seed": "x"}, "'seed'"),
    }
    out = {}
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        out[name] = (path, message)
    out["missing_file"] = (tmp_path / "nope.json", "cannot read")
    return out


def test_replay_refuses_corrupt_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture) -> None:
    for name, (path, message) in _corrupt_files(tmp_path).items():
        code, out, err = run_cli(["replay", str(path)], "", monkeypatch, capsys)
        assert code == 2, name
        assert out == "", name  # refused before printing anything
        assert err.count("\n") == 1 and err.startswith("hgin: error: "), (name, err)
        assert message in err, (name, err)
        with pytest.raises(ValueError):
            cli.load_match(path)


def test_replay_refusal_in_a_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": "hgin-match", "rules_version": 0, "rules": {}, "seed": 1,
                                "first_dealer": None, "actions": []}))
    proc = subprocess.run([sys.executable, "-m", "hgin_cli.cli", "replay", str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "rules version 0" in proc.stderr


def test_play_through_a_real_pipe_and_light_import() -> None:
    code = ("import sys, hgin_cli.cli; heavy = [m for m in ('torch', 'sb3_contrib', 'matplotlib', "
            "'pandas') if m in sys.modules]; print('HEAVY', heavy); sys.exit(hgin_cli.cli.main())")
    proc = subprocess.run([sys.executable, "-c", code, "play", "--opponent", "simple", "--seed", "2"],
                          input="pass\ndraw\nhelp\n10X\n", capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout
    assert "legal moves:" in proc.stdout and "Match abandoned (end of input)" in proc.stdout


def test_bad_opponent_and_rules(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                tmp_path: Path) -> None:
    code, _, err = run_cli(["play", "--opponent", "nobody"], "", monkeypatch, capsys)
    assert code == 2 and "unknown opponent 'nobody'" in err
    # A typo is answered with every agent kind, the shipped policy's `ppo` included.
    code, _, err = run_cli(["play", "--opponent", "exprt"], "", monkeypatch, capsys)
    assert code == 2 and "not one of random, simple, expert, search, ppo, nor a spec" in err
    assert "ppo:ARG" in err and "search:rollouts=16" in err
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    code, _, err = run_cli(["play", "--opponent", str(bad)], "", monkeypatch, capsys)
    assert code == 2 and "cannot load opponent" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        cli.main(["play", "--rules", "no_such_profile"])
    assert exc.value.code == 2


def test_rules_listing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_cli(["rules"], "", monkeypatch, capsys)
    assert code == 0 and "oklahoma" in out and "straight_gin" in out and "knock_limit=0" in out
    code, out, _ = run_cli(["rules", "gin_classic"], "", monkeypatch, capsys)
    assert code == 0 and "shutout_game_bonus" in out and "200" in out


@pytest.mark.parametrize("argv,expect", [
    ([], "play"), (["--help"], "replay"), (["play", "--help"], "--opponent"),
    (["replay", "--help"], "--moves"), (["rules", "--help"], "PROFILE"),
    (["tournament", "--help"], "--agents"), (["train", "--help"], "--total-timesteps"),
])
def test_help_pages(argv: list[str], expect: str, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's --help
        code = exc.code
    assert code == 0
    assert expect in out.getvalue()


def test_bench_front(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """``hgin bench`` forwards to eval.bench.run, or says clearly that it is missing."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    try:
        code = cli.main(["bench", "--help"])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    if code == 2:
        assert "eval.bench.run" in err and "Traceback" not in err
    else:
        assert code == 0 and "usage" in out.getvalue().lower()


def test_forwarding_passes_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.ppo

    seen = {}

    def fake_main(argv: list[str]) -> int:
        seen["argv"] = argv
        seen["prog"] = sys.argv[0]
        return 0

    monkeypatch.setattr(train.ppo, "main", fake_main)
    assert cli.main(["train", "--total-timesteps", "10", "--run-name", "x"]) == 0
    assert seen == {"argv": ["--total-timesteps", "10", "--run-name", "x"], "prog": "hgin train"}


@pytest.mark.slow
def test_play_against_a_ppo_checkpoint(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture) -> None:
    from agents.ppo import SHIPPED_POLICY

    assert SHIPPED_POLICY.exists(), "the shipped policy is part of the repository"
    human = ScriptedHuman(io.StringIO(), max_prompts=40)  # a few turns, then end of input
    code, out, err = run_cli(["play", "--opponent", str(SHIPPED_POLICY), "--seed", "2"], human,
                             monkeypatch, capsys)
    assert code == 0, err
    assert f"(ppo {SHIPPED_POLICY.name})" in out and "legal moves:" in out
    assert "Match over" in out or "Match abandoned (end of input)" in out


def test_knock_without_a_card_gets_a_hint_in_every_phase(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    """``knock`` alone is answered with how to knock, never 'unknown card': before drawing
    (the upcard offer, the draw) it says to draw first; after drawing it asks for the card."""
    from hgin_env.actions import parse_action

    with pytest.raises(ValueError, match=r"knock needs the card it discards face down, e.g. 'knock 7H'"):
        parse_action("knock")
    with pytest.raises(ValueError, match="knock needs the card"):
        parse_action("knock 7H 8H")
    code, out, _ = run_cli(["play", "--opponent", "simple", "--seed", "2"], "knock\npass\nknock\ndraw\nknock\n",
                           monkeypatch, capsys)
    assert code == 0 and "unknown card" not in out
    assert out.count("Knock after drawing: 'draw' or 'take' first, then e.g. 'knock 7H'") == 2, out
    assert "Say which card to discard face down, e.g. 'knock 7H'." in out or "You cannot knock: your deadwood" in out
