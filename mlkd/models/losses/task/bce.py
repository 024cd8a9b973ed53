"""L2D's multi-label task loss: binary cross-entropy summed over the batch and the classes.

Paper / code: Yang et al., "Multi-Label Knowledge Distillation", ICCV 2023 (L2D,
``criterion/loss/bce.py``); ``docs/methods.md`` §4.1.1.

``L_BCE = −Σ_{b,c} [y log σ(z) + (1−y) log(1−σ(z))]`` over the non-ignored entries. The **sum**
reduction is the reference one: L2D's distillation weights (10·MLD, 100·CD, 1000·ID) and its coupled
weight decay are tuned against this scale.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_choice, reduce_valid


def binary_cross_entropy_sum(
    logits: torch.Tensor, gt: torch.Tensor, clamp_eps: float | None = None, reduction: str = 'sum'
) -> torch.Tensor:
    """Multi-label BCE on logits, ignoring entries whose target is negative (``-1``).

    Two evaluations:

    * ``clamp_eps=None`` (default): the numerically stable
      ``binary_cross_entropy_with_logits`` (``softplus`` form); exact for any logit.
    * ``clamp_eps=ε`` (L2D parity, ε = 1e-8): ``−[y log max(σ(z), ε) + (1−y) log max(1−σ(z), ε)]``
      with ``1−σ(z)`` computed by subtraction as the reference does. It equals the stable form
      except where a wrong prediction saturates (``|z| ≳ 18.4``): there the value is capped at
      ``−log ε ≈ 18.42`` and its gradient is zero.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets in [0, 1] (soft targets allowed); entries ``< 0`` are ignored.
        clamp_eps: ``None`` for the stable form, or the reference clamp ε.
        reduction: ``'sum'`` (reference: Σ over valid entries), ``'mean'`` (Σ / number of valid
            entries, 0 when there are none), ``'none'`` (``[B, C]``, 0 at ignored entries).

    Returns:
        Scalar (or ``[B, C]`` for ``'none'``) fp32 loss, connected to ``logits``.
    """
    check_choice('reduction', reduction, ('sum', 'mean', 'none'))
    valid = gt >= 0
    target = gt.clamp(min=0.0).to(logits.dtype)
    if clamp_eps is None:
        elem = F.binary_cross_entropy_with_logits(logits, target, reduction='none')
    else:
        prob = torch.sigmoid(logits)
        elem = -(
            target * prob.clamp(min=clamp_eps).log()
            + (1.0 - target) * (1.0 - prob).clamp(min=clamp_eps).log()
        )
    return reduce_valid(elem, valid, reduction)


@MODELS.register_module()
class BinaryCrossEntropySumLoss(TaskLoss):
    """L2D's task loss: BCE summed over the non-ignored ``B·C`` entries.

    See :func:`binary_cross_entropy_sum`.

    Used as the task loss inside an mmpretrain head, e.g.
    ``MultiLabelLinearClsHead(loss=dict(type='BinaryCrossEntropySumLoss'))``. mmpretrain 1.2.0's
    ``MultiLabelClsHead._get_loss`` calls ``loss_module(cls_score, target, avg_factor=B)``
    (positionally, then by keyword): ``avg_factor`` is accepted and **ignored** — dividing by it
    would silently change the loss scale by ``B`` and break the reference weights.

    Args:
        clamp_eps: ``None`` (default) for the stable BCE-with-logits; ``1e-8`` reproduces L2D's
            clamped ``log max(σ, ε)`` exactly (saturated wrong predictions get zero gradient).
        reduction: ``'sum'`` (default, reference), ``'mean'`` over valid entries, or ``'none'``.
        scale_by_world_size: with ``reduction='sum'`` under DDP, multiply by the world size.
            DDP averages gradients over ranks, so a per-rank sum would otherwise give ``1/W`` of
            the gradient of the sum over the global batch, which is what the reference computes
            (L2D ran DataParallel on one node). Default True; no effect in a single process.
        loss_weight: factor applied to the loss.
    """

    reductions = ('sum', 'mean', 'none')
    repr_fields = ('clamp_eps',)

    def __init__(
        self,
        clamp_eps: float | None = None,
        reduction: str = 'sum',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        self.clamp_eps = None if clamp_eps is None else float(clamp_eps)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return binary_cross_entropy_sum(logits, gt, self.clamp_eps, reduction)
