"""The two multi-label "Focal" losses, kept apart (``docs/methods.md`` §2.2).

* :class:`SigmoidFocalLoss` — the RetinaNet form with the class-balance factor α (Lin et al.,
  "Focal Loss for Dense Object Detection", ICCV 2017; torchvision ``ops.sigmoid_focal_loss``,
  mmpretrain's ``FocalLoss``);
* :class:`AsymmetricFocalLoss` — the form the multi-label papers call "Focal" (the ASL and
  robust-loss code bases: ASL with ``γ+ = γ− = 2``, no clip, no α, detached weights, sum).

They differ in α, in the reduction and in whether the focal weight carries gradient, so a
paper's "Focal" baseline must be matched to the right one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_choice, check_non_negative, reduce_valid
from .asymmetric import AsymmetricMultiLabelLoss, focal_weight


def focal_bce(logits: torch.Tensor, pos: torch.Tensor, gamma: float) -> torch.Tensor:
    """Elementwise focal binary cross-entropy ``−(1 − p_t)^γ · log p_t`` on logits ``z``.

    ``p_t = σ(z)`` where ``pos`` is True and ``1 − σ(z) = σ(−z)`` elsewhere, so both the weight
    ``σ(∓z)^γ`` (:func:`~.asymmetric.focal_weight`, gradient carried) and the log
    ``logsigmoid(±z)`` stay finite for saturated logits and any ``γ ≥ 0``.

    Args:
        logits: ``[B, C]`` logits (already margin-shifted where a loss shifts them).
        pos: bool ``[B, C]``, True where the entry is treated as a positive.
        gamma: focusing exponent.

    Returns:
        ``[B, C]`` elementwise loss, no reduction, no masking.
    """
    signed = torch.where(pos, logits, -logits)  # z for positives, −z for negatives
    return -focal_weight(F.logsigmoid(-signed), gamma) * F.logsigmoid(signed)


def sigmoid_focal_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    alpha: float = 0.25,
    gamma: float = 2.0,
    reduction: str = 'mean',
) -> torch.Tensor:
    """RetinaNet focal loss (Lin et al., ICCV 2017) on logits, skipping ignored targets.

    ``FL = α_t (1 − p_t)^γ · BCE(z, y)`` with ``p = σ(z)``, ``p_t = p`` for positives and
    ``1 − p`` for negatives, ``α_t = α`` for positives and ``1 − α`` for negatives (``α < 0``:
    no α). The focal factor carries gradient (as in torchvision). ``1 − p_t`` is formed as
    ``σ(∓z)`` through ``logsigmoid``, so the gradient is finite for saturated logits and any
    ``γ ≥ 0``.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        alpha: weight of the positives (0.25); negatives get ``1 − α``; ``< 0`` disables it.
        gamma: focusing exponent (2).
        reduction: ``'mean'`` over valid entries (default, torchvision's ``'mean'``), ``'sum'``,
            ``'batchmean'`` (sum / B: mmpretrain's ``FocalLoss`` called from a head) or ``'none'``.

    Returns:
        Scalar (or ``[B, C]``) loss, connected to ``logits``.
    """
    check_choice('reduction', reduction, TaskLoss.reductions)
    pos, valid = gt == 1, gt >= 0
    elem = focal_bce(logits, pos, gamma)
    if alpha >= 0:
        elem = elem * torch.where(pos, alpha, 1.0 - alpha)
    return reduce_valid(elem, valid, reduction)


@MODELS.register_module()
class SigmoidFocalLoss(TaskLoss):
    """RetinaNet focal loss with α as a task loss; see :func:`sigmoid_focal_loss`.

    ``avg_factor`` (passed by mmpretrain heads) is ignored; ``reduction='batchmean'`` reproduces
    mmpretrain's ``FocalLoss`` in a head (sum / B), the default ``'mean'`` torchvision's.

    Args:
        alpha: class-balance weight of the positives (0.25); ``< 0`` disables it.
        gamma: focusing exponent (2).
        reduction: ``'mean'`` (default), ``'sum'``, ``'batchmean'`` or ``'none'``.
        scale_by_world_size: see :class:`~mlkd.models.losses.base.TaskLoss`.
        loss_weight: factor applied to the loss.
    """

    reductions = ('mean', 'sum', 'batchmean', 'none')
    repr_fields = ('alpha', 'gamma')

    def __init__(
        self,
        alpha: float = 0.25,
        gamma: float = 2.0,
        reduction: str = 'mean',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        if alpha > 1:
            raise ValueError(
                f'SigmoidFocalLoss: alpha must be <= 1 (or < 0 to disable), got {alpha}'
            )
        self.alpha = float(alpha)
        self.gamma = check_non_negative(gamma, 'gamma', 'SigmoidFocalLoss')

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return sigmoid_focal_loss(logits, gt, self.alpha, self.gamma, reduction)


@MODELS.register_module()
class AsymmetricFocalLoss(AsymmetricMultiLabelLoss):
    """The multi-label papers' "Focal": ASL with ``γ+ = γ− = 2``, no clip, no α.

    ``L = −Σ [y (1−p)^γ log p + (1−y) p^γ log(1−p)]`` with detached weights and a sum — the
    ASL code's ``AsymmetricLoss(gamma_neg=2, gamma_pos=2, clip=0)`` as the robust-loss
    (Hill / SPLC) code's ``--loss Focal`` baseline builds it. See
    :func:`~mlkd.models.losses.asymmetric.asymmetric_loss`; every ASL argument can still be set.
    ``avg_factor`` is ignored (reference: plain sum).

    Args:
        gamma: the focusing exponent of both sides (sets ``gamma_pos`` and ``gamma_neg``).
        **kwargs: the other :class:`AsymmetricMultiLabelLoss` arguments (``clip`` defaults to 0).
    """

    def __init__(self, gamma: float = 2.0, **kwargs) -> None:
        kwargs.setdefault('clip', 0.0)
        super().__init__(gamma_pos=gamma, gamma_neg=gamma, **kwargs)
