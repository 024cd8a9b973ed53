"""A user's task loss (the TaskLoss example of docs/architecture.md §3).

Poly-1 binary cross-entropy (Leng et al., "PolyLoss: A Polynomial Expansion Perspective of
Classification Loss Functions", ICLR 2022), one-vs-all for multi-label targets: each entry's BCE
plus ``ε · (1 − p_t)``, where ``p_t`` is the probability given to the entry's true value.
"""

import torch
import torch.nn.functional as F
from torch import Tensor

from mlkd.models.losses import TaskLoss
from mlkd.models.losses.utils import reduce_valid
from mlkd.registry import MODELS


def poly1_bce(logits: Tensor, gt: Tensor, epsilon: float = 1.0, reduction: str = 'sum') -> Tensor:
    """``Σ_{valid} BCE(z, y) + ε (1 − p_t)``, ``p_t = y σ(z) + (1 − y)(1 − σ(z))``.

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets 1 / 0, -1 ignored (counted nowhere).
        epsilon: weight of the first polynomial term (ε = 0: plain BCE).
        reduction: ``'sum'`` over valid entries, ``'mean'`` over them, or ``'none'``.
    """
    valid, target = gt >= 0, gt.clamp(min=0)
    prob = torch.sigmoid(logits)
    p_true = target * prob + (1 - target) * (1 - prob)
    elementwise = F.binary_cross_entropy_with_logits(logits, target, reduction='none')
    return reduce_valid(elementwise + epsilon * (1 - p_true), valid, reduction)


@MODELS.register_module()
class PolyBCELoss(TaskLoss):
    """Poly-1 BCE as a task loss (:func:`poly1_bce`); a head or the router calls it.

    Args:
        epsilon: ε of the Poly-1 term.
        reduction: ``'sum'`` (default, as mlkd's BCE), ``'mean'`` or ``'none'``.
        loss_weight: factor applied by the contract.
    """

    reductions = ('sum', 'mean', 'none')

    def __init__(
        self, epsilon: float = 1.0, reduction: str = 'sum', loss_weight: float = 1.0
    ) -> None:
        super().__init__(reduction, loss_weight=loss_weight)
        self.epsilon = float(epsilon)

    def compute(self, logits: Tensor, gt: Tensor, reduction: str) -> Tensor:
        return poly1_bce(logits, gt, self.epsilon, reduction)
