"""eval.update_speed's comparison of two updated networks (the timing itself is a
measurement, run by hand: docs/learning.md, "A leaner update")."""

from __future__ import annotations

import torch

from eval.update_speed import compare


def _saved(path, weights, logits, actions):
    torch.save({"weights": weights, "logits": logits, "mask": torch.tensor([[True, False, True]]),
                "actions": actions}, path)
    return path


def test_compare_names_bit_identical_weights_and_the_differences(tmp_path):
    weights = {"a": torch.ones(2, 2), "b": torch.zeros(3)}
    logits, actions = torch.tensor([[-0.5, -1e8, -1.0]]), torch.tensor([1, 2, 3])
    before = _saved(tmp_path / "before.pt", weights, logits, actions)
    same = _saved(tmp_path / "same.pt", {k: v.clone() for k, v in weights.items()}, logits, actions)
    assert compare(before, same) == "same rollout, weights bit-identical"

    moved = {"a": weights["a"] + 1e-7, "b": weights["b"]}
    other = _saved(tmp_path / "other.pt", moved, logits + torch.tensor([[1e-6, 5.0, 0.0]]), torch.tensor([1, 0, 3]))
    report = compare(before, other)
    assert report.startswith("rollouts differ in 1 actions, 1 of 2 weight tensors differ, max abs diff 1.2e-07")
    assert report.endswith("legal logits 1e-06")  # the masked logit's change is not counted
