"""Smoke test of the speed benchmark harness (eval/bench/run.py) at tiny size, ours only."""

from __future__ import annotations

import json

from eval.bench import run


def test_bench_tiny_without_anchors(tmp_path, capsys) -> None:
    assert run.main(["--tiny", "--no-anchors", "--quiet", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "bench.md").read_text()
    assert text == capsys.readouterr().out
    assert text.startswith("# hgin_env speed benchmark")
    assert "Machine: " in text and " cores, Python " in text and "numpy " in text
    assert "not run (--no-anchors)" in text
    for row in ("**ours min_deadwood**", "**ours deadwood_of_mask**", "**ours min_deadwood_batch**",
                "**ours deadwood_after_discard_mask**", "**ours raw_env**", "**ours env() wrapped**",
                "**ours Hand engine**", "**simple vs simple**", "**expert vs expert**"):
        assert row in text, row
    assert "| contender | per unit | per second | x ref | notes |" in text
    # The batched engine's rows: both implementations, side by side in the one run.
    assert "**ours BatchGame N=64 compiled**" in text and "**ours BatchGame N=64 numpy**" in text
    assert {"ours BatchGame N=64 compiled (hollywood_three_hand)",
            "ours BatchGame N=64 numpy (hollywood_partnership)"} <= data_rows(tmp_path, "batch_steps")
    assert "**expert (batched)**" in text and "**expert (row by row)**" in text
    assert data_rows(tmp_path, "expert_agents") == {"expert (batched)", "expert (row by row)", "expert (compiled)"}
    assert "OpenSpiel gin_rummy" not in text.split("What a hand is")[0].split("Inputs:")[1]  # no anchor rows
    # OpenSpiel's bot as the peer benchmark's opponent: compiled, its reference and pyspiel's, in this process.
    assert data_rows(tmp_path, "expert_openspiel_bot") == {"bot (reference, row by row)", "bot (compiled)",
                                                           "bot (pyspiel, row by row)"}
    assert "compiled = reference on 64/64 states, reference = the pyspiel bot on 64/64" in text
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["anchors"] is None
    assert data["benches"]["meld_real"]["rows"]["ours min_deadwood"]["median_s"] > 0
    for name in ("meld_random", "meld_real", "discard_random", "discard_real"):
        assert set(data["mismatches"][name].values()) == {0}, name


def data_rows(folder, bench: str) -> set[str]:
    return set(json.loads((folder / "bench.json").read_text())["benches"][bench]["rows"])


def test_bench_only_one_group(tmp_path) -> None:
    assert run.main(["--tiny", "--no-anchors", "--quiet", "--only", "meld", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "bench.json").read_text())
    assert set(data["benches"]) == {"meld_random", "meld_real"}


def test_commits_bench_runs_at_toy_size(tmp_path):
    """eval.bench.commits against this same checkout: every contender timed on both sides."""
    import json
    from pathlib import Path

    from eval.bench.commits import CONTENDERS, main

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "commits.json"
    assert main(["--other", str(root), "--rounds", "1", "--steps", "2048", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report) == set(CONTENDERS)
    assert all(row["this"] > 0 and row["other"] > 0 for row in report.values())


def test_commits_bench_sweeps_tables_and_formats(tmp_path):
    """--tables and --profiles: one batched row per (profile, batch size), the AEC rows left out."""
    import json
    from pathlib import Path

    from eval.bench.commits import batched_name, main

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "sweep.json"
    assert main(["--other", str(root), "--rounds", "1", "--steps", "64", "--tables", "4", "16", "--no-aec",
                 "--profiles", "hollywood", "hollywood_three_hand", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report) == {batched_name(p, n) for p in ("hollywood", "hollywood_three_hand") for n in (4, 16)}
    assert all(row["this"] > 0 and row["other"] > 0 for row in report.values())


def test_learner_device_bench_rows_and_report(tmp_path, monkeypatch):
    """``eval.bench.learner_device`` (the lent GPU machine's training figures): its rows,
    one real toy ``train.ppo`` process timed, and the report divided by the CPU row."""
    from eval.bench.learner_device import TOY, WIDE, configurations, report, run_one

    labels = [label for label, _ in configurations("cuda", [1, 8])]
    assert labels == ["cpu", "cuda sync", "cuda workers=1", "cuda workers=8", "wide cpu", "wide cuda sync",
                      "wide cuda workers=8"]
    flags = dict(configurations("cpu", [2]))
    assert list(flags) == ["cpu", "cpu workers=2", "wide cpu", "wide cpu workers=2"]
    assert flags["cpu workers=2"][-2:] == ["--rollout-workers", "2"] and flags["wide cpu"][-len(WIDE):] == list(WIDE)
    row = run_one(TOY, 256, 0, tmp_path, 300)
    assert row["steps"] == 256 and row["steps_per_s"] > 0, row
    import subprocess

    import eval.bench.learner_device as bench

    refusal = subprocess.CompletedProcess([], 2, "", "usage: ...\nerror: --rollout-workers 3: one or more\n")
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **k: refusal)  # a refused run, without a process
    bad = run_one(["--rollout-workers", "3"], 256, 0, tmp_path / "bad", 300)
    assert bad["error"] == ["error: --rollout-workers 3: one or more"]
    table = report([{"label": "cpu", **row}, {"label": "wide cpu", "steps_per_s": row["steps_per_s"] / 2,
                                              "wall_s": 1.0}, {"label": "x", **bad}],
                   {"cpu_cores": 2, "processor": "x86_64", "gpu": None, "torch": "2"})
    assert "| wide cpu |" in table and "0.50x" in table and "| x | failed:" in table


def test_opponent_loop_bench_plays_the_same_game_in_every_format(capsys):
    """``python -m eval.opponent_loop`` at toy size: a line per format, both loops the same game."""
    from eval import opponent_loop

    assert opponent_loop.main(["--steps", "3", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(opponent_loop.PROFILES)
    assert all(line.endswith("same game: True") for line in lines)
