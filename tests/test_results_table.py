"""eval.results_table: pooled pairs over tournament folders, both orders, ratings."""

from __future__ import annotations

import pytest

from eval.results_table import cross_table, main, pooled_pairs, read_rows
from eval.tournament import run_tournament


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    out = []
    for i, agents in enumerate((["simple", "random"], ["expert", "simple"], ["expert", "simple"])):
        folder = tmp_path_factory.mktemp(f"t{i}")
        run_tournament(agents, matches=4, seed=100 + 10 * i, workers=1, rules="hollywood_short").save(
            folder, plot=False)
        out.append(folder)
    return out


def test_pairs_pool_folders_and_flip(folders):
    rows = read_rows(folders)
    pairs = pooled_pairs(rows)
    assert pairs[("expert", "simple")]["matches"] == 8  # two folders pooled
    assert pairs[("expert", "simple")]["seeds"] == 4  # seeds of different folders kept apart
    for (a, b), s in pairs.items():
        back = pairs[(b, a)]
        assert s["a_wins"] == back["b_wins"] and s["draws"] == back["draws"]
        assert s["a_win_rate"] + back["a_win_rate"] == pytest.approx(1.0)
        assert s["a_columns_won"] == pytest.approx(back["b_columns_won"])


def test_table_and_aliases(folders, capsys):
    rows = read_rows(folders, aliases={"expert": "heuristic"})
    text = cross_table(rows, order=["heuristic", "simple", "random"])
    assert "| **heuristic** |" in text and "not played" in text and "random = 0" in text
    assert main([str(f) for f in folders] + ["--order", "expert", "simple", "random"]) == 0
    assert "Bradley–Terry" in capsys.readouterr().out
    assert main([str(folders[0]) + "_missing"]) == 2


def test_a_folder_alias_renames_within_its_folder_alone(folders, capsys):
    """The same label may name two policies in two folders (``c``, "the shipped policy",
    before and after a new one ships): a folder alias renames it in its folder only."""
    rows = read_rows(folders, aliases={"expert": "heuristic"}, folder_aliases={folders[2]: {"expert": "older"}})
    pairs = pooled_pairs(rows)
    assert pairs[("heuristic", "simple")]["matches"] == 4 and pairs[("older", "simple")]["matches"] == 4
    with pytest.raises(ValueError, match="folders not read"):
        read_rows(folders[:1], folder_aliases={folders[2]: {"expert": "older"}})
    argv = [str(f) for f in folders] + ["--folder-alias", str(folders[2]), "expert=older"]
    assert main(argv) == 0 and "| **older** |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(f) for f in folders] + ["--folder-alias", str(folders[2]), "expert"])
    assert "expected LABEL=NAME" in capsys.readouterr().err


def test_the_readme_and_results_tables_are_what_their_command_prints(capsys, monkeypatch, tmp_path):
    """docs/results.md's ``eval.results_table`` command, run on the committed folders, prints
    the cross table the README and docs/results.md show (and the ratings results.md shows),
    so a new shipped policy cannot leave the front page quoting the old one."""
    import re
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    results = (root / "docs" / "results.md").read_text(encoding="utf-8")
    command = re.search(r"python -m eval\.results_table ((?:.*\\\n)*.*)\n", results).group(1)
    monkeypatch.chdir(root)
    argv = shlex.split(command.replace("\\\n", " "))
    # The picture docs/results.md and the README show is what the same command draws
    # (drawn here into a temporary file, compared pixel by pixel with the committed one).
    picture = argv.index("--plot") + 1
    assert argv[picture] == "docs/img/results.png"
    argv[picture] = str(tmp_path / "results.png")
    assert main(argv) == 0
    printed = capsys.readouterr().out
    printed = printed[:printed.index("picture: ")].rstrip("\n") + "\n"
    import matplotlib.image

    drawn = matplotlib.image.imread(tmp_path / "results.png")
    committed = matplotlib.image.imread(root / "docs" / "img" / "results.png")
    assert drawn.shape == committed.shape and abs(drawn - committed).mean() < 0.01
    assert (root / "docs" / "img" / "results.png").stat().st_size < 100_000
    for page in ("README.md", "docs/results.md"):
        assert "img/results.png)" in (root / page).read_text(encoding="utf-8"), page
    cross, ratings = printed.split("\n\n| agent |")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert cross.strip() in readme and cross.strip() in results
    assert ("| agent |" + ratings).strip() in results
    # The table's ppo is the shipped policy (c in docs/runs/psro4/psro6's tournaments); the
    # policy shipped before it keeps its own row (c in round 5's own folders, renamed there alone).
    assert "c=ppo" in command and "docs/runs/psro4/psro6/eval/vs_table" in command
    assert "--folder-alias docs/runs/psro4/psro5/eval/vs_table c=psro5" in command


def test_ratings_have_bootstrap_intervals_around_them_and_the_plot_draws(folders, tmp_path):
    """Each rating's 95% interval (bootstrap over duplicate seeds, from a fixed seed) holds
    the rating; the same rows give the same intervals; the picture is written."""
    from eval.results_table import plot, rating_intervals

    rows = read_rows(folders)
    agents = ["expert", "simple", "random"]
    text = cross_table(rows, order=agents)
    assert "| random | 0 | the anchor |" in text
    intervals = rating_intervals(rows, agents, resamples=200)
    assert intervals == rating_intervals(rows, agents, resamples=200)
    from arena.ratings import bradley_terry

    results = {(a, b): (s["a_wins"] + 0.5 * s["draws"], s["b_wins"] + 0.5 * s["draws"])
               for (a, b), s in pooled_pairs(rows).items() if a < b}
    for name, rating in bradley_terry(agents, results, anchor="random").items():
        low, high = intervals[name]
        assert low - 1e-6 <= rating <= high + 1e-6, (name, rating, low, high)
    path = plot(rows, tmp_path / "r.png", order=agents)
    assert path.stat().st_size > 5_000
