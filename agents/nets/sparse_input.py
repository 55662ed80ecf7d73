"""The trunks' first layers computed from the observation's nonzero entries.

Why: the trunks' first layers (observation → ``hidden``, one per trunk) were two thirds of
a PPO minibatch's arithmetic on the CPU (docs/learning.md, "Toward 2.5x"), and almost all
of it multiplies zeros. An observation is mostly 0/1 card planes: of its 394 columns a
duel observation has about 90 nonzero, and 43 once ``discard_deadwood`` (1.0 for every card
but the held ones in the discard phase) is read as its difference from 1.0. So each layer
is computed as

    y = (x − o) Wᵀ + (b + o Wᵀ)

with ``o`` the observation's common value per column (:func:`common_values`: 1.0 in
``discard_deadwood``, 0 elsewhere): a sum of the weight rows of the nonzero entries of
``x − o`` (compressed once per call, shared by every layer reading the same input), and
its weight gradient a scatter of the output gradient into those rows. About 5x less work
than the dense product and its weight gradient (1,024 x 394 → 256: 0.9 ms against 4.2 ms
here).

The same function as ``nn.Linear``, not the same bits: the sums run in another order, so
outputs and gradients agree to float rounding (tests/test_sparse_input.py). The kernels
are numba, serial and deterministic; the CPU only (a CUDA tensor takes ``nn.Linear``).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import torch as th
from torch import nn

from hgin_env.observation import ObservationLayout


def common_values(layout: ObservationLayout, width: int) -> np.ndarray:
    """(width,) float32: each input column's most common value, subtracted before the
    sparse product (1.0 in ``discard_deadwood``; 0 elsewhere, privileged columns included)."""
    values = np.zeros(width, dtype=np.float32)
    values[layout.slice("discard_deadwood")] = 1.0
    return values


@nb.njit(cache=True)
def _compress(x, common, rows_at, columns, values):  # pragma: no cover - compiled
    """CSR of ``x − common``: row i's entries are ``[rows_at[i], rows_at[i+1])``. Returns
    how many entries there are (``columns``/``values`` are long enough for every one)."""
    n, width = x.shape
    k = 0
    for i in range(n):
        rows_at[i] = k
        for j in range(width):
            v = x[i, j] - common[j]
            if v != 0.0:
                columns[k] = j
                values[k] = v
                k += 1
    rows_at[n] = k
    return k


@nb.njit(cache=True)
def _gather(rows_at, columns, values, weight_t, base, out):  # pragma: no cover - compiled
    """out[i] = base + Σ_k values[k] · weight_t[columns[k]] over row i's entries that the
    layer reads (columns < weight_t's rows)."""
    limit, hidden = weight_t.shape
    for i in range(out.shape[0]):
        for c in range(hidden):
            out[i, c] = base[c]
        for k in range(rows_at[i], rows_at[i + 1]):
            j = columns[k]
            if j < limit:
                v = values[k]
                for c in range(hidden):
                    out[i, c] += v * weight_t[j, c]


@nb.njit(cache=True)
def _scatter(rows_at, columns, values, grad_out, grad_weight_t):  # pragma: no cover - compiled
    """grad_weight_t[j] += values[k] · grad_out[i] for every entry (i, j) the layer reads."""
    limit, hidden = grad_weight_t.shape
    for i in range(grad_out.shape[0]):
        for k in range(rows_at[i], rows_at[i + 1]):
            j = columns[k]
            if j < limit:
                v = values[k]
                for c in range(hidden):
                    grad_weight_t[j, c] += v * grad_out[i, c]


class _SparseLinears(th.autograd.Function):
    """Several linear layers over the leading columns of one input (each reads
    ``weight.shape[1]`` of them), from one compression of ``input − common``."""

    @staticmethod
    def forward(ctx, x: th.Tensor, common: th.Tensor, *params: th.Tensor) -> tuple[th.Tensor, ...]:
        x_np = x.detach().contiguous().numpy()
        common_np = common.numpy()
        n, width = x_np.shape
        rows_at = np.empty(n + 1, dtype=np.int64)
        columns = np.empty(x_np.size, dtype=np.int32)
        values = np.empty(x_np.size, dtype=np.float32)
        count = _compress(x_np, common_np, rows_at, columns, values)
        columns, values = columns[:count], values[:count]
        outputs = []
        for weight, bias in zip(params[::2], params[1::2], strict=True):
            w = weight.detach()
            base = (bias.detach() + w @ common[:w.shape[1]]).numpy()
            out = np.empty((n, w.shape[0]), dtype=np.float32)
            _gather(rows_at, columns, values, w.t().contiguous().numpy(), base, out)
            outputs.append(th.from_numpy(out))
        ctx.compressed = (rows_at, columns, values)
        ctx.save_for_backward(common, *params[::2])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs: th.Tensor):
        rows_at, columns, values = ctx.compressed
        common, *weights = ctx.saved_tensors
        grads: list[th.Tensor | None] = [None, None]
        for weight, grad_out in zip(weights, grad_outputs, strict=True):
            grad_out = grad_out.contiguous()
            grad_weight_t = np.zeros((weight.shape[1], weight.shape[0]), dtype=np.float32)
            _scatter(rows_at, columns, values, grad_out.numpy(), grad_weight_t)
            grad_bias = grad_out.sum(dim=0)
            # d/dW of o·Wᵀ: the common values' share, the same for every row.
            grad_weight = th.from_numpy(grad_weight_t).t().contiguous().add_(
                th.outer(grad_bias, common[:weight.shape[1]]))
            grads += [grad_weight, grad_bias]
        return tuple(grads)


def sparse_linears(x: th.Tensor, common: th.Tensor, layers: list[nn.Linear]) -> tuple[th.Tensor, ...]:
    """``tuple(layer(x[:, :layer.in_features]) for layer in layers)``, computed from the
    nonzero entries of ``x − common`` on the CPU (the module docstring); on another
    device, or with float64 weights, the layers themselves."""
    if x.device.type != "cpu" or x.dtype != th.float32 or any(
            layer.weight.dtype != th.float32 for layer in layers):
        return tuple(layer(x[:, :layer.in_features]) for layer in layers)
    params = [p for layer in layers for p in (layer.weight, layer.bias)]
    return _SparseLinears.apply(x, common, *params)
