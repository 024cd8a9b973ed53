"""Hill, SPLC and the focal margin loss: task losses robust to missing labels.

Paper / code: Zhang et al., "Simple and Robust Loss Design for Multi-Label Learning with Missing
Labels" (arXiv 2112.07368; ``xinyu1205/robust-loss-mlml``, ``src/loss_functions/losses.py``);
``docs/methods.md`` §3.2. Negatives may be unannotated positives, so these losses weaken the
push on confident negatives (Hill) or turn them into positives after a warm-up (SPLC).

All three sum over the ``B·C`` entries (reference) and carry gradient through their focal
weights. Logarithms go through ``logsigmoid``: the reference's ``log(sigmoid(·))`` in Hill is
``−inf`` (and ``0 · −inf = NaN`` on the other side's entries) once the sigmoid underflows.
"""

from __future__ import annotations

from typing import Any

import torch

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_choice, check_non_negative, current_epoch, reduce_valid
from .focal import focal_bce

_REDUCTIONS = ('sum', 'mean', 'none')


def focal_margin_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    margin: float = 1.0,
    gamma: float = 2.0,
    reduction: str = 'sum',
) -> torch.Tensor:
    """Focal margin loss (Zhang et al.): focal loss with the logit margin ``m`` on positives.

    ``z' = z − m`` on positives, ``z`` elsewhere; ``ℓ+ = −(1 − σ(z'))^γ log σ(z')``,
    ``ℓ− = −σ(z)^γ log σ(−z)``, summed over valid entries. It is SPLC without the correction.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        margin: logit margin ``m`` of the positives (1.0).
        gamma: focusing exponent of both sides (2.0).
        reduction: ``'sum'`` (reference), ``'mean'`` over valid entries, or ``'none'``.
    """
    return splc_loss(logits, gt, epoch=None, margin=margin, gamma=gamma, reduction=reduction)


def splc_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    epoch: int | None,
    threshold: float = 0.6,
    change_epoch: int = 1,
    margin: float = 1.0,
    gamma: float = 2.0,
    reduction: str = 'sum',
) -> torch.Tensor:
    """Self-paced loss correction (SPLC, Zhang et al.) on the focal margin loss.

    1. ``z' = z − m`` on the annotated positives;
    2. from epoch ``change_epoch`` on (0-based), every negative with ``σ(z') > τ`` is treated as a
       positive (its logit keeps no margin: the margin was applied before the correction); the
       correction is a label choice and carries no gradient;
    3. ``ℓ = −[y' (1 − σ(z'))^γ log σ(z') + (1 − y') σ(z')^γ log σ(−z')]``, summed over valid
       entries. Ignored (``-1``) entries stay ignored.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        epoch: the current 0-based epoch; ``None`` applies no correction.
        threshold: ``τ`` (0.6; the README uses 0.65 on COCO with 75 % of the labels removed).
        change_epoch: first epoch with correction (1: after one epoch of training).
        margin: logit margin ``m`` of the positives (1.0).
        gamma: focusing exponent (2.0).
        reduction: ``'sum'`` (reference), ``'mean'`` over valid entries, or ``'none'``.
    """
    check_choice('reduction', reduction, _REDUCTIONS)
    pos, neg, valid = gt == 1, gt == 0, gt >= 0
    shifted = torch.where(pos, logits - margin, logits)
    if epoch is not None and epoch >= change_epoch:
        pos = pos | (neg & (torch.sigmoid(shifted.detach()) > threshold))
    return reduce_valid(focal_bce(shifted, pos, gamma), valid, reduction)


def hill_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    hill_lambda: float = 1.5,
    margin: float = 1.0,
    gamma: float = 2.0,
    reduction: str = 'sum',
) -> torch.Tensor:
    """Hill loss (Zhang et al.): focal margin on positives, a hill-shaped loss on negatives.

    * positives ``ℓ+ = −(1 − σ(z − m))^γ log σ(z − m)``;
    * negatives ``ℓ− = (λ − p) p²``, ``p = σ(z)``: its derivative in ``p``, ``2λp − 3p²``
      (``3p(1 − p)`` at λ = 1.5), vanishes at ``p = 0`` and ``p = 1``, so confident negatives —
      likely missing positives — are barely pushed.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        hill_lambda: ``λ`` (1.5).
        margin: logit margin ``m`` of the positives (1.0).
        gamma: focusing exponent of the positives (2.0).
        reduction: ``'sum'`` (reference), ``'mean'`` over valid entries, or ``'none'``.
    """
    check_choice('reduction', reduction, _REDUCTIONS)
    pos, valid = gt == 1, gt >= 0
    prob = torch.sigmoid(logits)
    negative = (hill_lambda - prob) * prob.square()
    positive = focal_bce(logits - margin, torch.ones_like(pos), gamma)
    return reduce_valid(torch.where(pos, positive, negative), valid, reduction)


class _MarginFocalBase(TaskLoss):
    """Shared arguments of the Zhang et al. losses (the references' defaults).

    ``avg_factor`` (passed by mmpretrain heads) is ignored: the reference reduction is a sum.

    Args:
        margin: logit margin of the (annotated) positives.
        gamma: focusing exponent.
        reduction: ``'sum'`` (default), ``'mean'`` or ``'none'``.
        scale_by_world_size: see :class:`~mlkd.models.losses.base.TaskLoss`.
        loss_weight: factor applied to the loss.
    """

    reductions = _REDUCTIONS
    repr_fields = ('margin', 'gamma')

    def __init__(
        self,
        *,
        margin: float = 1.0,
        gamma: float = 2.0,
        reduction: str = 'sum',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        self.margin = float(margin)
        self.gamma = check_non_negative(gamma, 'gamma', type(self).__name__)


@MODELS.register_module()
class HillLoss(_MarginFocalBase):
    """Hill loss as a task loss; see :func:`hill_loss` (defaults λ 1.5, m 1, γ 2, sum).

    Args:
        hill_lambda: ``λ``.
        **common: ``margin``, ``gamma`` (of the positives here), ``reduction``,
            ``scale_by_world_size``, ``loss_weight`` of :class:`_MarginFocalBase`.
    """

    repr_fields = ('hill_lambda',)

    def __init__(self, hill_lambda: float = 1.5, **common: Any) -> None:
        super().__init__(**common)
        self.hill_lambda = float(hill_lambda)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return hill_loss(logits, gt, self.hill_lambda, self.margin, self.gamma, reduction)


@MODELS.register_module()
class FocalMarginLoss(_MarginFocalBase):
    """Focal margin loss as a task loss; see :func:`focal_margin_loss` (m 1, γ 2, sum).

    Arguments: those of :class:`_MarginFocalBase` (``gamma`` focuses both sides here).
    """

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return focal_margin_loss(logits, gt, self.margin, self.gamma, reduction)


@MODELS.register_module()
class SPLCLoss(_MarginFocalBase):
    """SPLC as a task loss; see :func:`splc_loss` (τ 0.6, change epoch 1, m 1, γ 2, sum).

    The epoch is read at every call from MMEngine's ``MessageHub`` (``'epoch'``, 0-based, set by
    the runner's ``RuntimeInfoHook``); outside a runner there is none and no correction is made
    (the loss is then the focal margin loss).

    Args:
        threshold: ``τ``.
        change_epoch: first 0-based epoch with label correction.
        **common: ``margin``, ``gamma``, ``reduction``, ``scale_by_world_size``, ``loss_weight``
            of :class:`_MarginFocalBase`.
    """

    repr_fields = ('threshold', 'change_epoch')

    def __init__(self, threshold: float = 0.6, change_epoch: int = 1, **common: Any) -> None:
        super().__init__(**common)
        if not 0 < threshold < 1:
            raise ValueError(f'SPLCLoss: threshold must be in (0, 1), got {threshold}')
        self.threshold, self.change_epoch = float(threshold), int(change_epoch)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return splc_loss(
            logits,
            gt,
            current_epoch(),
            self.threshold,
            self.change_epoch,
            self.margin,
            self.gamma,
            reduction,
        )
