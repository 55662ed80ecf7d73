"""``eval.critic_quality``: the Monte Carlo returns it compares the critic with, and a toy run."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from eval.critic_quality import CriticQuality, discounted_returns, main


def test_discounted_returns_end_at_each_episode():
    # Two slots over four steps: slot 0 ends after step 1 and runs on; slot 1 never ends.
    rewards = np.array([[1.0, 1.0], [2.0, 1.0], [4.0, 1.0], [8.0, 1.0]])
    dones = np.array([[False, False], [True, False], [False, False], [False, False]])
    returns, complete = discounted_returns(rewards, dones, 0.5)
    np.testing.assert_allclose(returns[:2, 0], [1 + 0.5 * 2, 2])
    assert complete[:2, 0].all() and not complete[2:, 0].any() and not complete[:, 1].any()
    np.testing.assert_allclose(returns[:, 1], [1.875, 1.75, 1.5, 1.0])  # running sums, marked incomplete


def test_quality_of_a_perfect_and_a_constant_critic():
    returns = np.array([0.0, 1.0, 2.0, 3.0])
    assert CriticQuality.of(returns, returns, 1).explained_variance == 1.0
    constant = CriticQuality.of(np.full(4, 1.5), returns, 1)
    assert constant.explained_variance == pytest.approx(0.0) and constant.mean_error == pytest.approx(0.0)


def test_toy_run_prints_every_checkpoint(tmp_path, capsys):
    out = tmp_path / "q.json"
    assert main(["agents/policies/hgin_ppo_three_hand.zip", "--steps", "300", "--n-envs", "4",
                 "--out", str(out)]) == 0
    assert "explained variance" in capsys.readouterr().out
    figures = json.loads(out.read_text())["results"][0]
    overall, starts = figures["overall"], figures["hand_starts"]
    assert overall["matches"] >= 1 and 0 < starts["decisions"] < overall["decisions"]
    with pytest.raises(ValueError, match="no match ended"):
        main(["agents/policies/hgin_ppo_three_hand.zip", "--steps", "5", "--n-envs", "2"])


def test_a_checkpoint_for_other_observations_is_refused_by_name(tmp_path):
    # The duel's policy reads the duel's observation, not three-hand's.
    with pytest.raises(ValueError, match="hgin_ppo.zip was trained for the duel layout .* three_hand layout"):
        main(["agents/policies/hgin_ppo.zip", "--steps", "5", "--n-envs", "2"])
    # The right layout without a privileged critic: the metadata says so.
    from agents.ppo import META_NAME
    shipped, plain = "agents/policies/hgin_ppo_three_hand.zip", tmp_path / "plain.zip"
    with zipfile.ZipFile(shipped) as source, zipfile.ZipFile(plain, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name == META_NAME:
                data = json.dumps({**json.loads(data), "privileged_size": 0}).encode()
            target.writestr(name, data)
    with pytest.raises(ValueError, match="plain.zip has no privileged critic: .*--privileged-critic"):
        main([str(plain), "--steps", "5", "--n-envs", "2"])
