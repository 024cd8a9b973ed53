"""Partial-softmax distillation: L2D's PSM ("PS" in the 3D tables) and 3D's positive divide L_PD.

Papers: Yang et al., "Multi-Label Knowledge Distillation", ICCV 2023 (L2D,
``criterion/distiller_zoo/logits_based/psm.py``; ``docs/methods.md`` §4.1.1) and Li & Cheng,
"Positive Divide and Negative Discrepancy: A New Perspective on Multi-Label Logit Distillation"
(3D; ``docs/methods.md`` §4.4.3).

Both split a sample with positives ``P_i`` and negatives ``N_i`` (targets 1 / 0; ignored ``-1``
entries belong to neither set) into ``|P_i|`` single-positive problems: for ``k ∈ P_i``,
``q^{(k)} = softmax([z_ik, z_in (n ∈ N_i)] / τ)`` (the other positives left out), and distil
``KL(q^{t,(k)} ‖ q^{s,(k)})``:

``L = (c / Z) Σ_i Σ_{k ∈ P_i} KL(q^{t,(k)} ‖ q^{s,(k)})``

* PSM (L2D, code): ``τ = 1``, ``c = 1``, ``Z = B`` (every sample counts, with or without positives).
* L_PD (3D) **is a reconstruction** — the main text defining it is not public; the supplement only
  gives τ = 4 and α = 100. mlkd reads it as tempered PSM: ``τ = 4``, ``c = τ²``, ``Z = B``; switches
  ``temperature_squared`` and ``normalize ∈ {batch, num_positives}`` expose the open choices.

**O(B·C) closed form** (no ``[B, C, C]`` tensor, no loops): with ``x = z/τ``,
``r = softmax(x_{N_i})`` over the negatives only and ``π_k = σ(x_ik − LSE_{N_i}(x))`` the mass on
the positive,

``KL(q^{t,(k)} ‖ q^{s,(k)}) = KLb(π^t_k ‖ π^s_k) + (1 − π^t_k) · KL(r^t ‖ r^s)``,

where the negative-only KL is shared by all positives of a sample. ``LSE_{N_i}`` uses a ``−inf``
mask; ``log π`` and ``log(1 − π)`` go through ``logsigmoid``.

Edge cases: ``P_i = ∅`` → no term (the sample still counts in ``B``); ``N_i = ∅`` → 1-way softmaxes,
KL = 0 (the empty LSE is guarded, value and gradient finite).
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import (
    binary_kl_with_logits,
    check_choice,
    check_temperature,
    label_masks,
    masked_logsumexp,
)
from ..weight_reference import ReferenceWeighted

NORMALIZATIONS = ('batch', 'num_positives')


def partial_softmax_kl(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    gt: torch.Tensor,
    temperature: float = 1.0,
    normalize: str = 'batch',
) -> torch.Tensor:
    """``(1/Z) Σ_i Σ_{k∈P_i} KL(q^{t,(k)} ‖ q^{s,(k)})`` by the O(B·C) closed form (no ``τ²``).

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        temperature: temperature ``τ > 0`` dividing the logits.
        normalize: ``'batch'`` (``Z = B``, PSM) or ``'num_positives'`` (``Z = max(Σ_i |P_i|, 1)``).

    Returns:
        Scalar loss (in the input dtype), connected to ``s_logits`` (0 with zero gradient when no
        sample has both a positive and a negative).
    """
    check_choice('normalize', normalize, NORMALIZATIONS)
    pos, neg = label_masks(gt)
    x_s = s_logits / temperature
    x_t = t_logits.detach() / temperature

    lse_s = masked_logsumexp(x_s, neg).unsqueeze(-1)  # [B, 1]; 0 for rows without negatives
    lse_t = masked_logsumexp(x_t, neg).unsqueeze(-1)
    has_neg = neg.any(dim=-1, keepdim=True)

    # Negative-only softmaxes r and their KL, shared by all positives of a sample.
    log_r_s = torch.where(neg, x_s - lse_s, torch.zeros_like(x_s))
    log_r_t = torch.where(neg, x_t - lse_t, torch.zeros_like(x_t))
    r_t = torch.where(neg, log_r_t.exp(), torch.zeros_like(x_t))
    kl_neg = (r_t * (log_r_t - log_r_s)).sum(dim=-1, keepdim=True)  # [B, 1]

    # Positive mass pi_k = sigmoid(d_k), d_k = x_k - LSE_N(x).
    d_s = x_s - lse_s
    d_t = x_t - lse_t
    per_positive = binary_kl_with_logits(d_t, d_s) + torch.sigmoid(-d_t) * kl_neg
    terms = pos & has_neg
    total = torch.where(terms, per_positive, torch.zeros_like(per_positive)).sum()

    if normalize == 'batch':
        return total / max(s_logits.shape[0], 1)
    return total / pos.sum().clamp(min=1)


class _PartialSoftmaxTerm(RoutedLoss):
    """What PSM and L_PD compute: :func:`partial_softmax_kl`, times ``τ²`` if ``temperature_squared``.

    A subclass sets ``temperature`` and ``normalize`` in its ``__init__`` (and
    ``temperature_squared`` where it is a switch).
    """

    temperature_squared: bool = False  # PSM's reference has no τ² factor
    repr_fields = ('temperature', 'temperature_squared', 'normalize')

    def compute(
        self, s_logits: torch.Tensor, t_logits: torch.Tensor, gt: torch.Tensor
    ) -> torch.Tensor:
        loss = partial_softmax_kl(s_logits, t_logits, gt, self.temperature, self.normalize)
        if self.temperature_squared:
            loss = loss * (self.temperature**2)
        return loss


@MODELS.register_module()
class PartialSoftmaxLoss(_PartialSoftmaxTerm):
    """L2D's PSM (``PartialSoftmaxDistiller``; "PS" in 3D's tables): :func:`partial_softmax_kl`.

    Defaults are the reference ones: no temperature, no ``τ²``, ``Σ / B``.

    Args:
        temperature: temperature (default 1.0, the reference has none).
        normalize: ``'batch'`` (default, reference) or ``'num_positives'``.
        loss_weight: factor applied to the loss.
    """

    def __init__(
        self, temperature: float = 1.0, normalize: str = 'batch', loss_weight: float = 1.0
    ) -> None:
        super().__init__(loss_weight)
        self.temperature = check_temperature(temperature)
        self.normalize = check_choice('normalize', normalize, NORMALIZATIONS)


@MODELS.register_module()
class PositiveDivideLoss(ReferenceWeighted, _PartialSoftmaxTerm):
    """3D's positive divide ``L_PD``, **reconstructed** as tempered PSM (:func:`partial_softmax_kl`).

    ``L_PD = (τ²/B) Σ_i Σ_{k∈P_i} KL(q^{t,(k)} ‖ q^{s,(k)})`` with ``q = softmax(·/τ)`` over one
    positive plus the sample's negatives. 3D uses ``τ = 4`` and (by mlkd's reading) weight α = 100.

    Args:
        temperature: temperature (default 4.0, the supplement's τ).
        temperature_squared: multiply by ``τ²`` (default True, Hinton's gradient-scale convention).
        normalize: ``'batch'`` (default: ÷B as PSM) or ``'num_positives'`` (÷ Σ_i |P_i|).
        loss_weight: factor applied to the loss.
        weight_reference: the setting ``loss_weight`` was given for
            (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`; default None: the
            weight is applied literally).
    """

    scale_exponents = (0.0, 0.0)  # Σ over a sample's positives / B; no growth with C

    def __init__(
        self,
        temperature: float = 4.0,
        temperature_squared: bool = True,
        normalize: str = 'batch',
        loss_weight: float = 1.0,
        weight_reference: dict | None = None,
    ) -> None:
        super().__init__(loss_weight, weight_reference)
        self.temperature = check_temperature(temperature)
        self.temperature_squared = bool(temperature_squared)
        self.normalize = check_choice('normalize', normalize, NORMALIZATIONS)
