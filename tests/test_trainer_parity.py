"""``eval.trainer_parity``'s comparison: bit for bit, names, dtypes and shapes included, and
the RLlib trainer found under its name in either tree (the training runs themselves are the
gate a refactor runs, minutes long: docs/training.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from eval.trainer_parity import differences, rllib_module_name

ROOT = Path(__file__).resolve().parents[1]


def test_only_bit_identical_weights_pass() -> None:
    a = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, dtype=np.float32)}
    assert differences(a, {k: v.copy() for k, v in a.items()}) == []
    w = a["w"].copy()
    w[1, 2] = np.nextafter(w[1, 2], np.float32(np.inf))  # one weight, one unit in the last place
    nudged = dict(a, w=w)
    assert differences(a, nudged) == ["w: float32(2, 3) vs float32(2, 3)"]
    assert differences(a, dict(a, b=a["b"].astype(np.float64))) == ["b: float32(3,) vs float64(3,)"]
    assert differences(a, dict(a, b=a["b"].reshape(1, 3))) == ["b: float32(3,) vs float32(1, 3)"]
    assert differences(a, {"w": a["w"]}) == ["only in one: ['b']"]


def test_the_rllib_trainer_is_found_in_either_tree(tmp_path: Path) -> None:
    assert rllib_module_name(ROOT) == "train.rllib.ppo"
    assert rllib_module_name(tmp_path) == "train.rllib_ppo"  # a tree from before the package
