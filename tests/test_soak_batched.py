"""The batched soak (``python -m eval.soak --batched``) at toy size: every two-player profile
with no violation, and its checks do catch a broken state."""

from __future__ import annotations

import numpy as np
import pytest

from eval.soak import main as soak_main
from eval.soak_batched import _check_state, soak_batched, two_player_profiles
from hgin_env.batch import BatchGame


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_batched_soak_every_two_player_profile_without_violations(capsys, engine):
    assert len(two_player_profiles()) >= 8
    assert soak_main(["--batched", "--hands", "400", "--games", "64", "--engine", engine]) == 0
    out = capsys.readouterr().out
    assert f"batched ({engine} engine)" in out
    assert "violations 0" in out and all(p in out for p in two_player_profiles())
    hands = int(out.split("hands ")[1].split()[0])
    assert hands >= 400


def test_batched_soak_checks_catch_a_broken_state():
    batch = BatchGame(4, seed=0)
    assert _check_state(batch) == []
    other = batch.hands[2, 1]
    batch.hands[2, 0] |= other & ~(other - np.uint64(1))  # the lowest card of the other hand: in both
    batch.pile_len[3] += 1
    problems = _check_state(batch)
    assert "cards not conserved" in _all(problems, 2) and "hand sizes" in _all(problems, 2)
    assert "pile" in _all(problems, 3)


def _all(problems, game):
    return " ".join(what for i, what in problems if i == game)


def test_batched_soak_report_counts_showdowns():
    report = soak_batched("hollywood_short", 150, games=64, seed=1)
    assert report.violations == [] and report.hands >= 150 and report.showdowns > 0


@pytest.mark.parametrize("argv", [["--batched", "--profiles", "hollywood_partnership"],
                                  ["--batched", "--hands", "0"], ["--profiles", "nope"]])
def test_batched_soak_refuses_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        soak_main(argv)
    assert exc.value.code == 2 and "error" in capsys.readouterr().err
