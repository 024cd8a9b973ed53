"""Vanilla knowledge distillation with a temperature: softmax (single-label), sigmoid (multi-label).

Paper: Hinton, Vinyals and Dean, "Distilling the Knowledge in a Neural Network", 2015; reference
defaults from mdistiller (``docs/methods.md`` §5.1).

* :func:`softmax_kd`: ``KD_T = T² · (1/B) Σ_i KL(softmax(z^t_i/T) ‖ softmax(z^s_i/T))``.
* :func:`multi_label_kd`: the one-vs-all version,
  ``T² · (1/B) Σ_{i,c} KLb(σ(z^t_ic/T) ‖ σ(z^s_ic/T))``. At ``T = 1`` without the ``T²`` factor it
  is exactly MLD (§4.1.1), and it is computed by MLD's function on tempered logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import REDUCTIONS, check_choice, check_temperature, reduce_loss
from .mld import multi_label_logit_distill


def multi_label_kd(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    temperature: float = 4.0,
    reduction: str = 'batchmean',
    temperature_squared: bool = True,
) -> torch.Tensor:
    """Per-class sigmoid KD: ``T² · reduce(KLb(σ(z^t/T) ‖ σ(z^s/T)))``.

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        temperature: ``T > 0``.
        reduction: see :func:`~mlkd.models.losses.mld.multi_label_logit_distill`.
        temperature_squared: multiply by ``T²`` (keeps gradient magnitudes comparable across temperatures).
    """
    loss = multi_label_logit_distill(
        s_logits / temperature, t_logits.detach() / temperature, reduction
    )
    return loss * (temperature**2) if temperature_squared else loss


def softmax_kd(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    temperature: float = 4.0,
    reduction: str = 'batchmean',
) -> torch.Tensor:
    """Hinton KD over a softmax: ``T² · reduce(q^t (log q^t − log q^s))``, ``q = softmax(z/T)``.

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        temperature: ``T > 0``.
        reduction: ``'batchmean'`` (reference: ``mean_i KL_i``), ``'sum'``, ``'mean'`` (Σ / (B·C)),
            ``'none'`` (``[B, C]`` elementwise KL terms).
    """
    log_q_s = F.log_softmax(s_logits / temperature, dim=-1)
    log_q_t = F.log_softmax(t_logits.detach() / temperature, dim=-1)
    elem = log_q_t.exp() * (log_q_t - log_q_s)
    return reduce_loss(elem, reduction) * (temperature**2)


@MODELS.register_module()
class MultiLabelKDLoss(RoutedLoss):
    """Sigmoid (one-vs-all) KD with temperature (:func:`multi_label_kd`).

    No reference implementation defines a multi-label "vanilla KD"; the default ``T = 4`` follows
    mdistiller's KD default and 3D's τ. ``temperature=1, temperature_squared=False`` is MLD.

    Args:
        temperature: ``T``, default 4.0.
        reduction: ``'batchmean'`` (default: Σ / B), ``'sum'``, ``'mean'`` (Σ / (B·C)), ``'none'``.
        temperature_squared: multiply by ``T²`` (default True).
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('temperature', 'reduction', 'temperature_squared')

    def __init__(
        self,
        temperature: float = 4.0,
        reduction: str = 'batchmean',
        temperature_squared: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.temperature = check_temperature(temperature)
        self.reduction = check_choice('reduction', reduction, REDUCTIONS)
        self.temperature_squared = bool(temperature_squared)

    def compute(self, s_logits: torch.Tensor, t_logits: torch.Tensor) -> torch.Tensor:
        return multi_label_kd(
            s_logits, t_logits, self.temperature, self.reduction, self.temperature_squared
        )


@MODELS.register_module()
class SoftmaxKDLoss(RoutedLoss):
    """Hinton's single-label KD (:func:`softmax_kd`); mdistiller defaults T = 4, weight 0.9 (CIFAR).

    Args:
        temperature: ``T``, default 4.0.
        reduction: ``'batchmean'`` (default, reference), ``'sum'``, ``'mean'``, ``'none'``.
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('temperature', 'reduction')

    def __init__(
        self, temperature: float = 4.0, reduction: str = 'batchmean', loss_weight: float = 1.0
    ) -> None:
        super().__init__(loss_weight)
        self.temperature = check_temperature(temperature)
        self.reduction = check_choice('reduction', reduction, REDUCTIONS)

    def compute(self, s_logits: torch.Tensor, t_logits: torch.Tensor) -> torch.Tensor:
        return softmax_kd(s_logits, t_logits, self.temperature, self.reduction)
