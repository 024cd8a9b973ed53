"""A user's distillation loss, outside the mlkd package (tutorial: docs/tutorials/new_method.md).

Logit-standardised distillation (after Sun et al., "Logit Standardization in Knowledge
Distillation", CVPR 2024), adapted to multi-label logits: each sample's logits are z-scored over
classes for both nets, then compared with a mean squared error, so the student matches the
teacher's ranking and relative gaps rather than its logit scale.
"""

from torch import Tensor

from mlkd.models.losses import RoutedLoss
from mlkd.registry import MODELS


def standardized_logit_mse(s_logits: Tensor, t_logits: Tensor, eps: float = 1e-6) -> Tensor:
    """``mean_{b,c} (z̃ˢ_bc − z̃ᵗ_bc)²`` with ``z̃ = (z − mean_c z) / (std_c z + eps)``.

    Args:
        s_logits, t_logits: ``[B, C]`` logits.
    Returns:
        Scalar loss.
    """

    def standardize(z: Tensor) -> Tensor:
        return (z - z.mean(dim=1, keepdim=True)) / (z.std(dim=1, keepdim=True) + eps)

    return (standardize(s_logits) - standardize(t_logits.detach())).pow(2).mean()


@MODELS.register_module()
class StandardizedLogitLoss(RoutedLoss):
    """Registered module: the distiller supplies ``s_logits`` and ``t_logits`` by name; the
    contract casts them to fp32 and applies ``loss_weight``."""

    def compute(self, s_logits: Tensor, t_logits: Tensor) -> Tensor:
        return standardized_logit_mse(s_logits, t_logits)
