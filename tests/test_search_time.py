"""eval/search_time.py: CPU time per searched decision, any format (toy size)."""

from __future__ import annotations

import pytest

from eval.search_time import main, measure


def test_times_the_searched_decisions_after_the_warmup():
    out = measure("search:value=rollout,rollouts=2", "hollywood", decisions=3, seed=5, warmup=1)
    assert out["decisions"] == 3 and out["matches"] >= 1
    assert 0 < out["cpu_ms_median"] <= out["cpu_ms_p95"] and out["worlds_mean"] == 2


def test_a_format_search_is_timed_and_bad_arguments_are_refused(capsys):
    out = main(["--agent", "search:rollouts=1,policy_plies=2", "--rules", "hollywood_three_hand",
                "--decisions", "2", "--warmup", "0", "--seed", "3"])
    assert out["decisions"] == 2 and out["rules"] == "hollywood_three_hand" and out["worlds_mean"] == 1
    assert '"cpu_ms_mean"' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--agent", "expert", "--decisions", "1"])
    with pytest.raises(ValueError, match="decisions"):
        measure(decisions=0)


def test_the_eager_and_traced_forwards_are_timed_side_by_side_on_the_same_decisions():
    from agents.traced_forward import TRACED

    out = main(["--agent", "search:rollouts=2,policy_plies=2", "--rules", "hollywood", "--decisions", "2",
                "--warmup", "0", "--seed", "3", "--forward", "eager", "traced", "--rounds", "2"])
    assert TRACED.enabled  # the eager turns leave the process's graphs on
    assert set(out["cpu_ms_mean"]) == {"eager", "traced"} and out["cpu_ratio_to_first"]["eager"] == 1.0
    assert [len(v) for v in out["rounds_cpu_ms_mean"].values()] == [2, 2]
    with pytest.raises(ValueError, match="forward"):
        measure(decisions=1, forward="jit")
