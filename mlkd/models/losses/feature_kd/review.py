"""ReviewKD's hierarchical context loss (HCL).

Paper: Chen, Liu, Zhao and Jia, "Distilling Knowledge via Knowledge Review", CVPR 2021; loss,
weights and warm-up as mdistiller (``docs/methods.md`` §5.6.8).

The student's stage features, fused deep-to-shallow by the attention-based fusion modules (a
connector, :class:`~mlkd.models.connectors.ABFConnector`), are compared with the teacher's stage
features level by level. For one level with maps of side ``h``:

``HCL(F^s, F^t) = [MSE(F^s, F^t) + Σ_{l ∈ (4, 2, 1), l < h} 2^{−j(l)} MSE(pool_l F^s, pool_l F^t)]
/ (1 + Σ 2^{−j(l)})``

where ``pool_l`` is adaptive average pooling to ``l × l`` and ``j(l) = 1, 2, 3 …`` counts the
pooled levels actually used (sizes ``≥ h`` are skipped, so a 1×1 map is just its MSE). The loss
sums HCL over the levels and is scaled by ``min(epoch / warm-up, 1)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_stage_counts, stage_list, warmup_factor


def hierarchical_context_loss(
    s_feats: torch.Tensor | Sequence[torch.Tensor],
    t_feats: torch.Tensor | Sequence[torch.Tensor],
    pool_sizes: Sequence[int] = (4, 2, 1),
) -> torch.Tensor:
    """Σ over levels of HCL (module docstring).

    Args:
        s_feats: fused student feature(s), ``[B, C, H, W]`` each.
        t_feats: teacher feature(s) of the same shapes (detached here).
        pool_sizes: pyramid sizes, in the order their weights halve.
    """
    s_list, t_list = stage_list(s_feats), stage_list(t_feats)
    check_stage_counts(s_list, t_list, 'hierarchical_context_loss')
    total = s_list[0].new_zeros(())
    for s, t in zip(s_list, t_list):
        t = t.detach()
        if s.shape != t.shape:
            raise ValueError(
                f'hierarchical_context_loss: fused student {tuple(s.shape)} vs '
                f"teacher {tuple(t.shape)}; set the ABF connector's out_channels "
                f'(and out_shapes) from the teacher'
            )
        loss, weight, weights = F.mse_loss(s, t), 1.0, 1.0
        for size in pool_sizes:
            if size >= s.shape[2]:
                continue
            weight /= 2.0
            loss = loss + weight * F.mse_loss(
                F.adaptive_avg_pool2d(s, size), F.adaptive_avg_pool2d(t, size)
            )
            weights += weight
        total = total + loss / weights
    return total


@MODELS.register_module()
class ReviewKDLoss(RoutedLoss):
    """ReviewKD (:func:`hierarchical_context_loss`) with mdistiller's warm-up.

    Inputs are lists over levels, shallow to deep, usually the stages followed by the pooled
    feature as a ``[B, C, 1, 1]`` map (the ABF connector's output for the student). mdistiller
    defaults: weight 1.0 (res32x4 students 5.0), warm-up 20 epochs, CE 1; ImageNet weight 1,
    warm-up 1. The warm-up factor is ``min((epoch + 1) / warmup_epochs, 1)`` with the 0-based
    MMEngine epoch (:func:`~mlkd.models.losses.utils.warmup_factor`).

    Args:
        pool_sizes: pyramid sizes (default ``(4, 2, 1)``).
        warmup_epochs: length of the linear ramp (0: none).
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('pool_sizes', 'warmup_epochs')

    def __init__(
        self,
        pool_sizes: Sequence[int] = (4, 2, 1),
        warmup_epochs: int = 20,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.pool_sizes = tuple(int(p) for p in pool_sizes)
        self.warmup_epochs = int(warmup_epochs)

    def compute(
        self, s_feats: Sequence[torch.Tensor], t_feats: Sequence[torch.Tensor]
    ) -> torch.Tensor:
        """Args:
        s_feats: fused student features, shallow to deep.
        t_feats: teacher features of the same shapes.
        """
        return hierarchical_context_loss(stage_list(s_feats), stage_list(t_feats), self.pool_sizes)

    def weight_factor(self) -> float:
        return warmup_factor(self.warmup_epochs)
