"""A policy's masked move probabilities as one frozen TorchScript graph, on the CPU.

Why: at the batches the search plays (a median of 8 rows per ply in three-hand, where a
searched decision is about a hundred plies) and at a :class:`agents.ppo.PPOAgent`'s
one-row decisions, the card network's forward is a few hundred small tensor operations
whose Python and dispatch cost, not their arithmetic, sets the pace. Traced once and
frozen (``torch.jit.trace``, ``torch.jit.freeze``), the same operations run from a graph:
the same floats (``tests/test_frozen_forward.py`` compares them bit for bit with the
eager forward, every shipped policy, batches of 1 to 300 rows), in about a third less
time per call, a fifth less per searched decision (docs/runs/search_time, "The policy's
frozen graph").

A frozen graph holds a copy of the weights. So it is kept per policy together with the
weights' identity (each tensor's storage and torch's in-place version counter: an
optimizer step, ``load_state_dict`` or ``.to()`` changes them) and dropped when that
changes; and it is made only once a policy has answered :data:`FREEZE_AFTER` calls with
the same weights (a search's or tournament's policy: at once; a live learner whose
weights change every update: never, as tracing costs about 40 ms). GPU policies keep the
eager forward (a GPU graph may fuse operations, which would change the floats).
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import torch
from torch import nn

#: Calls at the same weights before a policy's graph is made.
FREEZE_AFTER = 8


def masked_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Softmax of ``logits`` over the ``legal`` (bool, the logits' shape) moves, computed as
    sb3_contrib's ``MaskableCategorical`` computes its ``probs`` (normalise, set the illegal
    moves' logits to -1e8, normalise again, softmax): the same operations in the same order
    give the same floats."""
    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    logits = torch.where(legal, logits, torch.tensor(-1e8, dtype=logits.dtype, device=logits.device))
    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    return torch.softmax(logits, dim=-1)


class _Probabilities(nn.Module):
    """What is traced: the actor's logits (:func:`agents.batched.actor_logits`), then
    :func:`masked_softmax`."""

    def __init__(self, policy: nn.Module):
        super().__init__()
        self.policy = policy

    def forward(self, observations: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        from .batched import actor_logits

        return masked_softmax(actor_logits(self.policy, observations), legal)


class _Entry:
    """A policy's tensors (listed once: walking the modules costs ~50 us a call), their
    identity when the entry was made (``weights``, :meth:`current`), the calls since and
    the graph."""

    __slots__ = ("tensors", "weights", "calls", "graph")

    def __init__(self, policy: nn.Module):
        self.tensors = [*policy.parameters(), *policy.buffers()]
        self.weights = self.current()
        self.calls = 0
        self.graph: Any = None

    def current(self) -> list:
        """Each tensor's storage and in-place version."""
        return [(t.data_ptr(), t._version) for t in self.tensors]


class FrozenGraphs:
    """The frozen graphs of the policies asked often enough (module docstring)."""

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        #: False: every call runs the eager forward (the anchor of the graphs' speed,
        #: ``python -m eval.search_time --forward eager``).
        self.enabled = True

    def probabilities(self, policy: nn.Module, observations: torch.Tensor, legal: torch.Tensor
                      ) -> torch.Tensor | None:
        """The masked probabilities from ``policy``'s frozen graph, or None where it has none
        (yet): the caller runs the eager forward. Call under ``torch.no_grad()``."""
        if not self.enabled or observations.device.type != "cpu" or observations.shape[0] == 0:
            return None
        entry = self._entries.get(policy)
        if entry is None or entry.weights != entry.current():
            entry = _Entry(policy)
            self._entries[policy] = entry
        if entry.graph is None:
            entry.calls += 1
            if entry.calls < FREEZE_AFTER:
                return None
            # Traced on two rows (a one-row trace could bake in a broadcast over its batch).
            entry.graph = _freeze(policy, observations[:1].expand(2, -1).contiguous(),
                                  legal[:1].expand(2, -1).contiguous())
        return entry.graph(observations, legal)


def _freeze(policy: nn.Module, observations: torch.Tensor, legal: torch.Tensor) -> Any:
    """``policy``'s probabilities traced on these inputs and frozen (in eval mode: the
    traced copy's, the policy's own mode is left as it is)."""
    with warnings.catch_warnings():  # the tracer's notes on shapes read as Python ints
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(_Probabilities(policy), (observations, legal), check_trace=False)
        # Only the passes that keep the numbers (the others fold convolutions, none here).
        return torch.jit.freeze(traced.eval(), optimize_numerics=False)


#: The process's graphs (:func:`agents.batched.policy_probabilities` asks them).
FROZEN = FrozenGraphs()
