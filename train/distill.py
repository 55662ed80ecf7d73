"""Distilling the search back into the policy (``train.ppo --distill DIR``): PPO's loss plus
a distillation term on the search's recorded decisions (:mod:`train.search_games`).

Every PPO minibatch step minimises ``ppo_loss + distill_coef × D`` on a minibatch of
``distill_batch`` recorded decisions (weighted by ``distill_deviation_weight`` where the
search left the policy's own move), where D is, by ``distill_target``:

* ``"chosen"``: the policy's cross-entropy with the search's chosen move;
* ``"soft"``: the KL divergence KL(π' ‖ π_θ) from the **improved policy**
  π' = softmax(log π + c·Q̂) over the legal moves (:func:`improved_policy`): log π the
  recorded policy's log-probabilities at the decision, Q̂ the search's mean values of its
  candidates, completed for the moves it did not value by the prior-weighted mean of the
  values it has (Gumbel MuZero's value mixture, without the root's own value, which the
  search does not compute). Q̂ is used raw, in the critic's units (hand points / 100),
  not min-max normalised per decision as Gumbel MuZero's σ does: the candidates' values
  often differ by less than their noise, and normalising would turn any such difference
  into a full unit; raw, ``distill_c`` says what one hand point is worth (c = 10: a move
  0.1 better, ten points of a hand, gets e times its prior odds). The target is fixed at
  recording (the prior is the policy that searched), so every decision teaches the
  search's judgement of all its candidates, not only the 3% where it left the policy.

Both terms go
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
where the decisions carry the policy's log-probabilities the mean KL(π' ‖ π_θ) from the
improved policy (``distill/holdout_kl``) and the share where the policy's most likely move is
π''s (``distill/holdout_target_agreement``), with the training minibatches' D
(``distill/loss``), by the callback of :meth:`Distillation.callback`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from train.search_games import SearchTargets, load_targets

#: What the distillation term teaches (module docstring).
TARGETS = ("chosen", "soft")


def improved_policy(targets: SearchTargets, c: float) -> np.ndarray:
    """float32 [N, 108]: π' = softmax(log π + c·Q̂) over each decision's legal moves (module
    docstring); Q̂ the candidates' mean values (those valued on at least one world), the
    others the prior-weighted mean of those."""
    if not targets.has_logits:
        raise ValueError("the recorded decisions carry no policy log-probabilities (games recorded without a "
                         "learned policy, or before the field): --distill-target soft needs them")
    n = len(targets)
    rows = np.repeat(np.arange(n), targets.candidates.shape[1])
    valued = (targets.candidates >= 0) & (targets.visits > 0)
    q = np.full((n, 108), np.nan)
    q[rows[valued.ravel()], targets.candidates[valued]] = targets.means[valued]
    logits = np.where(targets.masks, targets.logits.astype(np.float64), -np.inf)
    prior = np.exp(logits)
    seen = ~np.isnan(q)
    mixture = (np.where(seen, prior * np.nan_to_num(q), 0.0).sum(axis=1)
               / np.maximum(np.where(seen, prior, 0.0).sum(axis=1), 1e-300))
    completed = np.where(seen, q, mixture[:, None])
    z = logits + c * completed
    z -= z.max(axis=1, keepdims=True)
    out = np.where(targets.masks, np.exp(z), 0.0)
    return (out / out.sum(axis=1, keepdims=True)).astype(np.float32)


def kl_divergence(target: np.ndarray, log_probs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """float [N]: KL(target ‖ policy) over the legal moves, ``log_probs`` the policy's."""
    safe = np.where(target > 0, target, 1.0)
    return np.where(masks & (target > 0), target * (np.log(safe) - log_probs), 0.0).sum(axis=1)


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
                 holdout: float = 0.1, seed: int = 0, target: str = "chosen", c: float = 10.0):
        if coef < 0 or batch < 1 or deviation_weight <= 0 or not 0 <= holdout < 1:
            raise ValueError("--distill-coef must be >= 0, --distill-batch >= 1, --distill-deviation-weight > 0 "
                             "and 0 <= --distill-holdout < 1")
        if target not in TARGETS or c < 0:
            raise ValueError(f"--distill-target must be one of {TARGETS} and --distill-c >= 0, got {target!r}, {c}")
        self.folder = folder
        self.targets = load_targets(folder)
        self.coef, self.batch, self.seed = coef, batch, seed
        self.target, self.c = target, c
        #: π' per decision (improved_policy) where the decisions carry the policy's log-probabilities.
        self.improved = improved_policy(self.targets, c) if target == "soft" or self.targets.has_logits else None
        #: H(π') per decision: KL = cross-entropy − H(π'), logged as the soft target's loss.
        self.target_entropy = None if self.improved is None else \
            -kl_divergence(self.improved, np.zeros_like(self.improved), self.targets.masks).astype(np.float32)
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
                "decisions": len(self.targets), "target": self.target,
                **({"c": self.c} if self.target == "soft" else {})}

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
        """Backward ``coef × D`` of one minibatch into the parameters' gradients."""
        import torch as th

        if self.coef == 0 or not self.model.policy.training:
            return
        step = int(self.model.num_timesteps)
        if step != self._step_seen:  # a new update: reseed for this one
            self._step_seen = step
            self._rng = np.random.default_rng([self.seed, step])
        rows = self.train_rows[self._rng.integers(len(self.train_rows), size=self.batch)]
        obs, masks = self._inputs(rows)
        weights = th.as_tensor(self.weights[rows])
        if self.target == "soft":
            # KL(π' ‖ π_θ) = Σ π' log π' − Σ π' log π_θ: the first term is constant, the
            # distribution's masked logits are log π_θ (-1e8 where illegal, where π' is 0).
            target = th.as_tensor(self.improved[rows])  # type: ignore[index]
            log_probs = self.model.policy.get_distribution(obs, action_masks=masks).distribution.logits
            per_row = -(target * log_probs).sum(dim=1) - th.as_tensor(self.target_entropy[rows])
        else:
            actions = th.as_tensor(self.targets.actions[rows])
            _, per_row, _ = self.model.policy.evaluate_actions(obs, actions, action_masks=masks)
            per_row = -per_row
        loss = (weights * per_row).sum() / weights.sum()
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
        figures = self.holdout_figures()
        for name, value in figures.items():
            logger.record(f"distill/holdout_{name}", value)
        return True

    def holdout_figures(self) -> dict[str, float]:
        """The policy on the held-out decisions: ``agreement``, the share where its most
        likely move is the search's; ``deviations``, that share where the search left the
        baseline (nan where there are none); with the improved policy (decisions that carry
        the policy's log-probabilities), ``kl``, the mean KL(π' ‖ π_θ), and
        ``target_agreement``, the share where its most likely move is π''s."""
        import torch as th

        rows = self.held_rows
        names = ("agreement", "deviations") + (("kl", "target_agreement") if self.improved is not None else ())
        if not len(rows):
            return dict.fromkeys(names, float("nan"))
        with th.no_grad():
            obs, masks = self._inputs(rows)
            log_probs = self.model.policy.get_distribution(obs, action_masks=masks).distribution.logits.numpy()
        chosen = log_probs.argmax(axis=1)
        same = chosen == self.targets.actions[rows]
        deviated = self.targets.actions[rows] != self.targets.baselines[rows]
        out = {"agreement": float(same.mean()),
               "deviations": float(same[deviated].mean()) if deviated.any() else float("nan")}
        if self.improved is not None:
            target = self.improved[rows]
            out["kl"] = float(kl_divergence(target, log_probs.astype(np.float64), masks).mean())
            out["target_agreement"] = float((chosen == target.argmax(axis=1)).mean())
        return out
