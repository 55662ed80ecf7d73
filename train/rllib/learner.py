"""RLlib's PPO learner with the loss computed once per minibatch, as SB3 computes it.

``PPOTorchLearner.compute_loss_for_module`` builds two action distributions per
minibatch (the current policy's, and the sampling policy's from the batch, which only its
KL term reads), then the value function in a second pass over the module. With this
project's settings (no KL loss, no value clipping) :class:`CardPPOLearner` computes the
same loss from one ``log_softmax`` of the logits and the critic latent the module's
``forward_train`` already returns (``Columns.EMBEDDINGS``,
:class:`agents.nets.rllib_module.CardRLModule`): the same clipped surrogate, value loss and
entropy bonus, and the same logged statistics (policy loss, value loss, explained
variance, entropy; the KL is logged as 0, as RLlib logs it without ``use_kl_loss``).
Two differences from RLlib's defaults, to be SB3's PPO: the advantages are normalised over
each minibatch (SB3's ``normalize_advantage``), not only over the whole batch (RLlib's GAE
connector), and Adam's epsilon is 1e-5 (:data:`ADAM_EPS`), not 1e-8.
``tests/test_rllib.py`` checks the loss against RLlib's on one batch.

With ``use_kl_loss=True`` or a finite ``vf_clip_param`` it defers to RLlib's loss.

Two changes to the learner's connector pipeline, after PPO's GAE:

- the values GAE reads are computed without a gradient graph (:class:`NoGradGAE`: they
  are targets, never differentiated);
- :class:`DropLossMaskedRows` removes the rows the loss masks out (the one artificial
  step per episode chunk that GAE adds to bootstrap from), after the advantages are
  computed: an iteration of 4,096 decisions is 4,096 rows, so 4 epochs of 1,024 are 16
  minibatches as in SB3 (17 with the ~170 masked rows, about 6% more update time).

Pipelined runs (``--pipelined``, :mod:`train.rllib.pipeline`) learn from batches sampled
one update earlier. Clipping the ratio against that sampling policy leaves less room for
this update: rows whose ratio the last update already moved past ``1 +- clip`` give no
gradient. From scratch that learned about half as fast (``docs/runs/rllib_pipelined``).
With ``learner_config_dict={"proximal_policy": True}`` (set by ``--pipelined``) the loss is
decoupled PPO (Hilton et al. 2022, "Batch size-invariance for policy optimization"):
:class:`ProximalPolicy` computes the learner's own policy before the update (the
proximal policy) on the batch, without autograd, the ratio is clipped against it, and
each row is weighted by proximal over sampling probability, truncated at
:data:`BEHAVIOUR_WEIGHT_MAX` as V-trace truncates (Espeholt et al. 2018):

    loss = -mean( min(w, 1) * min(r * A, clip(r, 1 - e, 1 + e) * A) ),
    r = pi(a|s) / pi_prox(a|s),   w = pi_prox(a|s) / pi_behaviour(a|s)

A synchronous batch has ``pi_prox == pi_behaviour``: ``w == 1`` and the loss is PPO's.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from ray.rllib.algorithms.ppo.ppo import (
    LEARNER_RESULTS_KL_KEY,
    LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY,
    LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY,
)
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.connectors.learner import GeneralAdvantageEstimation
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.learner import ENTROPY_KEY, POLICY_LOSS_KEY, VF_LOSS_KEY
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.utils.torch_utils import explained_variance

#: Adam's epsilon, as SB3's PPO policies have it.
ADAM_EPS = 1e-5
#: Batch columns of the decoupled loss: the proximal policy's log-probability of each
#: action, and each row's truncated importance weight.
PROXIMAL_LOGP = "hgin_proximal_logp"
BEHAVIOUR_WEIGHT = "hgin_behaviour_weight"
#: Truncation of the importance weight (V-trace's rho-bar).
BEHAVIOUR_WEIGHT_MAX = 1.0


def action_logp(logits: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probabilities of every action and of the taken ones, from masked logits."""
    log_probs = torch.log_softmax(logits, dim=-1)
    return log_probs, log_probs.gather(1, actions.long().unsqueeze(1)).squeeze(1)


class NoGradGAE(GeneralAdvantageEstimation):
    """RLlib's GAE connector, its value predictions made without autograd."""

    def __call__(self, **kwargs: Any) -> Any:
        with torch.no_grad():
            return super().__call__(**kwargs)


class DropLossMaskedRows(ConnectorV2):
    """Drop the rows of ``Columns.LOSS_MASK`` == False (and the mask) from each module's
    batch: every tensor whose first dimension is the batch's rows is cut to the kept rows."""

    def __call__(self, *, rl_module: Any, batch: dict, episodes: Any, **kwargs: Any) -> dict:
        for module_id, module_batch in batch.items():
            mask = module_batch.get(Columns.LOSS_MASK) if isinstance(module_batch, dict) else None
            if mask is None or rl_module[module_id].is_stateful():
                continue  # sequences (stateful modules) keep their padding
            keep, rows = mask.bool(), mask.shape[0]
            batch[module_id] = {k: _rows(v, keep, rows) for k, v in module_batch.items() if k != Columns.LOSS_MASK}
        return batch


class ProximalPolicy(ConnectorV2):
    """Decoupled PPO's proximal policy (module docstring): the learner's policy before the
    update, evaluated on the whole batch once (no autograd), as ``PROXIMAL_LOGP``, and the
    truncated importance weight ``BEHAVIOUR_WEIGHT`` of each row.

    The logits come from ``forward_exploration``, the call the env runners sampled with:
    the actor alone (``forward_train`` would also run the critic, unused here)."""

    def __call__(self, *, rl_module: Any, batch: dict, episodes: Any, **kwargs: Any) -> dict:
        with torch.no_grad():
            for module_id, module_batch in batch.items():
                logits = rl_module[module_id].forward_exploration(module_batch)[Columns.ACTION_DIST_INPUTS]
                _, logp = action_logp(logits, module_batch[Columns.ACTIONS])
                module_batch[PROXIMAL_LOGP] = logp
                module_batch[BEHAVIOUR_WEIGHT] = torch.clamp(torch.exp(logp - module_batch[Columns.ACTION_LOGP]),
                                                             max=BEHAVIOUR_WEIGHT_MAX)
        return batch


def _rows(value: Any, keep: torch.Tensor, rows: int) -> Any:
    if isinstance(value, dict):
        return {k: _rows(v, keep, rows) for k, v in value.items()}
    if isinstance(value, torch.Tensor) and value.dim() and value.shape[0] == rows:
        return value[keep]
    return value


class CardPPOLearner(PPOTorchLearner):
    """PPO's loss in one pass over the logits, the learner pipeline's GAE without autograd
    and without the masked rows (module docstring)."""

    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        """Adam with SB3's ``eps=1e-5`` (sb3-contrib's masked policy sets it; torch's and
        RLlib's default is 1e-8, which lets parameters with tiny gradients take larger steps)."""
        params = self.get_parameters(self._module[module_id])
        self.register_optimizer(module_id=module_id, optimizer=torch.optim.Adam(params, eps=ADAM_EPS), params=params,
                                lr_or_lr_schedule=config.lr)

    def build(self) -> None:
        super().build()
        if self._learner_connector is not None and self.config.add_default_connectors_to_learner_pipeline:
            self._learner_connector.remove("GeneralAdvantageEstimation")
            self._learner_connector.append(NoGradGAE(gamma=self.config.gamma, lambda_=self.config.lambda_))
            self._learner_connector.append(DropLossMaskedRows())
            if (self.config.learner_config_dict or {}).get("proximal_policy"):
                self._learner_connector.append(ProximalPolicy())

    def compute_loss_for_module(self, *, module_id: str, config: Any, batch: dict, fwd_out: dict) -> torch.Tensor:
        if config.use_kl_loss or math.isfinite(config.vf_clip_param) or not config.use_critic:
            return super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        module = self.module[module_id].unwrapped()
        mask = batch.get(Columns.LOSS_MASK)

        def mean(x: torch.Tensor) -> torch.Tensor:
            return x.mean() if mask is None else x[mask].sum() / mask.sum()

        log_probs, logp = action_logp(fwd_out[Columns.ACTION_DIST_INPUTS], batch[Columns.ACTIONS])
        decoupled = PROXIMAL_LOGP in batch  # against the proximal policy, rows weighted (docstring)
        ratio = torch.exp(logp - batch[PROXIMAL_LOGP if decoupled else Columns.ACTION_LOGP])
        # Masked logits (-1e8) have probability 0: their p log p terms are 0, as in
        # torch's Categorical.entropy.
        entropy = -(log_probs.exp() * log_probs).sum(dim=-1)
        advantages = batch[Postprocessing.ADVANTAGES]
        # Normalised over the minibatch, as SB3 does (RLlib's GAE normalises over the batch).
        valid = advantages if mask is None else advantages[mask]
        if valid.numel() > 1:
            advantages = (advantages - valid.mean()) / (valid.std() + 1e-8)
        surrogate = torch.min(advantages * ratio,
                              advantages * torch.clamp(ratio, 1 - config.clip_param, 1 + config.clip_param))
        if decoupled:
            surrogate = batch[BEHAVIOUR_WEIGHT] * surrogate
        values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
        vf_loss = torch.pow(values - batch[Postprocessing.VALUE_TARGETS], 2.0)
        entropy_coeff = self.entropy_coeff_schedulers_per_module[module_id].get_current_value()
        total = mean(-surrogate + config.vf_loss_coeff * vf_loss - entropy_coeff * entropy)
        with torch.no_grad():
            mean_vf = mean(vf_loss)
            self.metrics.log_dict({
                POLICY_LOSS_KEY: -mean(surrogate),
                VF_LOSS_KEY: mean_vf,
                LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY: mean_vf,
                LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY: explained_variance(batch[Postprocessing.VALUE_TARGETS], values),
                ENTROPY_KEY: mean(entropy),
                LEARNER_RESULTS_KL_KEY: torch.zeros((), device=total.device),
                **({BEHAVIOUR_WEIGHT: mean(batch[BEHAVIOUR_WEIGHT])} if decoupled else {}),
            }, key=module_id, window=1)
        return total
