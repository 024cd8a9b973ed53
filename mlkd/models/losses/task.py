"""The calling convention shared by the multi-label task losses (BCE, ASL, Focal, Two-way, Hill, SPLC).

A task loss is the loss of a classifier head, teacher or student. mmpretrain 1.2.0's
``MultiLabelClsHead._get_loss`` calls ``loss_module(cls_score, target, avg_factor=B)`` with the
``[B, C]`` targets that mlkd's data preprocessor builds: 1 positive, 0 negative, -1 ignored. The
same module can also be given to the loss router (``cls_score`` / ``gt`` are taken by name, e.g.
``inputs=dict(cls_score='s_logits')``).

:class:`MultiLabelTaskLoss` holds what every task loss does the same way — fp32 evaluation
whatever the autocast state, the shape check, the reduction and its DDP scaling, ``loss_weight``
— and leaves the formula to :meth:`MultiLabelTaskLoss.compute`.
"""
from __future__ import annotations

import torch
from mmengine.dist import get_world_size

from mlkd.registry import MODELS
from .base import BaseDistillLoss, as_fp32, full_precision
from .utils import check_choice


class MultiLabelTaskLoss(BaseDistillLoss):
    """Base of the task losses: head-call signature, fp32, reduction, ``scale_by_world_size``.

    ``avg_factor`` (mmpretrain passes the batch size) is accepted and **ignored** by every task
    loss: each keeps its reference code's reduction (a plain sum over the ``B·C`` entries for BCE,
    ASL, Hill and SPLC; means over sets for Two-way), and dividing by ``avg_factor`` would change
    the scale by ``B`` and the meaning of the papers' learning rates and loss weights. A user who
    wants mmpretrain's "sum over classes / B" picks ``reduction='batchmean'`` where offered.

    Args:
        reduction: one of the subclass's :attr:`reductions`.
        scale_by_world_size: with ``reduction='sum'`` under DDP, multiply by the world size. DDP
            averages gradients over ranks, so a per-rank sum would otherwise give ``1/W`` of the
            gradient of the sum over the global batch, which is what the reference computes.
            Default True; no effect in a single process or in eval mode.
        loss_weight: factor applied to the loss.
    """

    #: Reductions a subclass offers; the first is its reference default.
    reductions: tuple[str, ...] = ('sum', 'mean', 'batchmean', 'none')

    def __init__(self, reduction: str = 'sum', scale_by_world_size: bool = True,
                 loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight)
        self.reduction = check_choice('reduction', reduction, self.reductions)
        self.scale_by_world_size = bool(scale_by_world_size)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        """The unweighted loss of fp32 ``[B, C]`` logits and targets; implemented by subclasses."""
        raise NotImplementedError

    def forward(self,
                cls_score: torch.Tensor,
                gt: torch.Tensor,
                avg_factor: float | None = None,
                reduction_override: str | None = None) -> torch.Tensor:
        """Args:
            cls_score: ``[B, C]`` logits (any float dtype; evaluated in fp32).
            gt: ``[B, C]`` float targets, 1 positive, 0 negative, -1 ignored. The values are
                validated once per batch, on the host, by the data preprocessor
                (:func:`mlkd.utils.targets.check_batch_labels`); they are not checked here,
                which would synchronise the device at every call.
            avg_factor: accepted for mmpretrain heads and ignored (see the class docstring).
            reduction_override: optional reduction replacing ``self.reduction`` for this call.

        Returns:
            ``loss_weight`` × the loss: a scalar, or ``[B, C]`` for ``reduction='none'``.
        """
        del avg_factor  # the reference reductions do not divide by the batch size
        reduction = check_choice('reduction', reduction_override or self.reduction,
                                 self.reductions)
        if cls_score.dim() != 2 or gt.shape != cls_score.shape:
            raise ValueError(f'{type(self).__name__}: expected [B, C] logits and targets of the '
                             f'same shape, got cls_score {tuple(cls_score.shape)} and gt '
                             f'{tuple(gt.shape)}')
        with full_precision():
            logits, target = as_fp32(cls_score, gt)
            loss = self.compute(logits, target, reduction)
        if reduction == 'sum' and self.scale_by_world_size and self.training:
            loss = loss * get_world_size()
        return self.loss_weight * loss

    def extra_repr(self) -> str:
        return f'reduction={self.reduction!r}, {super().extra_repr()}'


@MODELS.register_module()
class UnobservedAsNegative(torch.nn.Module):
    """A task loss that reads ignored (``-1``) targets as negatives ("assume negative").

    mlkd's data marks the labels not observed in a weakly labelled training set with ``-1`` and
    every task loss skips them. The missing-label baselines of Zhang et al. (Focal, ASL, Hill,
    BCE + pseudo labels, SPLC; 004 Table B.1) instead train on the observed positives with
    everything else negative; wrapping the loss says so in the config, and leaves the data alone:
    ``dict(type='UnobservedAsNegative', loss=dict(type='HillLoss'))``.

    Args:
        loss: config of the wrapped task loss (a :class:`MultiLabelTaskLoss`).
    """

    def __init__(self, loss: dict) -> None:
        super().__init__()
        self.loss = MODELS.build(loss)

    def forward(self,
                cls_score: torch.Tensor,
                gt: torch.Tensor,
                avg_factor: float | None = None,
                reduction_override: str | None = None) -> torch.Tensor:
        """``cls_score`` / ``gt``: ``[B, C]``; ``gt`` 1 / 0 / -1, the -1 entries become 0."""
        return self.loss(cls_score, gt.clamp(min=0), avg_factor=avg_factor,
                         reduction_override=reduction_override)
