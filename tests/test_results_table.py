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
