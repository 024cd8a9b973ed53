"""EPR: BCE on the observed labels plus the expected-positives regulariser.

Source: E. Cole et al., "Multi-Label Learning from Single Positive Labels", CVPR 2021.

See :mod:`.common` for the label convention and the reference numerics.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from .common import (
    SinglePositiveTaskLoss,
    check_expected_positives,
    expected_positives_regulariser,
    neg_log,
    observation_masks,
)


def expected_positives_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    expected_positives: float,
    observed_negatives: bool = False,
) -> torch.Tensor:
    """EPR: BCE on the observed labels only, plus the expected-positives regulariser.

    ``Σ_{observed} M / (B·C) + (mean_i Σ_c p_ic − k)² / C²``, ``M`` = ``nl(p)`` on positives and
    ``nl(1−p)`` on observed negatives. Depends on the whole batch through the mean.
    """
    positive, negative, _ = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    matrix = positive * neg_log(p) + negative * neg_log(1 - p)
    return matrix.sum() / logits.numel() + expected_positives_regulariser(p, expected_positives)


@MODELS.register_module()
class ExpectedPositivesLoss(SinglePositiveTaskLoss):
    """EPR: :func:`expected_positives_loss`. ``expected_positives`` is the dataset's k (COCO 2.9).

    The regulariser is a batch statistic: under DDP the router gathers the global batch.
    """

    compares_samples = True

    def __init__(
        self, expected_positives: float, observed_negatives: bool = False, loss_weight: float = 1.0
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        self.expected_positives = check_expected_positives(expected_positives)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return expected_positives_loss(logits, gt, self.expected_positives, self.observed_negatives)
