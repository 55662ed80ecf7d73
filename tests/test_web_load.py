"""The web table's load script at toy size: every part runs against a real server and reports."""

from __future__ import annotations

from eval.web_load import main


def test_the_load_script_runs_every_part_at_toy_size(capsys):
    code = main(["--games", "2", "--max-seconds", "20", "--step-clients", "2", "--step-opponents", "random",
                 "--step-seconds", "1", "--idle-connections", "5", "--idle-seconds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 concurrent games" in out and "2 finished" in out
    assert "clients stepping watched games (random)" in out and "/api/meta meanwhile" in out
    assert "5 idle connections" in out and "0 failed" in out
