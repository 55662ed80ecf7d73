"""Distilling the search back into the policy (``train.ppo --distill DIR``): PPO's loss plus
a distillation term on the search's recorded decisions (:mod:`train.search_games`).

Every PPO minibatch step minimises ``ppo_loss + distill_coef × CE``, where CE is the
policy's cross-entropy with the search's chosen moves on a minibatch of ``distill_batch``
recorded decisions (weighted by ``distill_deviation_weight`` where the search left the
policy's own move: those few decisions are what the search knows better). Both terms go
through one backward pass, the gradient clip and the step of PPO's optimizer: the
distillation gradient is put into the parameters' ``.grad`` when PPO clears them
(:meth:`Distillation.install` wraps the policy's optimizer's ``zero_grad``), and PPO's
``loss.backward()`` adds its own to it. So the loss is PPO's as SB3 writes it, with one
term added, and nothing of SB3's training loop is copied.

The minibatches are drawn from a generator seeded by the run's seed and the step count at
each update, so a resumed run draws what the uninterrupted one would. A share
``distill_holdout`` of the recorded matches (by match seed) is never trained on: at every
update the policy's agreement with the search there is logged (``distill/holdout_agreement``,
and ``distill/holdout_deviations``: on the decisions where the search left the policy's move),
with the training minibatches' cross-entropy (``distill/loss``), by the callback of
:meth:`Distillation.callback`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from train.search_games import SearchTargets, load_targets


def split_by_match(targets: SearchTargets, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, held out): a share ``holdout`` of the matches, drawn by seed."""
    matches = np.unique(targets.seeds)
    rng = np.random.default_rng([seed, 7])
    held = rng.permutation(matches)[:int(round(holdout * len(matches)))]
    out = np.isin(targets.seeds, held)
    return np.flatnonzero(~out), np.flatnonzero(out)


class Distillation:
    """The distillation term of a PPO model (module docstring). ``install`` puts it on the
    policy's optimizer; it adds its gradient at every ``zero_grad`` of a training update."""

    def __init__(self, folder: str, coef: float = 1.0, batch: int = 256, deviation_weight: float = 1.0,
                 holdout: float = 0.1, seed: int = 0):
        if coef < 0 or batch < 1 or deviation_weight <= 0 or not 0 <= holdout < 1:
            raise ValueError("--distill-coef must be >= 0, --distill-batch >= 1, --distill-deviation-weight > 0 "
                             "and 0 <= --distill-holdout < 1")
        self.folder = folder
        self.targets = load_targets(folder)
        self.coef, self.batch, self.seed = coef, batch, seed
        self.train_rows, self.held_rows = split_by_match(self.targets, holdout, seed)
        if not len(self.train_rows):
            raise ValueError(f"{folder}: no recorded decision is left to train on after the holdout")
        deviated = self.targets.actions != self.targets.baselines
        self.weights = np.where(deviated, deviation_weight, 1.0).astype(np.float32)
        self.model: Any = None
        self._rng: np.random.Generator | None = None
        self._step_seen = -1
        self._losses: list[float] = []

    def lineage(self) -> dict:
        """What a distilled checkpoint's metadata records of its teacher (``distilled_from``):
        the games' folder, search, opponents and rules, and the matches and decisions read."""
        games = json.loads((Path(self.folder) / "args.json").read_text())
        return {"games": self.folder, "search": games.get("search"), "opponents": games.get("opponents"),
                "rules": games.get("rules"), "matches": int(np.unique(self.targets.seeds).size),
                "decisions": len(self.targets)}

    def install(self, model: Any) -> None:
        """Add the term to ``model``'s updates (a MaskablePPO over the card policy)."""
        size = model.policy.observation_space.shape[0]
        if size < self.targets.observations.shape[1]:
            raise ValueError(f"the recorded observations have {self.targets.observations.shape[1]} columns, "
                             f"the policy reads {size}")
        self.pad = size - self.targets.observations.shape[1]  # a privileged critic's columns: zeros
        self.model = model
        optimizer = model.policy.optimizer
        plain = type(optimizer).zero_grad

        def zero_grad(set_to_none: bool = True) -> None:
            plain(optimizer, set_to_none=set_to_none)
            self.add_gradient()

        optimizer.zero_grad = zero_grad  # the instance's: PPO's update calls it before each backward

    def _inputs(self, rows: np.ndarray):
        import torch as th

        obs = self.targets.observations[rows]
        if self.pad:  # the actor never reads them (agents/nets/policy.py)
            obs = np.concatenate([obs, np.zeros((len(rows), self.pad), dtype=np.float32)], axis=1)
        return th.as_tensor(obs), self.targets.masks[rows]

    def add_gradient(self) -> None:
        """Backward ``coef × CE`` of one minibatch into the parameters' gradients."""
        import torch as th

        if self.coef == 0 or not self.model.policy.training:
            return
        step = int(self.model.num_timesteps)
        if step != self._step_seen:  # a new update: reseed for this one
            self._step_seen = step
            self._rng = np.random.default_rng([self.seed, step])
        rows = self.train_rows[self._rng.integers(len(self.train_rows), size=self.batch)]
        obs, masks = self._inputs(rows)
        actions = th.as_tensor(self.targets.actions[rows])
        weights = th.as_tensor(self.weights[rows])
        _, log_prob, _ = self.model.policy.evaluate_actions(obs, actions, action_masks=masks)
        loss = -(weights * log_prob).sum() / weights.sum()
        (self.coef * loss).backward()
        self._losses.append(float(loss.detach()))

    def callback(self) -> Any:
        """The SB3 callback that records each update's figures where SB3 records its own
        ``train/`` ones (after the update, before the next log dump), and the last update's
        at the end of training, dumped at the final step."""
        from stable_baselines3.common.callbacks import BaseCallback

        distillation = self

        class DistillationLog(BaseCallback):
            def _on_step(self) -> bool:
                return True

            def _on_rollout_end(self) -> None:  # the previous update has run
                distillation.record_update()

            def _on_training_end(self) -> None:  # the last update: one more row, at the final step
                if distillation.record_update():
                    self.logger.record("time/total_timesteps", self.num_timesteps)
                    self.logger.dump(self.num_timesteps)

        return DistillationLog()

    def record_update(self) -> bool:
        """Record the last update's figures in the model's logger (False: nothing since the
        last record)."""
        if not self._losses:
            return False
        logger = self.model.logger
        logger.record("distill/loss", float(np.mean(self._losses)))
        self._losses = []
        agreement, deviations = self.holdout_agreement()
        logger.record("distill/holdout_agreement", agreement)
        logger.record("distill/holdout_deviations", deviations)
        return True

    def holdout_agreement(self) -> tuple[float, float]:
        """The policy's most likely move against the search's on the held-out decisions: the
        share that agree, and the share among those where the search left the baseline
        (nan where there are none)."""
        import torch as th

        rows = self.held_rows
        if not len(rows):
            return float("nan"), float("nan")
        with th.no_grad():
            obs, masks = self._inputs(rows)
            probs = self.model.policy.get_distribution(obs, action_masks=masks).distribution.probs.numpy()
        same = probs.argmax(axis=1) == self.targets.actions[rows]
        deviated = self.targets.actions[rows] != self.targets.baselines[rows]
        return float(same.mean()), float(same[deviated].mean()) if deviated.any() else float("nan")
