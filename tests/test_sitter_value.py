"""eval.sitter_value: the figures of a sitting seat's critic value against its played-on
value, checked on synthetic rows whose truth is known, and the script at toy size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eval import sitter_value


def _rows(calls: int = 400, per_call: int = 10, k: int = 4, seed: int = 0):
    """Synthetic probe samples: a row's played-on values scatter (sd 0.15) around its
    expectation ``m``; each replay's sitting view reads ``(m - 0.8) / 1.4`` plus its own
    error (sd 0.05)."""
    rng = np.random.default_rng(seed)
    samples, truth = [], []
    for _ in range(calls):
        m = rng.normal(0.1, 0.4, per_call)
        x = (m[:, None] - 0.8) / 1.4 + rng.normal(0, 0.05, (per_call, k))
        y = m[:, None] + rng.normal(0, 0.15, (per_call, k))
        samples.append((x, y))
        truth.append(m)
    return samples, truth


def test_the_summary_recovers_the_noise_and_the_calibrated_error():
    samples, truth = _rows()
    out = sitter_value.summarize(samples)
    assert out["rows"] == 4000 and out["replays"] == 4 and out["held_out_rows"] == 2000
    assert out["play_noise_var"] == pytest.approx(0.15**2, rel=0.05)
    even = [i for i in range(len(samples)) if i % 2 == 0]
    knots = sitter_value.fit_knots(np.concatenate([samples[i][0] for i in even]),
                                   np.concatenate([samples[i][1] for i in even]))
    held = [i for i in range(len(samples)) if i % 2]
    x = np.concatenate([samples[i][0] for i in held])
    m = np.concatenate([truth[i] for i in held])
    direct = float(np.mean((np.interp(x, *knots) - m[:, None]) ** 2))  # against the known truth
    assert out["critic_error_var"] == pytest.approx(direct, rel=0.25)
    assert out["critic_error_var"] < out["play_noise_var"] < out["raw_critic_error_var"]
    assert out["linear_critic_error_var"] == pytest.approx(1.4**2 * 0.05**2, rel=0.25)  # the truth is a line
    assert len(out["knots_x"]) == len(sitter_value.QUANTILES) - 1 and np.all(np.diff(out["knots_x"]) > 0)
    np.testing.assert_allclose(np.interp(out["knots_x"], out["knots_x"], out["knots_y"]),
                               0.8 + 1.4 * np.array(out["knots_x"]), atol=0.06)  # the tails shrink a little
    given = sitter_value.summarize(samples, ([-2.0, 2.0], [0.8 - 2.8, 0.8 + 2.8]))
    assert given["given_critic_error_var"] == pytest.approx(1.4**2 * 0.05**2, rel=0.25)


def test_pooled_probes_are_scored_on_each_others_knots():
    (first, truth), second = _rows(seed=1), _rows(seed=2)[0]
    sets = {name: (np.concatenate([x for x, _ in rows]), np.concatenate([y for _, y in rows]))
            for name, rows in (("a", first), ("b", second))}
    out = sitter_value.pool(sets)
    assert set(out["sets"]) == {"a", "b"} and out["rows"] == 8000
    knots_b = sitter_value.fit_knots(*sets["b"])
    direct = float(np.mean((np.interp(sets["a"][0], *knots_b) - np.concatenate(truth)[:, None]) ** 2))
    assert out["sets"]["a"]["critic_error_var"] == pytest.approx(direct, rel=0.25)
    assert out["critic_error_var"] < out["play_noise_var"]
    with pytest.raises(ValueError, match="at least 2"):
        sitter_value.pool({"a": sets["a"]})


def test_the_summary_needs_two_calls():
    with pytest.raises(ValueError, match="at least 2"):
        sitter_value.summarize(_rows(calls=1)[0])


def test_the_probe_at_toy_size(tmp_path, capsys):
    """Six searched decisions, two replays each: the rows' samples and the summary are
    written; a duel profile is refused (no seat sits out there)."""
    out = tmp_path / "probe.json"
    samples = tmp_path / "rows.npz"
    summary = sitter_value.main(["--agent", "search:rollouts=4", "--decisions", "6", "--replays", "2",
                                 "--seed", "5", "--out", str(out), "--samples", str(samples)])
    assert json.loads(out.read_text()) == summary
    rows = np.load(samples)
    assert rows["x"].shape == rows["y"].shape == (summary["rows"], 2) and summary["rows"] > 0
    again = tmp_path / "again.npz"
    again.write_bytes(samples.read_bytes())
    pooled = sitter_value.main(["--pool", str(samples), str(again)])
    assert pooled["rows"] == 2 * summary["rows"]
    with pytest.raises(SystemExit):
        sitter_value.main(["--rules", "hollywood", "--decisions", "3"])
    assert "three-hand" in capsys.readouterr().err
