"""All-gather a loss's batch inputs across DDP ranks, with gradient, so it sees the global batch.

A loss that compares samples (NDD's pairs, L2D's instance-aware term, RKD, PKT, CRD's negatives, the
Two-way class-wise term) computed per rank depends on the number of processes. With
:func:`gather_batch` every rank evaluates the loss on the concatenated global batch ``L(X)``; the
value is the same on every rank.

Gradients: rank ``r`` back-propagates its own copy of ``L`` into the whole gathered batch; the
backward of the gather sums those gradients over ranks (``all_reduce``) and keeps rank ``r``'s
slice, i.e. ``W · ∂L/∂x_r`` for ``W`` identical copies of ``L``. DDP then averages parameter
gradients over ranks, which yields exactly ``∂L/∂θ`` — the gradient of a single process holding the
concatenated batch. ``all_reduce`` (not ``reduce_scatter``) keeps this working with gloo on CPUs.

Ranks may hold batches of different sizes (the last batch of an epoch): sizes are exchanged first
and the tensors padded to the largest, then trimmed.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


class _GatherWithGradient(torch.autograd.Function):
    """``cat(all_gather(x))`` over ranks (padded to equal size); backward: summed, own slice."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, sizes: list[int]) -> torch.Tensor:
        ctx.sizes, ctx.rank = sizes, dist.get_rank()
        return _gather(x, sizes)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad)
        start = sum(ctx.sizes[: ctx.rank])
        return grad[start : start + ctx.sizes[ctx.rank]], None


def _gather(x: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    largest = max(sizes)
    padded = x.contiguous()
    if x.shape[0] < largest:
        padding = x.new_zeros((largest - x.shape[0], *x.shape[1:]))
        padded = torch.cat([padded, padding])
    parts = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(parts, padded)
    return torch.cat([part[:size] for part, size in zip(parts, sizes)])


def _batch_sizes(local: int, device: torch.device) -> list[int]:
    sizes = [torch.zeros(1, dtype=torch.long, device=device) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, torch.tensor([local], dtype=torch.long, device=device))
    return [int(s.item()) for s in sizes]


def gather_batch(value: Any, batch_size: int | None) -> Any:
    """The global-batch version of one loss argument.

    Tensors whose first dimension is the local batch (``batch_size``) are gathered — with gradient
    when they require it; lists are gathered element-wise; anything else (data samples, tensors
    that are not per-sample) is returned unchanged. Every rank must call this for the same
    arguments in the same order (the routers guarantee it: every rank builds the same losses).

    Args:
        value: a loss argument (tensor ``[b, ...]``, list of tensors, or anything).
        batch_size: the local batch size ``b``; ``None`` gathers every tensor.

    Returns:
        ``[Σ_r b_r, ...]`` tensor (ranks in order), or a list of them, or ``value``.
    """
    if isinstance(value, (list, tuple)):
        return type(value)(gather_batch(v, batch_size) for v in value)
    if (
        not isinstance(value, torch.Tensor)
        or value.dim() == 0
        or (batch_size is not None and value.shape[0] != batch_size)
    ):
        return value
    sizes = _batch_sizes(value.shape[0], value.device)
    if value.requires_grad:
        return _GatherWithGradient.apply(value, sizes)
    return _gather(value, sizes)
