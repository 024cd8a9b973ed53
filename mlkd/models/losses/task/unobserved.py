"""A wrapper that reads unobserved labels as negatives ("assume negative") for any task loss."""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import TaskLoss


@MODELS.register_module()
class UnobservedAsNegative(TaskLoss):
    """A task loss that reads ignored (``-1``) targets as negatives ("assume negative").

    mlkd's data marks the labels not observed in a weakly labelled training set with ``-1`` and
    every task loss skips them. The missing-label baselines of Zhang et al., "Simple and Robust
    Loss Design for Multi-Label Learning with Missing Labels" (arXiv 2021: Focal, ASL, Hill,
    BCE + pseudo labels, SPLC; the SCL paper's Table B.1) instead train on the observed positives
    with everything else negative; wrapping the loss says so in the config, and leaves the data
    alone: ``dict(type='UnobservedAsNegative', loss=dict(type='HillLoss'))``. The wrapped loss
    keeps its own reduction, weight and world-size scaling.

    Args:
        loss: config of the wrapped :class:`~mlkd.models.losses.base.TaskLoss`.
    """

    def __init__(self, loss: dict) -> None:
        inner = MODELS.build(loss)
        if not isinstance(inner, TaskLoss):
            raise TypeError(f'UnobservedAsNegative wraps a TaskLoss, got {type(inner).__name__}')
        self.reductions = inner.reductions
        super().__init__(inner.reduction)
        self.loss = inner

    def forward(
        self,
        logits: torch.Tensor,
        gt: torch.Tensor,
        avg_factor: float | None = None,
        reduction_override: str | None = None,
    ) -> torch.Tensor:
        """``logits`` / ``gt``: ``[B, C]``; ``gt`` 1 / 0 / -1, the -1 entries become 0."""
        return self.loss(
            logits, gt.clamp(min=0), avg_factor=avg_factor, reduction_override=reduction_override
        )
