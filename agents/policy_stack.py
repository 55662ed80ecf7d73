"""Several frozen policies of one architecture in one torch forward pass.

Why: a league plays up to ``--self-play-pool`` snapshots of the learner (and ``ppo:``
opponents) at once, each on a few of the batch's matches. One forward per opponent per
pass of :meth:`hgin_env.batch.vector.LearnerBatch._play_opponents` is a few hundred small
tensor operations each (the card network's), on a handful of rows: the Python and
dispatch cost of the operations, not their arithmetic, sets the pace. Policies that share
an architecture (the same class, constructor settings and parameter shapes: a run's
snapshots do) have their weights stacked (``torch.func.stack_module_state``) and run as
one batched forward (``torch.func.vmap``): the same operations once, on a (K, rows, ...)
batch, each policy's rows padded to the largest count.

The numbers are the per-policy forward's to float rounding (a batched matrix product may
add in another order: logits within ~1e-5, ``tests/test_policy_stack.py``), not bit for
bit; each agent then draws its moves from its own generator, as alone.

The stacked weights are cached: the policies must not change while they are stacked
(frozen snapshots, ``ppo:`` agents); the live learner (``train.envs.LivePolicy``) is not
stacked.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

#: Policies kept in one architecture's stack (the league's pool and a few it dropped).
MAX_STACKED = 32


class _Actor(nn.Module):
    """A policy's actor as a module whose forward is :func:`agents.batched.actor_logits`
    (what ``torch.func.functional_call`` runs with each policy's weights)."""

    def __init__(self, policy: nn.Module):
        super().__init__()
        self.policy = policy

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        from .batched import actor_logits

        return actor_logits(self.policy, observations)


class _Stack:
    """The stacked weights of some policies of one architecture, and the module that runs
    them (the first one's: ``functional_call`` swaps each policy's weights in)."""

    def __init__(self, policies: Sequence[nn.Module]):
        from torch.func import stack_module_state

        self.policies = list(policies)  # held: their ids stay theirs while stacked
        self.params, self.buffers = stack_module_state([_Actor(p) for p in self.policies])
        self.base = _Actor(policies[0])
        self.position = {id(p): i for i, p in enumerate(self.policies)}

    def holds(self, policies: Sequence[nn.Module]) -> bool:
        return all(id(p) in self.position for p in policies)

    def logits(self, policies: Sequence[nn.Module], observations: torch.Tensor) -> torch.Tensor:
        """(K, rows, actions): policy k's logits on ``observations[k]``."""
        from torch.func import functional_call, vmap

        positions = [self.position[id(p)] for p in policies]
        params, buffers = self.params, self.buffers
        if positions != list(range(len(self.policies))):  # some of them, or another order
            index = torch.tensor(positions, device=observations.device)
            params = {k: v.index_select(0, index) for k, v in params.items()}
            buffers = {k: v.index_select(0, index) for k, v in buffers.items()}

        def one(p: dict, b: dict, x: torch.Tensor) -> torch.Tensor:
            return functional_call(self.base, (p, b), (x,))

        return vmap(one)(params, buffers, observations)


class PolicyStacks:
    """The stacked forward of frozen policies, by architecture (module docstring)."""

    def __init__(self) -> None:
        self._signatures: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._stacks: dict[tuple, _Stack] = {}

    def signature(self, policy: nn.Module) -> tuple:
        """What must agree for two policies to share a stack: the class, the device, the
        constructor settings (an SB3 policy's, callables aside) and every tensor's name
        and shape."""
        found = self._signatures.get(policy)
        if found is None:
            settings = getattr(policy, "_get_constructor_parameters", dict)()
            found = (type(policy), str(next(policy.parameters()).device),
                     tuple(sorted((k, repr(v)) for k, v in settings.items() if not callable(v))),
                     tuple((k, tuple(v.shape), v.dtype) for k, v in policy.state_dict().items()))
            self._signatures[policy] = found
        return found

    def probabilities(self, jobs: Sequence[tuple[nn.Module, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """For each ``(policy, observations, masks)`` job, the masked move probabilities
        (float32 [rows, actions], :func:`agents.batched.policy_probabilities`' form): the
        jobs of one architecture in one stacked forward, a lone one by itself."""
        from .batched import masked_probabilities, policy_probabilities

        out: list[Any] = [None] * len(jobs)
        by_kind: dict[tuple, list[int]] = {}
        for i, (policy, _, _) in enumerate(jobs):
            by_kind.setdefault(self.signature(policy), []).append(i)
        for kind, members in by_kind.items():
            if len(members) == 1:
                policy, obs, masks = jobs[members[0]]
                out[members[0]] = policy_probabilities(policy, obs, masks)
                continue
            policies = [jobs[i][0] for i in members]
            stack = self._stack(kind, policies)
            rows = [len(jobs[i][1]) for i in members]
            device = next(policies[0].parameters()).device
            padded = np.zeros((len(members), max(rows), jobs[members[0]][1].shape[1]), dtype=np.float32)
            for k, i in enumerate(members):
                padded[k, :rows[k]] = jobs[i][1]
            with torch.no_grad():
                logits = stack.logits(policies, torch.as_tensor(padded, device=device))
                for k, i in enumerate(members):
                    out[i] = masked_probabilities(logits[k, :rows[k]], jobs[i][2]).cpu().numpy()
        return out

    def _stack(self, kind: tuple, policies: Sequence[nn.Module]) -> _Stack:
        """The architecture's stack, rebuilt with any policy it lacks (keeping the ones it
        has, up to :data:`MAX_STACKED`: the league's snapshots come and go one at a time)."""
        stack = self._stacks.get(kind)
        if stack is None or not stack.holds(policies):
            unique = list({id(p): p for p in policies}.values())
            kept = [] if stack is None else [p for p in stack.policies if id(p) not in {id(q) for q in unique}]
            stack = _Stack((unique + kept)[:max(MAX_STACKED, len(unique))])
            self._stacks[kind] = stack
        return stack


#: The process's stacks (the batched opponents of every environment share them).
STACKS = PolicyStacks()
