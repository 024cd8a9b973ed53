"""A user's stateful loss (the StatefulLoss example of docs/architecture.md §3).

Progressive self-knowledge distillation (Kim et al., "Self-Knowledge Distillation with Progressive
Refinement of Targets", ICCV 2021), one-vs-all for multi-label targets: each image is trained
towards ``(1 − α) y + α p_prev``, where ``p_prev`` is the network's own prediction for that image
at its previous visit (kept per sample). The paper ramps α over the epochs; this example keeps α
fixed.
"""

import torch
import torch.nn.functional as F
from torch import Tensor

from mlkd.models.losses import StatefulLoss, TaskLoss
from mlkd.models.losses.utils import reduce_valid
from mlkd.registry import MODELS


def progressive_target_bce(
    logits: Tensor,
    gt: Tensor,
    previous: Tensor,
    seen: Tensor,
    alpha: float,
    reduction: str = 'mean',
) -> Tensor:
    """BCE of ``logits`` against ``(1 − α) y + α p_prev`` (``y`` alone where not ``seen``).

    Args:
        logits, gt: ``[B, C]``; gt 1 / 0, -1 ignored.
        previous: ``[B, C]`` probabilities of the previous visit; seen: ``[B]`` bool.
        alpha: weight of the previous prediction.
    """
    valid, target = gt >= 0, gt.clamp(min=0)
    soft = torch.where(seen[:, None], (1 - alpha) * target + alpha * previous, target)
    elementwise = F.binary_cross_entropy_with_logits(logits, soft, reduction='none')
    return reduce_valid(elementwise, valid, reduction)


@MODELS.register_module()
class ProgressiveTargetLoss(TaskLoss, StatefulLoss):
    """PS-KD-style targets from each image's previous prediction (:func:`progressive_target_bce`).

    State (checkpointed, resumed, equal on every DDP rank): ``previous [N, C]``, ``seen [N]``.

    Args:
        num_samples: training set size N (the state's rows).
        num_classes: C (injected by the router).
        alpha: weight of the previous prediction.
    """

    reductions = ('mean', 'sum', 'none')

    def __init__(
        self, num_samples: int, num_classes: int, alpha: float = 0.5, loss_weight: float = 1.0
    ) -> None:
        super().__init__(loss_weight=loss_weight)
        self.num_samples, self.alpha = int(num_samples), float(alpha)
        self.register_state('previous', torch.zeros(num_samples, num_classes), 'sample')
        self.register_state('seen', torch.zeros(num_samples, dtype=torch.bool), 'sample')

    def compute(self, logits: Tensor, gt: Tensor, reduction: str, sample_idx: Tensor) -> Tensor:
        self.check_sample_idx(sample_idx, self.num_samples)
        loss = progressive_target_bce(
            logits, gt, self.previous[sample_idx], self.seen[sample_idx], self.alpha, reduction
        )
        with torch.no_grad():
            self.previous[sample_idx] = torch.sigmoid(logits)
            self.seen[sample_idx] = True
        return loss
