"""AN, AN-LS and WAN: unobserved labels taken as (weighted, smoothed) negatives.

Source: E. Cole et al., "Multi-Label Learning from Single Positive Labels", CVPR 2021.

See :mod:`.common` for the label convention and the reference numerics.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from .common import SinglePositiveTaskLoss, neg_log, observation_masks


def assume_negative(
    logits: torch.Tensor,
    gt: torch.Tensor,
    label_smoothing: float = 0.0,
    unobserved_weight: float = 1.0,
    observed_negatives: bool = False,
) -> torch.Tensor:
    """AN, AN-LS and WAN: binary cross-entropy that takes unobserved labels as negatives.

    Per entry (``ε`` = ``label_smoothing``, ``γ`` = ``unobserved_weight``):
    positive ``(1−ε)·nl(p) + ε·nl(1−p)``; negative (observed) and unobserved
    ``(1−ε)·nl(1−p) + ε·nl(p)``, the unobserved ones times ``γ``. AN: ``ε = 0, γ = 1``; AN-LS:
    ``ε = 0.1``; WAN: ``γ = 1/(C−1)``.

    Args:
        logits: ``[B, C]``.
        gt: ``[B, C]`` targets 1 / 0 / -1.
        label_smoothing: ``ε ∈ [0, 0.5)``.
        unobserved_weight: ``γ ≥ 0``.
        observed_negatives: whether 0 is an annotated negative (module docstring).

    Returns:
        Scalar: ``Σ M / (B·C)``.
    """
    positive, negative, unobserved = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    eps = float(label_smoothing)
    as_positive = (1 - eps) * neg_log(p) + eps * neg_log(1 - p)
    as_negative = (1 - eps) * neg_log(1 - p) + eps * neg_log(p)
    matrix = positive * as_positive + (negative + unobserved_weight * unobserved) * as_negative
    return matrix.sum() / logits.numel()


@MODELS.register_module()
class AssumeNegativeLoss(SinglePositiveTaskLoss):
    """AN (``label_smoothing=0``), AN-LS (``label_smoothing=0.1``): :func:`assume_negative`."""

    def __init__(
        self,
        label_smoothing: float = 0.0,
        observed_negatives: bool = False,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        if not 0.0 <= label_smoothing < 0.5:
            raise ValueError(f'label_smoothing must be in [0, 0.5), got {label_smoothing}')
        self.label_smoothing = float(label_smoothing)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return assume_negative(logits, gt, self.label_smoothing, 1.0, self.observed_negatives)


@MODELS.register_module()
class WeakAssumeNegativeLoss(SinglePositiveTaskLoss):
    """WAN: AN with the unobserved labels weighted ``γ = 1/(C−1)`` (``num_classes`` injected)."""

    def __init__(
        self, num_classes: int, observed_negatives: bool = False, loss_weight: float = 1.0
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        if num_classes < 2:
            raise ValueError(f'WeakAssumeNegativeLoss needs num_classes >= 2, got {num_classes}')
        self.unobserved_weight = 1.0 / (num_classes - 1)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return assume_negative(logits, gt, 0.0, self.unobserved_weight, self.observed_negatives)
