"""EN: the expected-negative loss of the spatial-consistency paper (Verelst et al., WACV 2023).

Paper: Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (arXiv 2203.06127), eq. (8) (supplement §F), with K from its
Table K.1. Its main text is not available to us: this is ``docs/methods.md`` §3.3's reconstruction,
every open choice a switch (defaults first):

* each training image ``n`` keeps ``s_n``, the running average of its predictions ``σ(z_n)`` over
  visits (``s_n ← μ s_n + (1−μ) σ(z_n)``, the first visit sets it; per-image state);
* the annotated positives ``P_n`` get ``−log σ(z)``; of the other classes, the ``round(K)`` with
  the highest ``s_n`` are left out (they may be unannotated positives) and every other class is an
  **expected negative** with ``−log(1 − σ(z))``; K is the dataset's mean number of positives per
  image (COCO 2.9, VOC 1.5, NUS-WIDE 1.9, CUB 31.5);
* ``en_mode='per_image_topk'`` (above) or ``'global_quota'``: the ``round(K)·N_seen`` highest scores
  of non-annotated classes over all images seen so far are left out (a fractional K then acts
  globally); ``k_rounding``: ``'round'``, ``'floor'`` or ``'ceil'``. Whether K counts the
  annotated positive is open too: ``'round'`` leaves ``round(K)`` classes out *besides* it (K + 1
  escape the negative term); with one annotated positive and the fractional parts of Table K.1
  (.9, .5, .9, .5), ``'floor'`` is exactly the other reading, ``round(K) − 1``;
* before an image's first visit there is no ``s_n``: ``unseen='assume_negative'`` (every
  non-annotated class is a negative, AN) or ``'ignore'`` (only the positives count);
* ``normaliser='all'``: ``Σ M / (B·C)`` as the other single-positive losses (Cole et al.'s
  convention), or ``'supervised'``: ``Σ M`` over the number of positive and negative entries;
* ``log_epsilon``: the ``−log(u + ε)`` of Cole et al.'s code (``1e-5``), or ``None`` for the exact
  ``−log σ`` through ``logsigmoid``.

Zhou et al.'s entropy-maximisation loss, which mlkd registered under this name before, is
:class:`~.entropy_maximisation.EntropyMaximisationLoss`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import StatefulLoss
from ..utils import check_choice
from .common import SinglePositiveTaskLoss, check_expected_positives, observation_masks
from .consistency import check_momentum, ema_update, last_occurrence

EN_MODES = ('per_image_topk', 'global_quota')
K_ROUNDINGS = ('round', 'floor', 'ceil')
UNSEEN = ('assume_negative', 'ignore')
NORMALISERS = ('all', 'supervised')


def rounded_k(expected_positives: float, rounding: str) -> int:
    """K as a whole number of classes (``round`` is Python's: halves to even)."""
    return {'round': round, 'floor': math.floor, 'ceil': math.ceil}[rounding](expected_positives)


def per_image_left_out(scores: torch.Tensor, candidates: torch.Tensor, k: int) -> torch.Tensor:
    """Bool ``[B, C]``: the ``k`` candidates of each row with the highest ``scores``."""
    if k <= 0:
        return torch.zeros_like(candidates)
    top = scores.masked_fill(~candidates, float('-inf')).topk(min(k, scores.shape[1]), dim=1)
    chosen = torch.zeros_like(candidates).scatter_(1, top.indices, True)
    return chosen & candidates


def expected_negative_loss(
    logits: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
    normaliser: str = 'all',
    log_epsilon: float | None = 1e-5,
) -> torch.Tensor:
    """``Σ_{P} −log σ(z) + Σ_{E} −log(1 − σ(z))``, normalised by ``B·C`` or by ``|P| + |E|``.

    Args:
        logits: ``[B, C]``; positive / negative: bool ``[B, C]`` (disjoint).
        normaliser: ``'all'`` or ``'supervised'``.
        log_epsilon: ``ε`` of ``−log(u + ε)``, or None for ``−logsigmoid``.
    """
    if log_epsilon is None:
        on_positive, on_negative = -F.logsigmoid(logits), -F.logsigmoid(-logits)
    else:
        p = torch.sigmoid(logits)
        on_positive, on_negative = -torch.log(p + log_epsilon), -torch.log(1 - p + log_epsilon)
    total = (positive * on_positive + negative * on_negative).sum()
    if normaliser == 'all':
        return total / logits.numel()
    return total / (positive.sum() + negative.sum()).clamp(min=1)


@MODELS.register_module()
class ExpectedNegativeLoss(SinglePositiveTaskLoss, StatefulLoss):
    """EN (module docstring): annotated positives plus expected negatives from each image's
    running-average predictions.

    State (per sample, in checkpoints, equal on every DDP rank): ``scores [N, C]`` (the running
    averages ``s_n``), ``seen [N]``, and for ``'global_quota'`` ``annotated [N, C]`` (each image's
    annotated positives, to leave them out of the global ranking).

    Args:
        num_samples: training set size N.
        num_classes: C (injected).
        expected_positives: K, positives per image (Table K.1).
        momentum: μ of the running average per visit.
        en_mode, k_rounding, unseen, normaliser, log_epsilon: the switches of the module docstring.
        observed_negatives: whether a 0 target is an annotated negative (always a negative).
        loss_weight: factor applied to the loss.
    """

    def __init__(
        self,
        num_samples: int,
        num_classes: int,
        expected_positives: float,
        momentum: float = 0.9,
        en_mode: str = 'per_image_topk',
        k_rounding: str = 'round',
        unseen: str = 'assume_negative',
        normaliser: str = 'all',
        log_epsilon: float | None = 1e-5,
        observed_negatives: bool = False,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        self.num_samples = int(num_samples)
        self.expected_positives = check_expected_positives(expected_positives)
        self.momentum = check_momentum(momentum)
        self.en_mode = check_choice('en_mode', en_mode, EN_MODES)
        self.k_rounding = check_choice('k_rounding', k_rounding, K_ROUNDINGS)
        self.unseen = check_choice('unseen', unseen, UNSEEN)
        self.normaliser = check_choice('normaliser', normaliser, NORMALISERS)
        if log_epsilon is not None and not float(log_epsilon) > 0:
            raise ValueError(f'log_epsilon must be > 0 or None, got {log_epsilon}')
        self.log_epsilon = None if log_epsilon is None else float(log_epsilon)
        self.k = rounded_k(self.expected_positives, self.k_rounding)
        self.register_state('scores', torch.zeros(self.num_samples, num_classes), 'sample')
        self.register_state('seen', torch.zeros(self.num_samples, dtype=torch.bool), 'sample')
        if self.en_mode == 'global_quota':
            self.register_state(
                'annotated', torch.zeros(self.num_samples, num_classes, dtype=torch.bool), 'sample'
            )

    def expected_negatives(self, gt: torch.Tensor, sample_idx: torch.Tensor) -> torch.Tensor:
        """Bool ``[B, C]``: the batch's expected (and annotated) negatives, from the state."""
        positive, observed_negative, _ = observation_masks(gt, self.observed_negatives)
        candidates = ~positive & ~observed_negative
        seen = self.seen[sample_idx][:, None]
        if self.en_mode == 'per_image_topk':
            left_out = per_image_left_out(self.scores[sample_idx], candidates, self.k)
        else:
            left_out = candidates & (self.scores[sample_idx] >= self._global_threshold())
        expected = candidates & ~left_out & seen
        if self.unseen == 'assume_negative':
            expected = expected | (candidates & ~seen)
        return expected | observed_negative

    def _global_threshold(self) -> torch.Tensor:
        """The score of the ``round(K)·N_seen``-th highest non-annotated entry of seen images."""
        pool = self.scores.masked_fill(~self.seen[:, None] | self.annotated, float('-inf'))
        quota = self.k * self.seen.sum()
        values = pool.flatten().sort(descending=True).values
        index = (quota - 1).clamp(min=0, max=values.numel() - 1)
        # quota 0 leaves nothing out: a threshold above every score
        return torch.where(quota > 0, values[index], values.new_tensor(float('inf')))

    def compute(
        self, logits: torch.Tensor, gt: torch.Tensor, reduction: str, sample_idx: torch.Tensor
    ) -> torch.Tensor:
        self.check_sample_idx(sample_idx, self.num_samples)
        positive = observation_masks(gt, self.observed_negatives)[0]
        negative = self.expected_negatives(gt, sample_idx)
        loss = expected_negative_loss(logits, positive, negative, self.normaliser, self.log_epsilon)
        with torch.no_grad():
            keep = last_occurrence(sample_idx, self.num_samples)
            rows = sample_idx[keep]
            self.scores[rows] = ema_update(
                self.scores[rows],
                torch.sigmoid(logits)[keep],
                self.seen[rows][:, None],
                self.momentum,
            )
            self.seen[rows] = True
            if self.en_mode == 'global_quota':
                self.annotated[rows] = positive[keep]
        return loss

    def extra_repr(self) -> str:
        return (
            f'expected_positives={self.expected_positives} (k={self.k}), '
            f'momentum={self.momentum}, en_mode={self.en_mode!r}, unseen={self.unseen!r}, '
            f'normaliser={self.normaliser!r}, log_epsilon={self.log_epsilon}, '
            f'{super().extra_repr()}'
        )
