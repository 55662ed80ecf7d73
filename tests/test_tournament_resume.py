"""An interrupted tournament keeps its matches: matches.csv is written as matches finish, and a
rerun (or --resume) into the same folder plays only the missing ones."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.tournament import main, run_tournament

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ["expert", "simple"]
MATCHES = 40  # long enough that the SIGINT lands mid-tournament on a busy machine


def _complete_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    lines = [ln for ln in path.read_text().splitlines(keepends=True) if ln.endswith("\n")]
    return list(csv.DictReader(lines))


def _strip(rows: list[dict]) -> list[dict]:
    return [{k: str(v) for k, v in r.items() if k != "seconds"} for r in rows]


def _default_sigint() -> None:
    """In the child before Python starts: SIGINT's default disposition. A test run started in
    the background by a non-interactive shell (``make test &``, ``nohup``) inherits SIGINT
    *ignored*, and Python then installs no KeyboardInterrupt handler: the tournament would
    never see the signal and play to its end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted_run(out: Path, argv: list[str]) -> subprocess.CompletedProcess | None:
    """Start the tournament, wait for 4 finished matches, send SIGINT. None when the tournament
    had already played every match when the signal came (a test process starved of CPU on a
    busy machine can miss the whole run): the caller tries again."""
    proc = subprocess.Popen([sys.executable, "-m", "eval.tournament", *argv], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_default_sigint,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and len(_complete_rows(out / "matches.csv")) < 4:
        time.sleep(0.02)
    assert proc.poll() is None, "the tournament ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0 and len(_complete_rows(out / "matches.csv")) == MATCHES:
        return None
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


def test_sigint_keeps_matches_and_rerun_plays_the_rest(tmp_path):
    for attempt in range(3):
        out = tmp_path / f"t{attempt}"
        argv = ["--agents", *AGENTS, "--matches", str(MATCHES), "--workers", "1", "--chunk", "1",
                "--out", str(out), "--quiet", "--no-plot", "--seed", "5"]
        done = _interrupted_run(out, argv)
        if done is not None:
            break
    else:
        pytest.fail("three times the tournament had finished before the SIGINT came")
    err = done.stderr
    assert done.returncode == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err and err.count("\n") == 1
    kept = _complete_rows(out / "matches.csv")
    assert 4 <= len(kept) < MATCHES
    # Rerun with --resume: only the missing matches are played; the kept ones stay as they were.
    result = main([*argv, "--resume"])
    assert len(result.rows) == MATCHES
    by_key = {(r["agent_a"], r["agent_b"], str(r["seed"]), str(r["a_seat"])): r for r in _strip(result.rows)}
    assert len(by_key) == MATCHES
    for r in kept:
        key = (r["agent_a"], r["agent_b"], r["seed"], r["a_seat"])
        assert by_key[key]["winner"] == r["winner"] and by_key[key]["hands"] == r["hands"]
    assert [r["seconds"] for r in _complete_rows(out / "matches.csv")
            if (r["seed"], r["a_seat"]) in {(k["seed"], k["a_seat"]) for k in kept}] == \
        [k["seconds"] for k in kept]  # the same rows (their timings too): not played again
    # And the result is the tournament an uninterrupted run plays.
    fresh = run_tournament(AGENTS, matches=MATCHES, seed=5, workers=1, progress=False)
    assert _strip(result.rows) == _strip(fresh.rows)
    # A rerun of the finished tournament plays nothing new.
    again = main(argv)
    assert _strip(again.rows) == _strip(result.rows)


def test_resume_needs_matches_and_other_tournaments_start_afresh(tmp_path, capsys):
    out = tmp_path / "t"
    argv = ["--matches", "2", "--workers", "1", "--out", str(out), "--quiet", "--no-plot"]
    assert main(["--agents", "simple", "random", *argv, "--resume"]) == 2
    assert "no matches.csv" in capsys.readouterr().err
    main(["--agents", "simple", "random", *argv])
    other = main(["--agents", "simple", "expert", *argv])  # another tournament in the folder
    assert {r["agent_b"] for r in other.rows} == {"expert"}
    assert {r["agent_b"] for r in _complete_rows(out / "matches.csv")} == {"expert"}


def test_tournament_resume_counts_a_duplicated_row_once(tmp_path):
    out = tmp_path / "t"
    argv = ["--agents", "simple", "expert", "--matches", "4", "--workers", "1", "--out", str(out),
            "--quiet", "--no-plot", "--seed", "3", "--rules", "hollywood_short"]
    first = main(argv)
    csv_path = out / "matches.csv"
    lines = csv_path.read_text().splitlines(keepends=True)
    csv_path.write_text("".join(lines + [lines[1], lines[2]]))  # two complete rows appended again
    with pytest.warns(UserWarning, match="2 duplicated match row"):
        again = main([*argv, "--resume"])
    assert len(again.rows) == len(first.rows) == 4
    assert [s["a_win_rate"] for s in again.summaries()] == [s["a_win_rate"] for s in first.summaries()]
    assert len(_complete_rows(csv_path)) == 4  # the file is rewritten without the copies
