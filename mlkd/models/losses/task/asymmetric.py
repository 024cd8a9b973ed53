"""Asymmetric loss (ASL) for multi-label classification.

Paper / code: Ridnik et al., "Asymmetric Loss For Multi-Label Classification", ICCV 2021
(``Alibaba-MIIL/ASL``, ``src/loss_functions/losses.py``); ``docs/methods.md`` §2.2.

With ``p = σ(z)``, the probability margin ``m`` (``clip``) shifts the negatives,
``p_m = max(p − m, 0)``, and two focusing exponents weight the two sides:

* positives ``L+ = −(1 − p)^{γ+} · log max(p, ε)``;
* negatives ``L− = −p_m^{γ−} · log max(1 − p_m, ε)``;
* ``L = Σ_{valid b,c} [y·L+ + (1 − y)·L−]`` (reference: a plain sum over the ``B·C`` entries).

Negatives with ``p ≤ m`` have zero loss and zero gradient ("hard thresholding" of easy
negatives). The paper's setting is ``γ+ = 0, γ− = 4, m = 0.05`` (the official ``train.py``; the
official class defaults to ``γ+ = 1``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_choice, check_non_negative, reduce_valid


def focal_weight(log_base: torch.Tensor, gamma: float) -> torch.Tensor:
    """``base^γ`` given ``log base``, i.e. ``exp(γ · log base)``.

    Through the logarithm the gradient ``γ · base^γ · ∂ log base`` is finite where ``base``
    rounds to 0 (a saturated sigmoid): ``torch.pow(base, γ)`` would back-propagate
    ``γ · 0^{γ−1} = inf`` there for ``γ < 1``. ``γ = 0`` gives exactly 1 (also for ``base = 0``,
    as ``0^0 = 1`` in the reference code).
    """
    if gamma == 0:
        return torch.ones_like(log_base)
    return torch.exp(gamma * log_base)


def _clipped_focal_weight(base: torch.Tensor, gamma: float) -> torch.Tensor:
    """``base^γ`` for ``base ≥ 0`` that is exactly 0 on a region (ASL's clipped negatives).

    ``0^γ`` is 0 (``γ > 0``) or 1 (``γ = 0``) there, with zero gradient; the power is only
    evaluated where ``base > 0``, so no ``inf · 0`` reaches the gradient.
    """
    if gamma == 0:
        return torch.ones_like(base)
    positive = base > 0
    safe = torch.where(positive, base, torch.ones_like(base))
    return torch.where(positive, safe.pow(gamma), torch.zeros_like(base))


def asymmetric_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    gamma_pos: float = 0.0,
    gamma_neg: float = 4.0,
    clip: float = 0.05,
    clamp_eps: float | None = 1e-8,
    detach_focal_weight: bool = True,
    reduction: str = 'sum',
) -> torch.Tensor:
    """ASL (Ridnik et al., ICCV 2021) on logits, skipping ignored (``-1``) targets.

    ``−Σ [y (1−p)^{γ+} log max(p, ε) + (1−y) p_m^{γ−} log max(1−p_m, ε)]``,
    ``p = σ(z)``, ``p_m = max(p − m, 0)``.

    Evaluated stably: ``log p = logsigmoid(z)`` and, without clip, ``log(1 − p) =
    logsigmoid(−z)`` (the reference computes ``1 − p`` by subtraction, which is 0 in fp32 for
    ``z > 16.6``: there its value is capped at ``−log ε`` where this is exact); the clamp at ``ε``
    is applied to the logarithm, ``max(log p, log ε)``, which is the same value and the same zero
    gradient as ``log max(p, ε)`` but never evaluates ``log 0``. The focal weights are formed so
    that their gradient is finite where ``p`` saturates (:func:`focal_weight`): the reference's
    ``torch.pow(1 − p_t, γ)`` gives NaN gradients there for fractional ``γ`` when the weights are
    not detached, and its ``ε = 1e-8`` rounds to 0 in float16, making the loss ``inf`` / NaN on
    half-precision logits (mlkd's module casts to fp32 first).

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        gamma_pos: focusing exponent ``γ+`` of the positives (paper: 0).
        gamma_neg: focusing exponent ``γ−`` of the negatives (paper: 4).
        clip: probability margin ``m`` of the negatives (paper: 0.05); 0 disables the shift.
        clamp_eps: the reference's ``ε`` clamp of the probabilities inside the logs
            (``1e-8``); ``None`` for the exact ``logsigmoid`` everywhere.
        detach_focal_weight: stop the gradient through the focal weights — the reference's
            ``disable_torch_grad_focal_loss`` (True in ``AsymmetricLoss`` and the paper's
            ``train.py``; False in ``AsymmetricLossOptimized`` and mmpretrain).
        reduction: ``'sum'`` (reference), ``'mean'`` over valid entries, ``'batchmean'``
            (sum / B, mmpretrain's head convention) or ``'none'`` (``[B, C]``).

    Returns:
        Scalar (or ``[B, C]``) loss, connected to ``logits``.
    """
    check_choice('reduction', reduction, TaskLoss.reductions)
    pos, valid = gt == 1, gt >= 0
    log_prob = F.logsigmoid(logits)
    log_not_prob = F.logsigmoid(-logits)
    if clip > 0:
        shifted = (torch.sigmoid(logits) - clip).clamp(min=0)  # p_m
        log_not_shifted = torch.log1p(-shifted)  # 1 − p_m ≥ m > 0
        weight_neg = _clipped_focal_weight(shifted, gamma_neg)
    else:
        log_not_shifted = log_not_prob
        weight_neg = focal_weight(log_prob, gamma_neg)
    weight_pos = focal_weight(log_not_prob, gamma_pos)
    if clamp_eps is not None:
        log_eps = math.log(clamp_eps)
        log_prob = log_prob.clamp(min=log_eps)
        log_not_shifted = log_not_shifted.clamp(min=log_eps)
    if detach_focal_weight:
        weight_pos, weight_neg = weight_pos.detach(), weight_neg.detach()
    elem = -torch.where(pos, weight_pos * log_prob, weight_neg * log_not_shifted)
    return reduce_valid(elem, valid, reduction)


@MODELS.register_module()
class AsymmetricMultiLabelLoss(TaskLoss):
    """ASL as a task loss; see :func:`asymmetric_loss` (formula, stability, paper).

    Defaults are the paper's setting (``γ+ = 0, γ− = 4, m = 0.05, ε = 1e-8``, focal weights
    detached, sum). Named apart from mmpretrain's ``AsymmetricLoss`` (which does not detach and
    divides by ``avg_factor``) so that a config's ``type`` means one thing in every scope.

    ``avg_factor`` (passed by mmpretrain heads) is ignored: the reference reduction is a plain
    sum, and the paper's learning rate is tuned on that scale (``reduction='batchmean'`` gives
    mmpretrain's sum / B).

    Args:
        gamma_pos: ``γ+``.
        gamma_neg: ``γ−``.
        clip: probability margin ``m`` of the negatives.
        clamp_eps: reference ``ε`` clamp, or None for the exact logs.
        detach_focal_weight: the reference's ``disable_torch_grad_focal_loss``.
        reduction: ``'sum'`` (default), ``'mean'``, ``'batchmean'`` or ``'none'``.
        scale_by_world_size: see :class:`~mlkd.models.losses.base.TaskLoss`.
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('gamma_pos', 'gamma_neg', 'clip', 'clamp_eps', 'detach_focal_weight')

    def __init__(
        self,
        gamma_pos: float = 0.0,
        gamma_neg: float = 4.0,
        clip: float = 0.05,
        clamp_eps: float | None = 1e-8,
        detach_focal_weight: bool = True,
        reduction: str = 'sum',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        owner = type(self).__name__
        self.gamma_pos = check_non_negative(gamma_pos, 'gamma_pos', owner)
        self.gamma_neg = check_non_negative(gamma_neg, 'gamma_neg', owner)
        self.clip = check_non_negative(clip, 'clip', owner)
        if not clip < 1:
            raise ValueError(f'{owner}: clip must be in [0, 1), got {clip}')
        self.clamp_eps = None if clamp_eps is None else float(clamp_eps)
        self.detach_focal_weight = bool(detach_focal_weight)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return asymmetric_loss(
            logits,
            gt,
            self.gamma_pos,
            self.gamma_neg,
            self.clip,
            self.clamp_eps,
            self.detach_focal_weight,
            reduction,
        )
