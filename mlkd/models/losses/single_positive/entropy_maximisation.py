"""EM: BCE on the positives, maximal entropy on the unobserved labels (Zhou et al., ECCV 2022).

Zhou et al., "Acknowledging the Unknown for Multi-label Learning with Single Positive Labels",
ECCV 2022 (``Correr-Zhou/SPML-AckTheUnknown``, ``loss_EM``). See :mod:`.common` for the label
convention and the reference numerics.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from .common import SinglePositiveTaskLoss, neg_log, observation_masks


def binary_entropy(p: torch.Tensor) -> torch.Tensor:
    """``H(p) = p·nl(p) + (1−p)·nl(1−p)`` with the reference's ``nl``."""
    return p * neg_log(p) + (1 - p) * neg_log(1 - p)


def entropy_maximisation(
    logits: torch.Tensor, gt: torch.Tensor, alpha: float = 0.1, observed_negatives: bool = False
) -> torch.Tensor:
    """EN (Zhou et al.'s "EM" loss): BCE on the positives, maximal entropy on unobserved labels.

    ``M = o⁺·nl(p) + o⁻·nl(1−p) − α·[unobserved]·H(p)``, reduced ``Σ M / (B·C)``. Minimising
    ``−α·H`` pushes unobserved predictions towards 0.5 instead of towards 0 (AN), so an
    unannotated object is not learnt as a negative.
    """
    positive, negative, unobserved = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    matrix = (
        positive * neg_log(p) + negative * neg_log(1 - p) - alpha * unobserved * binary_entropy(p)
    )
    return matrix.sum() / logits.numel()


@MODELS.register_module()
class EntropyMaximisationLoss(SinglePositiveTaskLoss):
    """EN: :func:`entropy_maximisation`; ``alpha`` as the reference (COCO / NUS 0.1, VOC 0.2)."""

    def __init__(
        self, alpha: float = 0.1, observed_negatives: bool = False, loss_weight: float = 1.0
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        if alpha < 0:
            raise ValueError(f'alpha must be >= 0, got {alpha}')
        self.alpha = float(alpha)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return entropy_maximisation(logits, gt, self.alpha, self.observed_negatives)
