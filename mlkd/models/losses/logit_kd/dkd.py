"""Decoupled knowledge distillation (DKD) for single-label classification.

Paper: Zhao, Cui, Song, Qiu and Liang, "Decoupled Knowledge Distillation", CVPR 2022; defaults and
warm-up as mdistiller (``docs/methods.md`` §5.2).

With ``p = softmax(z/T)`` and target class ``g``:

* ``TCKD = T² · (1/B) Σ_i KL(b^t_i ‖ b^s_i)``, ``b = [p_g, 1 − p_g]`` (target vs. all others);
* ``NCKD = T² · (1/B) Σ_i KL(p̂^t_i ‖ p̂^s_i)``, ``p̂`` the softmax over the non-target classes;
* ``DKD = α·TCKD + β·NCKD``, scaled during warm-up by ``min(epoch / warmup, 1)``.

All logs come from log-sum-exps (``log p_g = z_g/T − LSE(z/T)``,
``log(1 − p_g) = LSE_{k≠g}(z/T) − LSE(z/T)``), so ±50 logits stay finite; mdistiller takes
``log`` of the softmax and removes the target with ``−1000``, equal away from saturation.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_temperature, masked_logsumexp, single_label_index, warmup_factor


def decoupled_kd(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    target: torch.Tensor,
    alpha: float = 1.0,
    beta: float = 8.0,
    temperature: float = 4.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(α·TCKD, β·NCKD)`` (see the module docstring), each ``T²``-scaled and averaged over B.

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        target: ``[B]`` long class indices.
        alpha: weight of TCKD.
        beta: weight of NCKD.
        temperature: ``T > 0``.

    Returns:
        The two weighted terms, scalars. ``C = 1`` leaves no non-target class: NCKD is 0.
    """
    batch = s_logits.shape[0]
    is_target = torch.zeros_like(s_logits, dtype=torch.bool)
    is_target[torch.arange(batch, device=s_logits.device), target] = True

    def log_parts(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        scaled = logits / temperature
        lse_all = torch.logsumexp(scaled, dim=1)
        lse_other = masked_logsumexp(scaled, ~is_target, dim=1)
        log_p_target = scaled[is_target] - lse_all
        log_p_other = lse_other - lse_all
        log_p_hat = scaled - lse_other[:, None]  # log-softmax over the non-target classes
        return log_p_target, log_p_other, log_p_hat

    s_target, s_other, s_hat = log_parts(s_logits)
    t_target, t_other, t_hat = log_parts(t_logits.detach())
    has_other = (~is_target).any(dim=1)
    # A sample whose non-target set is empty has log(1 − p_g) = −inf on both sides: no term.
    other_term = torch.where(
        has_other, t_other.exp() * (t_other - s_other), torch.zeros_like(t_other)
    )
    tckd = (t_target.exp() * (t_target - s_target) + other_term).sum()
    nckd_elem = t_hat.exp() * (t_hat - s_hat)
    nckd = torch.where(is_target, torch.zeros_like(nckd_elem), nckd_elem).sum()
    scale = temperature**2 / batch
    return alpha * tckd * scale, beta * nckd * scale


@MODELS.register_module()
class DKDLoss(RoutedLoss):
    """DKD (:func:`decoupled_kd`) with mdistiller's linear warm-up.

    Single-label: ``gt`` is the ``[B, C]`` one-hot target the router supplies; the class is the
    column of each row's 1 (a row with no or several 1s raises ValueError). The warm-up factor
    ``min((epoch + 1) / warmup_epochs, 1)`` uses the 0-based epoch from MMEngine's ``MessageHub``
    (mdistiller's ``min(epoch / warmup, 1)`` with 1-based epochs; see
    :func:`~mlkd.models.losses.utils.warmup_factor`).

    mdistiller defaults: α 1, β 8, T 4, warm-up 20 epochs, CE weight 1 (CIFAR; per-pair β in
    ``docs/methods.md`` §5.2).

    Args:
        alpha: TCKD weight.
        beta: NCKD weight.
        temperature: ``T``.
        warmup_epochs: length of the linear ramp (0: none).
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('alpha', 'beta', 'temperature', 'warmup_epochs')

    def __init__(
        self,
        alpha: float = 1.0,
        beta: float = 8.0,
        temperature: float = 4.0,
        warmup_epochs: int = 20,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.temperature = check_temperature(temperature)
        self.warmup_epochs = int(warmup_epochs)

    def compute(
        self, s_logits: torch.Tensor, t_logits: torch.Tensor, gt: torch.Tensor
    ) -> torch.Tensor:
        """Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits.
        gt: ``[B, C]`` one-hot targets.
        """
        tckd, nckd = decoupled_kd(
            s_logits, t_logits, single_label_index(gt), self.alpha, self.beta, self.temperature
        )
        return tckd + nckd

    def weight_factor(self) -> float:
        return warmup_factor(self.warmup_epochs)
