"""A policy's masked move probabilities as one traced TorchScript graph, on the CPU.

Why: at the batches the search plays (a median of 8 rows per ply in three-hand, where a
searched decision is about ninety plies) and at a :class:`agents.ppo.PPOAgent`'s
one-row decisions, the card network's forward is a few hundred small tensor operations
whose Python and dispatch cost, not their arithmetic, sets the pace. Traced once
(``torch.jit.trace``), the same operations run from a graph: the same floats
(``tests/test_traced_forward.py`` compares them bit for bit with the eager forward, every
shipped policy, batches of 1 to 300 rows), for less Python per call (docs/runs/search_time,
"The policy's traced graph").

Why traced and not frozen (``torch.jit.freeze``, a little faster): a frozen graph holds a
copy of the weights, and a copy cannot tell when the weights change: Adam's fused step
(the training's lean update) leaves torch's in-place version counters as they were. A
traced graph reads the policy's own parameters, so every change shows in its next
answer: an optimizer step, ``load_state_dict``, ``p.data = ...`` (tested); only a parameter
replaced by a new object (``module.weight = nn.Parameter(...)``, which nothing here does)
would go unseen. A graph is made
once a policy has answered :data:`TRACE_AFTER` calls (tracing costs about 30 ms), and
kept as long as the policy lives. GPU policies keep the eager forward (a GPU graph may
fuse operations, which would change the floats).
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import torch
from torch import nn

#: Calls before a policy's graph is made.
TRACE_AFTER = 8


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
    """A policy's calls so far and, from the :data:`TRACE_AFTER`-th, its graph."""

    __slots__ = ("calls", "graph")

    def __init__(self) -> None:
        self.calls = 0
        self.graph: Any = None


class TracedGraphs:
    """The traced graphs of the policies asked often enough (module docstring)."""

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        #: False: every call runs the eager forward (the anchor of the graphs' speed,
        #: ``python -m eval.search_time --forward eager traced``).
        self.enabled = True

    def probabilities(self, policy: nn.Module, observations: torch.Tensor, legal: torch.Tensor
                      ) -> torch.Tensor | None:
        """The masked probabilities from ``policy``'s traced graph, or None where it has none
        (yet): the caller runs the eager forward. Call under ``torch.no_grad()``."""
        if not self.enabled or observations.device.type != "cpu" or observations.shape[0] == 0:
            return None
        entry = self._entries.get(policy)
        if entry is None:
            entry = self._entries[policy] = _Entry()
        if entry.graph is None:
            entry.calls += 1
            if entry.calls < TRACE_AFTER:
                return None
            # Traced on two rows (a one-row trace could bake in a broadcast over its batch).
            entry.graph = _trace(policy, observations[:1].expand(2, -1).contiguous(),
                                 legal[:1].expand(2, -1).contiguous())
        return entry.graph(observations, legal)


def _trace(policy: nn.Module, observations: torch.Tensor, legal: torch.Tensor) -> Any:
    """``policy``'s probabilities traced on these inputs (the graph calls its parameters)."""
    with warnings.catch_warnings():  # the tracer's notes on shapes read as Python ints
        warnings.simplefilter("ignore")
        return torch.jit.trace(_Probabilities(policy), (observations, legal), check_trace=False)


#: The process's graphs (:func:`agents.batched.policy_probabilities` asks them).
TRACED = TracedGraphs()
