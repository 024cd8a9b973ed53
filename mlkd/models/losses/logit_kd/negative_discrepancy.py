"""3D's negative discrepancy distillation ``L_NDD`` and its bound with ``L_aux``.

Paper: Li & Cheng, "Positive Divide and Negative Discrepancy: A New Perspective on Multi-Label Logit
Distillation" (3D), supplement §C.2; ``docs/methods.md`` §4.4.4–4.4.5.

**What the supplement states.** For two samples 1, 2 and the ``N = |N_1 ∩ N_2|`` labels negative in
both, with probabilities ``p̃`` restricted to those labels and ``ρ = p̃_1 − p̃_2``,
``L_NDD = MSE(ρ^s, ρ^t) = (1/N) Σ_c ((p̃^s_1c − p̃^s_2c) − (p̃^t_1c − p̃^t_2c))²``, which it bounds by
``MSE(p̃^s_1, p̃^t_1) + MSE(p̃^s_2, p̃^t_2) + L_aux``, ``L_aux = 2(p̃^s_1·p̃^t_2 + p̃^s_2·p̃^t_1)``
(printed without the ``1/N`` of the other terms). With ``u = p^s − p^t`` the bound holds term by term:
``(u_1 − u_2)² = u_1² + u_2² − 2u_1u_2`` and
``−2u_1u_2 = 2(p^s_1p^t_2 + p^s_2p^t_1) − 2(p^s_1p^s_2 + p^t_1p^t_2) ≤ 2(p^s_1p^t_2 + p^s_2p^t_1)``.

**What is reconstructed** (the main text and code are not public; every choice is a switch):

* the pair set: all ordered pairs ``(i, j), i ≠ j`` of the batch, labels with ``y_ic = y_jc = 0``
  (ignored ``-1`` entries are not negatives): ``Ω = {(i, j, c)}``;
* ``prob_temperature`` — probabilities ``p = σ(z/τ_n)``; default ``τ_n = 1`` ("probabilities"), alternative
  ``τ_n = τ = 4`` (the tilde of ``p̃`` is undefined);
* ``pair_norm`` — ``'per_pair'`` (default, faithful): each pair's loss is a mean over its ``N_ij``
  common negatives, then the mean over pairs with ``N_ij > 0``; ``'global'``: one mean over all
  triples of ``Ω``, ``(1/|Ω|) Σ_Ω``;
* ``form`` — ``'bound'`` (default; the supplement presents it as the reformulation, Eq. 15 of the main
  text) or ``'exact'`` (``MSE(ρ^s, ρ^t)`` itself);
* ``aux_form`` — where ``γ_b`` goes (bound form only):

  * ``'bound_exact'`` (default): ``γ_b`` multiplies ``L_aux`` normalised like the MSE terms and
    *without* the printed factor 2: per pair ``(1/N_ij) Σ_c (p^s_ic p^t_jc + p^s_jc p^t_ic)``, in
    ``global`` mode ``(1/|Ω|) Σ_Ω (...)``. ``γ_b = 2`` reproduces the true upper bound exactly
    (bound ≥ exact for ``γ_b ≥ 2``);
  * ``'printed'``: ``γ_b`` multiplies the literal ``L_aux = 2 Σ_c (p^s_ic p^t_jc + p^s_jc p^t_ic)``
    (no ``1/N``), averaged over the pairs with ``N_ij > 0`` — in both ``pair_norm`` modes, since the
    printed term has no count to normalise;
  * ``'off'``: MSE terms only.

* the combination with L_PD and the weights (α = 100 on L_PD, β = 10 on L_NDD, γ_b = 2) is also a
  reconstruction (``docs/methods.md`` §4.4.5); this module is one term, weighted by ``loss_weight``.

**Closed forms** (no B²·C loops), ``m_ic = [y_ic = 0]``, ``U = m ⊙ u``:

* per pair: ``N = m mᵀ``, ``A = (m ⊙ u²) mᵀ``, ``D = A + Aᵀ − 2 U Uᵀ`` gives
  ``D_ij = Σ_c m_ic m_jc (u_ic − u_jc)²``; the MSE part of the bound is ``A + Aᵀ`` and the aux sums
  are ``Q + Qᵀ`` with ``Q = (m ⊙ p^s)(m ⊙ p^t)ᵀ`` — B×B matmuls;
* global (O(B·C)), ``n_c = Σ_i m_ic``, ``|Ω| = Σ_c n_c(n_c − 1)``:
  ``Σ_Ω (u_i − u_j)² = Σ_c [2 n_c Σ_i m u² − 2 (Σ_i m u)²]``,
  ``Σ_Ω (u_i² + u_j²) = 2 Σ_c (n_c − 1) Σ_i m u²``,
  ``Σ_Ω (p^s_i p^t_j + p^s_j p^t_i) = 2 Σ_c [(Σ_i m p^s)(Σ_j m p^t) − Σ_i m p^s p^t]``.

An empty ``Ω`` (B = 1, or no label negative in two samples) gives 0, still connected to the graph.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_choice, check_temperature
from ..weight_reference import ReferenceWeighted

FORMS = ('bound', 'exact')
PAIR_NORMS = ('per_pair', 'global')
AUX_FORMS = ('bound_exact', 'printed', 'off')


def _masked_mean(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` over ``valid``; 0 (graph-connected) when nothing is valid."""
    total = torch.where(valid, values, torch.zeros_like(values)).sum()
    return total / valid.sum().clamp(min=1)


def negative_discrepancy(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    gt: torch.Tensor,
    form: str = 'bound',
    pair_norm: str = 'per_pair',
    aux_form: str = 'bound_exact',
    gamma_b: float = 2.0,
    prob_temperature: float = 1.0,
) -> torch.Tensor:
    """``L_NDD`` over all ordered sample pairs of the batch (see the module docstring).

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        form: ``'bound'`` (MSE terms + ``γ_b·L_aux``) or ``'exact'`` (``MSE(ρ^s, ρ^t)``).
        pair_norm: ``'per_pair'`` or ``'global'``.
        aux_form: ``'bound_exact'``, ``'printed'`` or ``'off'`` (ignored for ``form='exact'``).
        gamma_b: weight of ``L_aux``.
        prob_temperature: ``τ_n`` in ``p = σ(z/τ_n)``.

    Returns:
        Scalar loss, connected to ``s_logits``; 0 when ``Ω`` is empty.
    """
    check_choice('form', form, FORMS)
    check_choice('pair_norm', pair_norm, PAIR_NORMS)
    check_choice('aux_form', aux_form, AUX_FORMS)
    m = (gt == 0).to(s_logits.dtype)  # [B, C]
    p_s = torch.sigmoid(s_logits / prob_temperature)
    p_t = torch.sigmoid(t_logits.detach() / prob_temperature)
    u = p_s - p_t
    mu = m * u  # U
    mu2 = mu * u  # m ⊙ u²
    n_c = m.sum(dim=0)  # [C]
    omega = (n_c * (n_c - 1)).sum()  # |Ω|
    if pair_norm == 'per_pair' or (form == 'bound' and aux_form == 'printed'):
        n_pair = m @ m.T  # N_ij, [B, B]
        eye = torch.eye(m.shape[0], dtype=torch.bool, device=m.device)
        valid = (n_pair > 0) & ~eye
    if pair_norm == 'per_pair':
        a = mu2 @ m.T  # A_ij = Σ_c m_ic m_jc u_ic²

    if form == 'exact':
        if pair_norm == 'global':
            total = (2 * n_c * mu2.sum(dim=0) - 2 * mu.sum(dim=0) ** 2).sum()
            return total / omega.clamp(min=1)
        per_pair = (a + a.T - 2 * (mu @ mu.T)) / n_pair.clamp(min=1)
        return _masked_mean(per_pair, valid)

    # Bound: MSE(p̃_i^s, p̃_i^t) + MSE(p̃_j^s, p̃_j^t) + γ_b·L_aux.
    if pair_norm == 'global':
        mse = (2 * (n_c - 1) * mu2.sum(dim=0)).sum() / omega.clamp(min=1)
    else:
        mse = _masked_mean((a + a.T) / n_pair.clamp(min=1), valid)
    if aux_form == 'off':
        return mse
    mps, mpt = m * p_s, m * p_t
    if aux_form == 'printed':
        q = mps @ mpt.T  # Q_ij = Σ_c m_ic m_jc p^s_ic p^t_jc
        aux = _masked_mean(2 * (q + q.T), valid)
    elif pair_norm == 'global':
        aux_total = 2 * (mps.sum(dim=0) * mpt.sum(dim=0) - (mps * p_t).sum(dim=0)).sum()
        aux = aux_total / omega.clamp(min=1)
    else:
        q = mps @ mpt.T
        aux = _masked_mean((q + q.T) / n_pair.clamp(min=1), valid)
    return mse + gamma_b * aux


@MODELS.register_module()
class NegativeDiscrepancyLoss(ReferenceWeighted, RoutedLoss):
    """3D's ``L_NDD`` (:func:`negative_discrepancy`); the switches are documented in the module.

    3D's total is reconstructed as ``L_task + α·L_PD + β·L_NDD`` with β = 10 (``loss_weight``).

    Args:
        form: ``'bound'`` (default) or ``'exact'``.
        pair_norm: ``'per_pair'`` (default) or ``'global'``.
        aux_form: ``'bound_exact'`` (default), ``'printed'`` or ``'off'``.
        gamma_b: weight of ``L_aux`` (default 2.0, the supplement's γ_b).
        prob_temperature: ``τ_n`` of ``p = σ(z/τ_n)`` (default 1.0).
        loss_weight: factor applied to the loss.
        weight_reference: the setting ``loss_weight`` was given for
            (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`; default None: the
            weight is applied literally).
    """

    compares_samples = True  # pairs / statistics over the batch
    scale_exponents = (0.0, 0.0)  # a mean over pairs and labels
    repr_fields = ('form', 'pair_norm', 'aux_form', 'gamma_b', 'prob_temperature')

    def __init__(
        self,
        form: str = 'bound',
        pair_norm: str = 'per_pair',
        aux_form: str = 'bound_exact',
        gamma_b: float = 2.0,
        prob_temperature: float = 1.0,
        loss_weight: float = 1.0,
        weight_reference: dict | None = None,
    ) -> None:
        super().__init__(loss_weight, weight_reference)
        self.form = check_choice('form', form, FORMS)
        self.pair_norm = check_choice('pair_norm', pair_norm, PAIR_NORMS)
        self.aux_form = check_choice('aux_form', aux_form, AUX_FORMS)
        self.gamma_b = float(gamma_b)
        self.prob_temperature = check_temperature(prob_temperature, 'prob_temperature')

    def compute(
        self, s_logits: torch.Tensor, t_logits: torch.Tensor, gt: torch.Tensor
    ) -> torch.Tensor:
        return negative_discrepancy(
            s_logits,
            t_logits,
            gt,
            self.form,
            self.pair_norm,
            self.aux_form,
            self.gamma_b,
            self.prob_temperature,
        )
