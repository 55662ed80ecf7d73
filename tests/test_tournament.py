"""Tournament statistics on small runs whose outcome is known, and the files it writes."""

from __future__ import annotations

import json

import pytest

from arena.ratings import bradley_terry, expected_score
from eval.tournament import AgentSpec, as_spec, main, run_tournament, wilson_interval


def test_agent_against_itself_is_exactly_even() -> None:
    # The expert is deterministic, so with duplicate deals the two games of a seed are the
    # same game with the labels swapped: each label wins exactly one of them.
    result = run_tournament(["e1=expert", "e2=expert"], matches=6, seed=7, workers=1, progress=False)
    s = result.summaries()[0]
    assert s["matches"] == 6 and s["seeds"] == 3
    assert s["a_win_rate"] == 0.5
    assert s["a_columns_won"] == s["b_columns_won"]
    assert s["a_column_total"] == pytest.approx(s["b_column_total"])


def test_simple_beats_random_and_files(tmp_path) -> None:
    result = run_tournament(["simple", "random"], matches=12, seed=0, workers=2, progress=False)
    s = result.summaries()[0]
    assert s["a_win_rate"] >= 0.9
    assert s["a_knock_rate"] + s["a_gin_rate"] > s["b_knock_rate"] + s["b_gin_rate"]
    table = result.table()
    assert list(table["agent_a"]) == ["simple"]
    paths = result.save(tmp_path / "t")
    assert paths["csv"].read_text().count("\n") == 13  # header + 12 matches
    md = paths["markdown"].read_text()
    assert "| simple | random | 12 |" in md
    assert paths["plot"].stat().st_size > 1000
    summary = json.loads(paths["json"].read_text())
    assert summary["pairs"][0]["matches"] == 12
    # Same seeds in one process give the same rows (workers only change the speed).
    again = run_tournament(["simple", "random"], matches=12, seed=0, workers=1, progress=False)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in result.rows]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in again.rows]


def test_round_robin_cli_and_ratings(tmp_path, capsys) -> None:
    out = tmp_path / "rr"
    result = main(["--agents", "simple", "random", "s2=simple", "--matches", "4", "--workers", "1",
                   "--out", str(out), "--quiet", "--no-plot", "--seed", "3"])
    assert len(result.pairs) == 3
    assert (out / "matches.csv").exists() and (out / "summary.md").exists()
    assert "rating" in capsys.readouterr().out
    ratings = result.ratings()
    assert ratings["random"] == 0.0
    assert ratings["simple"] > 100 and ratings["s2"] > 100


def test_specs_and_stats() -> None:
    assert as_spec("expert") == AgentSpec("expert", (), "expert")
    assert as_spec("fast=expert").label == "fast"
    assert as_spec(("x=expert", {"lookahead": 1.0})).kwargs == (("lookahead", 1.0),)
    assert as_spec("ppo:runs/a=b.zip").name == "ppo:runs/a=b.zip"
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    r = bradley_terry(["a", "b"], {("a", "b"): (75.0, 25.0)}, prior=0.0, anchor="b")
    assert expected_score(r["a"], r["b"]) == pytest.approx(0.75, abs=1e-6)
    with pytest.raises(ValueError, match="distinct"):
        run_tournament(["simple", "simple"], matches=2, workers=1, progress=False)


def test_the_command_line_module_re_exports_the_runner():
    """The runner lives in arena.tournament; eval.tournament, its command line, still offers
    every public name (notebooks and scripts import them from there)."""
    import arena.tournament
    import eval.tournament

    missing = [name for name in arena.tournament.__all__ if not hasattr(eval.tournament, name)]
    assert not missing, missing
    assert eval.tournament.run_tournament is arena.tournament.run_tournament


def test_too_few_seeds_get_no_interval(tmp_path) -> None:
    """A pair of fewer than MIN_SEEDS_FOR_CI duplicate seeds prints no interval (2 seeds that
    each split their pair would read 50.0–50.0, certainty); with enough seeds it does."""
    from arena.stats import MIN_SEEDS_FOR_CI

    few = run_tournament(["e1=expert", "e2=expert"], matches=4, seed=7, workers=1, progress=False)
    s = few.summaries()[0]
    assert s["seeds"] == 2 and s["ci_too_few_seeds"] and (s["ci_low"], s["ci_high"]) == (0.5, 0.5)
    md = few.markdown()
    assert "| e1 | e2 | 4 | 50.0 | none (2 seeds) | none (2 seeds) |" in md
    assert f"No interval where fewer than {MIN_SEEDS_FOR_CI} duplicate seeds were played" in md
    assert "| 50.0–50.0 |" not in md
    enough = run_tournament(["simple", "random"], matches=2 * MIN_SEEDS_FOR_CI, seed=0, workers=1, progress=False)
    md = enough.markdown()
    assert not enough.summaries()[0]["ci_too_few_seeds"] and "none (" not in md and "No interval" not in md


def test_a_finished_tournament_run_again_says_nothing_was_left_to_play(tmp_path, capsys) -> None:
    argv = ["--agents", "simple", "random", "--matches", "4", "--workers", "1", "--out", str(tmp_path / "t"),
            "--quiet", "--no-plot"]
    first = main(argv)
    assert first.played == 4 and "4 matches in " in capsys.readouterr().out
    again = main(argv)
    out = capsys.readouterr().out
    assert again.played == 0 and len(again.rows) == 4
    assert f"nothing left to play: all 4 matches were already in {tmp_path / 't' / 'matches.csv'}" in out
    assert "matches in 0.0 s" not in out
