"""MSE logit / probability matching — the "MSE" baseline of 3D's tables.

Paper: Li & Cheng, "Positive Divide and Negative Discrepancy" (3D), supplement Tables B.1–B.3,
which list an "MSE" baseline without defining it (``docs/methods.md`` §4.4.5, open points).

* ``space='prob'`` (default, mlkd's reading: the 3D paper works with per-label probabilities):
  ``reduce((σ(z^s) − σ(z^t))²)``;
* ``space='logit'``: ``reduce((z^s − z^t)²)`` (FitNet-style logit regression).

The default reduction ``'mean'`` averages over all ``B·C`` entries (``F.mse_loss``'s default).
Targets are not used.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import REDUCTIONS, check_choice, reduce_loss

SPACES = ('prob', 'logit')


def mse_distill(
    s_logits: torch.Tensor, t_logits: torch.Tensor, space: str = 'prob', reduction: str = 'mean'
) -> torch.Tensor:
    """Squared error between student and teacher in probability (sigmoid) or logit space.

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        space: ``'prob'`` (``σ(z)``) or ``'logit'`` (``z``).
        reduction: ``'mean'`` (Σ / (B·C)), ``'batchmean'`` (Σ / B), ``'sum'`` or ``'none'``.
    """
    check_choice('space', space, SPACES)
    t_logits = t_logits.detach()
    if space == 'prob':
        diff = torch.sigmoid(s_logits) - torch.sigmoid(t_logits)
    else:
        diff = s_logits - t_logits
    return reduce_loss(diff * diff, reduction)


@MODELS.register_module()
class MSEDistillLoss(RoutedLoss):
    """MSE between student and teacher outputs (:func:`mse_distill`).

    Args:
        space: ``'prob'`` (default) or ``'logit'``.
        reduction: ``'mean'`` (default, Σ / (B·C)), ``'batchmean'``, ``'sum'``, ``'none'``.
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('space', 'reduction')

    def __init__(
        self, space: str = 'prob', reduction: str = 'mean', loss_weight: float = 1.0
    ) -> None:
        super().__init__(loss_weight)
        self.space = check_choice('space', space, SPACES)
        self.reduction = check_choice('reduction', reduction, REDUCTIONS)

    def compute(self, s_logits: torch.Tensor, t_logits: torch.Tensor) -> torch.Tensor:
        return mse_distill(s_logits, t_logits, self.space, self.reduction)
