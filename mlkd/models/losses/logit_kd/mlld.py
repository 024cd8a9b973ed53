"""Multi-level logit distillation (MLLD).

Paper: Jin, Wang and Lin, "Multi-Level Logit Distillation", CVPR 2023; behaviour of the official
code ``Jin-Ying/Multi-Level-Logit-Distillation`` (``docs/methods.md`` §5.3).

With ``P = softmax(z/T)`` (``[B, C]``), summed over temperatures ``T ∈ {4, 3, 5, 2, 6}``:

* instance level ``KD_T = T² · (1/B) Σ_i KL(P^t_i ‖ P^s_i)`` (Hinton KD, :func:`softmax_kd`);
* class level ``CC_T = ‖P^tᵀ P^t − P^sᵀ P^s‖²_F / C`` (``C × C`` class-correlation Gram);
* batch level ``BC_T = ‖P^t P^tᵀ − P^s P^sᵀ‖²_F / B`` (``B × B`` sample-correlation Gram).

Confidence masks from the teacher at ``T = 1``: a sample is kept when its top probability is at or
below the batch median, a class when its probability mass over the batch is at or below the class
median (``torch.quantile``, linear interpolation = ``np.percentile``). ``mask_mode``:

* ``'scalar'`` (default, the official code): the losses are reduced before the mask is applied, so
  each level is multiplied by the *fraction* kept (``mean(mask)``, ≈ ½);
* ``'per_sample'`` (the paper's intent): KD and BC keep only the selected samples' terms
  (``Σ_i mask_i KD_i / B``, BC rows ``i`` with ``mask_i``), CC only the selected classes' rows;
* ``'none'``: no mask (the official strong-view terms).

The official total over two augmented views — ``w·[Σ_T mask·(KD + BC)(weak) + mask_c·CC(weak)] +
w·Σ_T KD(strong)`` — is two instances of this loss: one on the weak view with all levels and
``mask_mode='scalar'``, one on the strong view with ``levels=('instance',)`` and
``mask_mode='none'`` (the official code's strong-view T = 2 and T = 6 terms read the weak logits,
a quirk not reproduced). The CC and BC terms depend on the whole batch:
``compares_samples = True``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_choice, check_temperature
from .kd import softmax_kd

MASK_MODES = ('scalar', 'per_sample', 'none')
LEVELS = ('instance', 'class', 'batch')


def confidence_masks(t_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sample_mask [B], class_mask [C])``: at or below the median teacher confidence (T = 1)."""
    prob = F.softmax(t_logits.detach(), dim=1)
    confidence = prob.max(dim=1).values
    class_mass = prob.sum(dim=0)
    return confidence <= confidence.quantile(0.5), class_mass <= class_mass.quantile(0.5)


def multi_level_logit_distill(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    temperatures: Sequence[float] = (4.0, 3.0, 5.0, 2.0, 6.0),
    levels: Sequence[str] = LEVELS,
    mask_mode: str = 'scalar',
) -> dict[str, torch.Tensor]:
    """MLLD's three levels summed over ``temperatures`` (see the module docstring).

    Args:
        s_logits: ``[B, C]`` student logits.
        t_logits: ``[B, C]`` teacher logits (detached here).
        temperatures: the temperatures ``T`` summed over.
        levels: subset of ``('instance', 'class', 'batch')``.
        mask_mode: ``'scalar'``, ``'per_sample'`` or ``'none'``.

    Returns:
        ``{'instance': ..., 'class': ..., 'batch': ...}`` for the requested levels, scalars.
    """
    check_choice('mask_mode', mask_mode, MASK_MODES)
    for level in levels:
        check_choice('levels', level, LEVELS)
    t_logits = t_logits.detach()
    batch, classes = s_logits.shape
    ones_b = s_logits.new_ones(batch)
    sample_w, class_w = ones_b, s_logits.new_ones(classes)
    if mask_mode != 'none':
        sample_mask, class_mask = confidence_masks(t_logits)
        sample_w, class_w = sample_mask.to(s_logits.dtype), class_mask.to(s_logits.dtype)
    out = {level: s_logits.new_zeros(()) for level in levels}
    for temperature in temperatures:
        p_s = F.softmax(s_logits / temperature, dim=1)
        p_t = F.softmax(t_logits / temperature, dim=1)
        if 'instance' in levels:
            per_sample = softmax_kd(s_logits, t_logits, temperature, 'none').sum(dim=1)
            out['instance'] = out['instance'] + _masked(per_sample, sample_w, mask_mode) / batch
        if 'class' in levels:
            rows = (p_t.T @ p_t - p_s.T @ p_s).pow(2).sum(dim=1) / classes  # [C]
            out['class'] = out['class'] + _masked(rows, class_w, mask_mode)
        if 'batch' in levels:
            rows = (p_t @ p_t.T - p_s @ p_s.T).pow(2).sum(dim=1) / batch  # [B]
            out['batch'] = out['batch'] + _masked(rows, sample_w, mask_mode)
    return out


def _masked(rows: torch.Tensor, weight: torch.Tensor, mask_mode: str) -> torch.Tensor:
    """``Σ rows`` scaled by the mask: by its mean (``scalar``), per row, or not at all."""
    if mask_mode == 'scalar':
        return rows.sum() * weight.mean()
    if mask_mode == 'per_sample':
        return (rows * weight).sum()
    return rows.sum()


@MODELS.register_module()
class MLLDLoss(RoutedLoss):
    """Multi-level logit distillation (:func:`multi_level_logit_distill`); returns the levels
    as a dict (logged as ``loss_<name>_<level>``), each weighted by ``loss_weight``.

    Official CIFAR weights: CE 0.1 on each view, ``loss_weight`` 0.9; ImageNet 0.5 / 0.5 with
    ``temperatures=(1, 3, 5, 2, 6)``.

    Args:
        temperatures: temperatures summed over (default ``(4, 3, 5, 2, 6)``, the official
            ``{T_cfg = 4, 3, 5, 2, 6}``).
        levels: which levels to compute.
        mask_mode: ``'scalar'`` (official), ``'per_sample'`` or ``'none'``.
        loss_weight: factor applied to each level.
    """

    compares_samples = True
    repr_fields = ('temperatures', 'levels', 'mask_mode')

    def __init__(
        self,
        temperatures: Sequence[float] = (4.0, 3.0, 5.0, 2.0, 6.0),
        levels: Sequence[str] = LEVELS,
        mask_mode: str = 'scalar',
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        if not temperatures:
            raise ValueError('MLLDLoss: temperatures must not be empty')
        self.temperatures = tuple(check_temperature(t, 'temperatures') for t in temperatures)
        if not levels:
            raise ValueError('MLLDLoss: levels must not be empty')
        self.levels = tuple(check_choice('levels', level, LEVELS) for level in levels)
        self.mask_mode = check_choice('mask_mode', mask_mode, MASK_MODES)
        self.terms = self.levels

    def compute(self, s_logits: torch.Tensor, t_logits: torch.Tensor) -> dict[str, torch.Tensor]:
        return multi_level_logit_distill(
            s_logits, t_logits, self.temperatures, self.levels, self.mask_mode
        )
