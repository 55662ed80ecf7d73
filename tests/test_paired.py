"""eval.paired: two players' matches on the same deals, paired by (seed, seating, opponent)."""

import csv

import pytest

from arena.stats import duplicate_interval
from eval.paired import compare, main, match_scores, pooled

FIELDS = ("seed", "a_seat", "agent_b", "winner_side")


def write(folder, rows):
    folder.mkdir()
    with open(folder / "matches.csv", "w", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        out.writeheader()
        out.writerows(dict(zip(FIELDS, r, strict=True)) for r in rows)
    return folder


@pytest.fixture
def two(tmp_path):
    """Three deals (both seatings) against the Expert, plus a Simple match only old played."""
    old = write(tmp_path / "old", [(1, 0, "expert", "a"), (1, 1, "expert", "b"), (2, 0, "expert", "a"),
                                   (2, 1, "expert", "a"), (3, 0, "expert", "b"), (3, 1, "expert", ""),
                                   (4, 0, "simple", "a")])
    new = write(tmp_path / "new", [(1, 0, "expert", "a"), (1, 1, "expert", "a"), (2, 0, "expert", "a"),
                                   (2, 1, "expert", "a"), (3, 0, "expert", "a"), (3, 1, "expert", "b")])
    return old, new


def test_scores_pair_by_seed_seating_and_opponent(two):
    old, new = two
    scores = match_scores(old)
    assert scores[("3", "1", "expert")] == 0.5 and scores[("1", "1", "expert")] == 0.0
    assert match_scores(old / "matches.csv") == scores
    assert set(match_scores(old, "simple")) == {("4", "0", "simple")}
    result = compare(scores, match_scores(new))
    assert result["n"] == 6 and result["deals"] == 3  # the Simple match is not paired
    assert result["old_rate"] == pytest.approx(3.5 / 6) and result["new_rate"] == pytest.approx(5 / 6)
    assert result["differ"] == 3
    # per deal: old 0.5, 1.0, 0.25; new 1.0, 1.0, 0.5 -> differences 0.5, 0, 0.25
    assert result["difference"] == pytest.approx(0.25)
    assert result["old_ci"] == duplicate_interval([0.5, 1.0, 0.25])


def test_identical_sets_differ_by_nothing(two):
    old, _ = two
    result = compare(match_scores(old), match_scores(old))
    assert result["difference"] == 0 and result["differ"] == 0 and result["difference_ci"] == (0.0, 0.0)


def test_pooled_keeps_each_sets_deals_apart(two):
    old, new = two
    a, b = match_scores(old, "expert"), match_scores(new, "expert")
    result = compare(*pooled([(a, b), (a, b)]))
    assert result["n"] == 12 and result["deals"] == 6 and result["difference"] == pytest.approx(0.25)


def test_cli_prints_a_line_per_pair_and_pooled(two, capsys):
    old, new = two
    main([str(old), str(new), str(old), str(new), "--names", "shipped", "candidate"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("pooled: n=12 shipped 58.3%")
    assert "candidate 83.3%" in lines[0] and "paired +25.0" in lines[0] and "3 outcomes differ" in lines[0]


def test_bad_input_names_the_problem(two, tmp_path):
    old, new = two
    with pytest.raises(FileNotFoundError, match="no matches.csv"):
        match_scores(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="share no match"):
        compare(match_scores(old, "simple"), match_scores(new))
    with pytest.raises(SystemExit):
        main([str(old)])
