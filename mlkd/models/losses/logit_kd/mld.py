"""MLD — multi-label (one-vs-all) logit distillation.

Paper / code: Yang et al., "Multi-Label Knowledge Distillation", ICCV 2023 (L2D,
``criterion/distiller_zoo/logits_based/mld.py``); ``docs/methods.md`` §4.1.1.

``L_MLD = (1/B) Σ_{b,c} KLb(σ(z^t_bc) ‖ σ(z^s_bc))`` — every class is a binary problem whose
teacher probability is distilled into the student's. No temperature; the targets are not used.

Numerics: the reference clamps ``σ(z)`` to ``[ε, 1−ε]`` (ε = 1e-8), but ``1 − 1e-8`` rounds to 1
in fp32, so the loss is ``inf`` once ``σ(z^s)`` rounds to 1 (``z^s ≳ 16.6``) and NaN when the
teacher is saturated too. mlkd evaluates every log with ``logsigmoid``
(:func:`~mlkd.models.losses.utils.binary_kl_with_logits`): identical elsewhere, finite at ±50.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import REDUCTIONS, binary_kl_with_logits, check_choice, reduce_loss
from ..weight_reference import ReferenceWeighted


def multi_label_logit_distill(
    s_logits: torch.Tensor, t_logits: torch.Tensor, reduction: str = 'batchmean'
) -> torch.Tensor:
    """Per-class binary KL ``KLb(σ(t_logits) ‖ σ(s_logits))``, reduced.

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        reduction: ``'batchmean'`` (reference: Σ / B), ``'sum'``, ``'mean'`` (Σ / (B·C)) or
            ``'none'`` (``[B, C]``).

    Returns:
        The reduced loss; exactly 0 when ``s_logits == t_logits``.
    """
    check_choice('reduction', reduction, REDUCTIONS)
    return reduce_loss(binary_kl_with_logits(t_logits.detach(), s_logits), reduction)


@MODELS.register_module()
class MultiLabelLogitDistillLoss(ReferenceWeighted, RoutedLoss):
    """L2D's MLD loss (:func:`multi_label_logit_distill`); L2D's total uses weight 10.

    Args:
        reduction: ``'batchmean'`` (default, reference: Σ / B), ``'sum'``, ``'mean'``
            (Σ / (B·C)) or ``'none'``.
        loss_weight: factor applied to the loss.
        weight_reference: the setting ``loss_weight`` was given for
            (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`; default None: the
            weight is applied literally).
    """

    scale_exponents = (0.0, 1.0)  # Σ over classes / B
    repr_fields = ('reduction',)

    def __init__(
        self,
        reduction: str = 'batchmean',
        loss_weight: float = 1.0,
        weight_reference: dict | None = None,
    ) -> None:
        super().__init__(loss_weight, weight_reference)
        self.reduction = check_choice('reduction', reduction, REDUCTIONS)

    def compute(self, s_logits: torch.Tensor, t_logits: torch.Tensor) -> torch.Tensor:
        return multi_label_logit_distill(s_logits, t_logits, self.reduction)
