"""Two-way multi-label loss (Kobayashi, "Two-way Multi-Label Loss", CVPR 2023).

Code: ``tk1980/TwoWayMultiLabelLoss`` (``utils/criterion.py``); supplement eqs. i–v;
``docs/methods.md`` §2.1.

For a set ``S`` of logits split into positives ``S⁺`` and negatives ``S⁻``:

    ℓ(S) = softplus( T_P · LSE_{p∈S⁺}(−x_p / T_P) + T_N · LSE_{n∈S⁻}(x_n / T_N) )

(a smooth ``max_n x_n − min_p x_p``). The loss sums the mean of ``ℓ`` over the classes (each a
column of the ``B × C`` logits, its set made of the batch's samples) and the mean over the
samples (each a row, its set made of the classes), paper eq. 17, with ``T_P = 4``, ``T_N = 1``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F

from mlkd.models.algorithms.global_batch import gather_batch
from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_temperature, label_masks, masked_logsumexp


def two_way_set_losses(
    logits: torch.Tensor, gt: torch.Tensor, dim: int, pos_temperature: float, neg_temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """``ℓ`` of every set along ``dim`` (``dim=0``: one set per class; ``1``: per sample).

    Excluded entries (the other side's members, ignored targets) are masked with ``−inf``, so
    nothing leaks (the reference adds ``−100`` after the temperature division, so an excluded
    entry counts once it exceeds the members by about ``100·T``: with ``T_N = 1`` a positive at
    +50 weighs in a negative set at −50 like a member). A set without negatives has
    ``ℓ = softplus(−inf) = 0`` and still counts as valid (as in the reference); a set without
    positives is not valid.

    Returns:
        ``(losses, valid)``: ``[C]`` (``dim=0``) or ``[B]`` (``dim=1``) set losses, 0 where not
        valid, and the bool mask of valid sets (at least one positive).
    """
    pos, neg = label_masks(gt)
    hardest_pos = pos_temperature * masked_logsumexp(-logits / pos_temperature, pos, dim)
    hardest_neg = neg_temperature * masked_logsumexp(logits / neg_temperature, neg, dim)
    valid, has_neg = pos.any(dim), neg.any(dim)
    losses = F.softplus(hardest_pos + hardest_neg)
    return torch.where(valid & has_neg, losses, torch.zeros_like(losses)), valid


def two_way_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    pos_temperature: float = 4.0,
    neg_temperature: float = 1.0,
    classwise: bool = True,
    samplewise: bool = True,
) -> torch.Tensor:
    """Two-way loss of a batch: ``mean_{valid c} ℓ(column c) + mean_{valid i} ℓ(row i)``.

    Valid sets have at least one positive; ignored (``-1``) entries belong to neither side.
    A batch without any positive gives 0 (connected to the graph; the reference returns NaN, the
    mean of an empty tensor).

    Args:
        logits: ``[B, C]`` logits.
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.
        pos_temperature: ``T_P`` of the positives (4).
        neg_temperature: ``T_N`` of the negatives (1).
        classwise: include the class-wise term (one set per class, across the batch).
        samplewise: include the sample-wise term (one set per sample, across the classes).

    Returns:
        Scalar loss.
    """
    check_temperature(pos_temperature, 'pos_temperature')
    check_temperature(neg_temperature, 'neg_temperature')
    total = logits.sum() * 0.0
    for dim, used in ((0, classwise), (1, samplewise)):
        if used:
            losses, valid = two_way_set_losses(logits, gt, dim, pos_temperature, neg_temperature)
            total = total + losses.sum() / valid.sum().clamp(min=1)
    return total


@MODELS.register_module()
class TwoWayMultiLabelLoss(TaskLoss):
    """Two-way multi-label loss as a task loss; see :func:`two_way_loss`.

    The class-wise term compares the samples of the batch. With ``global_batch=True`` (default)
    and ``torch.distributed`` initialised with more than one process, the logits and targets are
    all-gathered with gradient (:func:`~mlkd.models.algorithms.global_batch.gather_batch`) and
    the whole loss is evaluated on the global batch: every rank gets the loss of the concatenated
    batch, and after DDP's gradient averaging the gradient is that of one process holding it.
    ``global_batch=False`` is the reference behaviour (each GPU its local batch, e.g. 128 of a
    global 512). The loss gathers by itself because it also runs inside mmpretrain heads, which
    have no router; in a loss router do **not** also set ``gather=True`` (it would gather twice).

    The reduction is the paper's means over valid sets (``'mean'`` only); ``avg_factor`` is
    ignored, and no world-size scaling applies.

    Args:
        pos_temperature: ``T_P`` (4).
        neg_temperature: ``T_N`` (1).
        classwise: use the class-wise term.
        samplewise: use the sample-wise term.
        global_batch: evaluate on the all-gathered batch under DDP (see above).
        loss_weight: factor applied to the loss.
    """

    reductions = ('mean',)
    repr_fields = ('pos_temperature', 'neg_temperature', 'classwise', 'samplewise', 'global_batch')

    def __init__(
        self,
        pos_temperature: float = 4.0,
        neg_temperature: float = 1.0,
        classwise: bool = True,
        samplewise: bool = True,
        global_batch: bool = True,
        reduction: str = 'mean',
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size=False, loss_weight=loss_weight)
        if not (classwise or samplewise):
            raise ValueError(
                'TwoWayMultiLabelLoss: classwise and samplewise are both False; '
                'enable at least one term'
            )
        self.pos_temperature = check_temperature(pos_temperature, 'pos_temperature')
        self.neg_temperature = check_temperature(neg_temperature, 'neg_temperature')
        self.classwise, self.samplewise = bool(classwise), bool(samplewise)
        self.global_batch = bool(global_batch)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        if (
            self.global_batch
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size() > 1
        ):
            batch_size = logits.shape[0]
            logits, gt = gather_batch(logits, batch_size), gather_batch(gt, batch_size)
        return two_way_loss(
            logits, gt, self.pos_temperature, self.neg_temperature, self.classwise, self.samplewise
        )
