"""CL: consistency of each image's predictions with their running average over visits.

Paper: Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (arXiv 2203.06127), which introduces CL as the image-level
baseline of SCL (:mod:`.spatial_consistency`). Its main-text equations are not available to us;
what is reconstructed, and every switch, is listed in ``docs/methods.md`` §3.3 / §3.5.

Each training image ``n`` keeps ``s_n ∈ [0, 1]^C``, an exponential moving average of its
predictions over visits (≈ epochs). A visit compares ``σ(z_n)`` with ``s_n`` as it was *before*
the visit, then updates ``s_n ← μ·s_n + (1−μ)·σ(z_n)`` (the first visit sets ``s_n = σ(z_n)`` and
gives no loss).

Distances between a prediction ``p`` and its target ``t`` (the supplement compares ℓ1, ℓ2 and
Jensen–Shannon): ``l2`` ``(p−t)²``, ``l1`` ``|p−t|``, ``jsd`` binary Jensen–Shannon divergence,
``bce`` ``−t log p − (1−t) log(1−p)``. Reduction: the sum over compared entries divided by the
number of *all* entries (``B·C`` for CL, ``B·C·h·w`` for SCL), the convention of the
single-positive losses.

State under DDP: CL and SCL are stateful (:class:`~mlkd.models.losses.base.StatefulLoss`), so
every rank sees the global batch (``sample_idx``, ``crop_box``, ``flip`` and the predictions) and
applies the same update to its copy.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss, StatefulLoss
from ..utils import check_choice

DISTANCES = ('l2', 'l1', 'jsd', 'bce')
_EPS = 1e-7


def consistency_distance(pred: torch.Tensor, target: torch.Tensor, distance: str) -> torch.Tensor:
    """Element-wise distance between probabilities ``pred`` and ``target`` (same shape)."""
    if distance == 'l2':
        return (pred - target) ** 2
    if distance == 'l1':
        return (pred - target).abs()
    p, t = pred.clamp(_EPS, 1 - _EPS), target.clamp(_EPS, 1 - _EPS)
    if distance == 'bce':
        return -(target * p.log() + (1 - target) * (1 - p).log())
    mid = (p + t) / 2

    def kl(a, b):
        return a * (a / b).log() + (1 - a) * ((1 - a) / (1 - b)).log()

    return 0.5 * kl(p, mid) + 0.5 * kl(t, mid)


def last_occurrence(sample_idx: torch.Tensor, num_samples: int) -> torch.Tensor:
    """Bool ``[B]``: ``True`` at the last occurrence of each index in ``[0, num_samples)``.

    A sample repeated in one batch (DistributedSampler padding) is thus written once. Sized by
    ``num_samples`` rather than by the largest index, so nothing is read back to the host.
    """
    order = torch.arange(sample_idx.numel(), device=sample_idx.device)
    last = torch.full((max(int(num_samples), 1),), -1, dtype=torch.long, device=sample_idx.device)
    last.scatter_reduce_(0, sample_idx, order, reduce='amax', include_self=True)
    return last[sample_idx] == order


def ema_update(
    old: torch.Tensor, new: torch.Tensor, known: torch.Tensor, momentum: float
) -> torch.Tensor:
    """``μ·old + (1−μ)·new`` where ``known``, else ``new`` (broadcast)."""
    return torch.where(known, momentum * old + (1 - momentum) * new, new)


def consistency_loss(
    probs: torch.Tensor, targets: torch.Tensor, known: torch.Tensor, distance: str = 'l2'
) -> torch.Tensor:
    """CL / SCL value: ``Σ_{known} d(p, t) / numel(p)``; ``known`` broadcasts against ``probs``."""
    return (consistency_distance(probs, targets, distance) * known).sum() / probs.numel()


def check_momentum(momentum: float) -> float:
    momentum = float(momentum)
    if not 0.0 <= momentum < 1.0:
        raise ValueError(f'momentum must be in [0, 1), got {momentum}')
    return momentum


@MODELS.register_module()
class ConsistencyLoss(RoutedLoss, StatefulLoss):
    """CL: consistency of each image's predictions with their running average over visits.

    State (buffers, in checkpoints): ``ema [N, C]`` float, ``seen [N]`` bool.

    Args:
        num_samples: training set size ``N``.
        num_classes: ``C`` (injected).
        momentum: ``μ`` of the EMA per visit.
        distance: ``'l2'`` (default), ``'l1'``, ``'jsd'`` or ``'bce'``.
    """

    def __init__(
        self,
        num_samples: int,
        num_classes: int,
        momentum: float = 0.9,
        distance: str = 'l2',
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.num_samples = int(num_samples)
        self.momentum = check_momentum(momentum)
        self.distance = check_choice('distance', distance, DISTANCES)
        self.register_state('ema', torch.zeros(self.num_samples, num_classes), 'sample')
        self.register_state('seen', torch.zeros(self.num_samples, dtype=torch.bool), 'sample')

    def compute(self, logits: torch.Tensor, sample_idx: torch.Tensor) -> torch.Tensor:
        self.check_sample_idx(sample_idx, self.num_samples)
        probs = torch.sigmoid(logits)
        seen = self.seen[sample_idx]
        loss = consistency_loss(probs, self.ema[sample_idx], seen[:, None], self.distance)
        with torch.no_grad():
            keep = last_occurrence(sample_idx, self.num_samples)
            rows = sample_idx[keep]
            self.ema[rows] = ema_update(
                self.ema[rows], probs.detach()[keep], seen[keep, None], self.momentum
            )
            self.seen[rows] = True
        return loss
