"""Single-positive multi-label losses: AN, AN-LS, WAN, EPR, ROLE (Cole et al.) and EN (Zhou et al.).

Papers / code: Cole et al., "Multi-Label Learning from Single Positive Labels", CVPR 2021
(``elijahcole/single-positive-multi-label``); Zhou et al., "Acknowledging the Unknown for
Multi-label Learning with Single Positive Labels", ECCV 2022 (``Correr-Zhou/SPML-AckTheUnknown``,
``loss_EM``). Formulas in ``docs/methods.md`` §3.1 and §3.4.

Labels. mlkd's target ``gt`` is 1 (positive), 0 (negative), -1 (ignored / unobserved). A
single-positive training set has no annotated negatives, so by default (``observed_negatives=False``)
every entry that is not a positive — 0 or -1 — is *unobserved*; this also covers datasets that
give the unobserved labels as plain zeros (MultiDigits ``single_positive``). With
``observed_negatives=True`` a 0 is an annotated negative (partial labels) and only -1 is unobserved.

Numerics as the reference code: ``p = σ(z)``, ``nl(u) = −log(u + 1e−5)``, a loss matrix ``M``
reduced as ``Σ M / (B·C)`` (the mean over **all** entries), a regulariser added without that
division.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from mlkd.registry import MODELS
from .base import BaseDistillLoss, as_fp32

#: ε inside the reference's ``−log(u + ε)``.
LOG_EPSILON = 1e-5


def neg_log(u: torch.Tensor) -> torch.Tensor:
    """``−log(u + 1e−5)``, the reference's negative log (finite at ``u = 0``)."""
    return -torch.log(u + LOG_EPSILON)


def observation_masks(gt: torch.Tensor, observed_negatives: bool = False
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(positive, negative, unobserved)`` bool ``[B, C]`` masks of a target (see module doc)."""
    positive = gt == 1
    if observed_negatives:
        return positive, gt == 0, gt < 0
    return positive, torch.zeros_like(positive), ~positive


def check_targets(gt: torch.Tensor, logits: torch.Tensor, loss: str) -> None:
    """Shapes only: the values (1 / 0 / -1) are validated once per batch, on the host, by the data
    preprocessor (:func:`mlkd.utils.targets.check_batch_labels`); a check here would synchronise
    the device at every call."""
    if gt.shape != logits.shape:
        raise ValueError(f'{loss}: gt {tuple(gt.shape)} and logits {tuple(logits.shape)} differ')


def assume_negative(logits: torch.Tensor, gt: torch.Tensor, label_smoothing: float = 0.0,
                    unobserved_weight: float = 1.0, observed_negatives: bool = False
                    ) -> torch.Tensor:
    """AN, AN-LS and WAN: binary cross-entropy that takes unobserved labels as negatives.

    Per entry (``ε`` = ``label_smoothing``, ``γ`` = ``unobserved_weight``):
    positive ``(1−ε)·nl(p) + ε·nl(1−p)``; negative (observed) and unobserved
    ``(1−ε)·nl(1−p) + ε·nl(p)``, the unobserved ones times ``γ``. AN: ``ε = 0, γ = 1``; AN-LS:
    ``ε = 0.1``; WAN: ``γ = 1/(C−1)``.

    Args:
        logits: ``[B, C]``.
        gt: ``[B, C]`` targets 1 / 0 / -1.
        label_smoothing: ``ε ∈ [0, 0.5)``.
        unobserved_weight: ``γ ≥ 0``.
        observed_negatives: whether 0 is an annotated negative (module docstring).

    Returns:
        Scalar: ``Σ M / (B·C)``.
    """
    (logits, ) = as_fp32(logits)
    positive, negative, unobserved = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    eps = float(label_smoothing)
    as_positive = (1 - eps) * neg_log(p) + eps * neg_log(1 - p)
    as_negative = (1 - eps) * neg_log(1 - p) + eps * neg_log(p)
    matrix = positive * as_positive + (negative + unobserved_weight * unobserved) * as_negative
    return matrix.sum() / logits.numel()


def expected_positives_regulariser(probs: torch.Tensor, expected_positives: float) -> torch.Tensor:
    """EPR's ``R = (mean_i Σ_c p_ic − k)² / C²`` for ``[B, C]`` probabilities."""
    return (probs.sum(dim=1).mean() - expected_positives) ** 2 / probs.shape[1] ** 2


def expected_positives_loss(logits: torch.Tensor, gt: torch.Tensor, expected_positives: float,
                            observed_negatives: bool = False) -> torch.Tensor:
    """EPR: BCE on the observed labels only, plus the expected-positives regulariser.

    ``Σ_{observed} M / (B·C) + (mean_i Σ_c p_ic − k)² / C²``, ``M`` = ``nl(p)`` on positives and
    ``nl(1−p)`` on observed negatives. Depends on the whole batch through the mean.
    """
    (logits, ) = as_fp32(logits)
    positive, negative, _ = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    matrix = positive * neg_log(p) + negative * neg_log(1 - p)
    return matrix.sum() / logits.numel() + expected_positives_regulariser(p, expected_positives)


def role_loss(logits: torch.Tensor, label_logits: torch.Tensor, gt: torch.Tensor,
              expected_positives: float, observed_negatives: bool = False) -> torch.Tensor:
    """ROLE: the network and per-sample label estimates ``ŷ = σ(Θ_n)`` supervise each other.

    With ``o⁺`` the observed positives (and ``o⁻`` observed negatives, if any), ``sg`` stop-gradient:
    ``M = ½[o⁺·nl(p) + o⁻·nl(1−p) + sg(ŷ)·nl(p) + (1−sg(ŷ))·nl(1−p)]
    + ½[o⁺·nl(ŷ) + o⁻·nl(1−ŷ) + sg(p)·nl(ŷ) + (1−sg(p))·nl(1−ŷ)]``, reduced ``Σ M / (B·C)``, plus
    ``½[R_EPR(p) + R_EPR(ŷ)]``.

    Args:
        logits: ``[B, C]`` network logits.
        label_logits: ``[B, C]`` the batch's rows of Θ.
        gt, expected_positives, observed_negatives: as :func:`expected_positives_loss`.
    """
    logits, label_logits = as_fp32(logits, label_logits)
    positive, negative, _ = observation_masks(gt, observed_negatives)
    p, estimate = torch.sigmoid(logits), torch.sigmoid(label_logits)

    def side(prob: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        other = other.detach()
        return (positive * neg_log(prob) + negative * neg_log(1 - prob)
                + other * neg_log(prob) + (1 - other) * neg_log(1 - prob))
    matrix = 0.5 * side(p, estimate) + 0.5 * side(estimate, p)
    regulariser = 0.5 * (expected_positives_regulariser(p, expected_positives)
                         + expected_positives_regulariser(estimate, expected_positives))
    return matrix.sum() / logits.numel() + regulariser


def binary_entropy(p: torch.Tensor) -> torch.Tensor:
    """``H(p) = p·nl(p) + (1−p)·nl(1−p)`` with the reference's ``nl``."""
    return p * neg_log(p) + (1 - p) * neg_log(1 - p)


def entropy_maximisation(logits: torch.Tensor, gt: torch.Tensor, alpha: float = 0.1,
                         observed_negatives: bool = False) -> torch.Tensor:
    """EN (Zhou et al.'s "EM" loss): BCE on the positives, maximal entropy on unobserved labels.

    ``M = o⁺·nl(p) + o⁻·nl(1−p) − α·[unobserved]·H(p)``, reduced ``Σ M / (B·C)``. Minimising
    ``−α·H`` pushes unobserved predictions towards 0.5 instead of towards 0 (AN), so an
    unannotated object is not learnt as a negative.
    """
    (logits, ) = as_fp32(logits)
    positive, negative, unobserved = observation_masks(gt, observed_negatives)
    p = torch.sigmoid(logits)
    matrix = (positive * neg_log(p) + negative * neg_log(1 - p)
              - alpha * unobserved * binary_entropy(p))
    return matrix.sum() / logits.numel()


class _SinglePositiveLoss(BaseDistillLoss):
    """Shared configuration: ``observed_negatives`` and the target check."""

    def __init__(self, observed_negatives: bool = False, loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight)
        self.observed_negatives = bool(observed_negatives)


@MODELS.register_module()
class AssumeNegativeLoss(_SinglePositiveLoss):
    """AN (``label_smoothing=0``), AN-LS (``label_smoothing=0.1``): :func:`assume_negative`."""

    def __init__(self, label_smoothing: float = 0.0, observed_negatives: bool = False,
                 loss_weight: float = 1.0) -> None:
        super().__init__(observed_negatives, loss_weight)
        if not 0.0 <= label_smoothing < 0.5:
            raise ValueError(f'label_smoothing must be in [0, 0.5), got {label_smoothing}')
        self.label_smoothing = float(label_smoothing)

    def forward(self, logits: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        check_targets(gt, logits, type(self).__name__)
        return self.loss_weight * assume_negative(logits, gt, self.label_smoothing, 1.0,
                                                  self.observed_negatives)


@MODELS.register_module()
class WeakAssumeNegativeLoss(_SinglePositiveLoss):
    """WAN: AN with the unobserved labels weighted ``γ = 1/(C−1)`` (``num_classes`` injected)."""

    def __init__(self, num_classes: int, observed_negatives: bool = False,
                 loss_weight: float = 1.0) -> None:
        super().__init__(observed_negatives, loss_weight)
        if num_classes < 2:
            raise ValueError(f'WeakAssumeNegativeLoss needs num_classes >= 2, got {num_classes}')
        self.unobserved_weight = 1.0 / (num_classes - 1)

    def forward(self, logits: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        check_targets(gt, logits, type(self).__name__)
        return self.loss_weight * assume_negative(logits, gt, 0.0, self.unobserved_weight,
                                                  self.observed_negatives)


def _check_expected_positives(value: float) -> float:
    value = float(value)
    if not value > 0:
        raise ValueError(f'expected_positives (k, positives per image) must be > 0, got {value}')
    return value


@MODELS.register_module()
class ExpectedPositivesLoss(_SinglePositiveLoss):
    """EPR: :func:`expected_positives_loss`. ``expected_positives`` is the dataset's k (COCO 2.9).

    The regulariser is a batch statistic: under DDP the router gathers the global batch.
    """

    compares_samples = True

    def __init__(self, expected_positives: float, observed_negatives: bool = False,
                 loss_weight: float = 1.0) -> None:
        super().__init__(observed_negatives, loss_weight)
        self.expected_positives = _check_expected_positives(expected_positives)

    def forward(self, logits: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        check_targets(gt, logits, type(self).__name__)
        return self.loss_weight * expected_positives_loss(logits, gt, self.expected_positives,
                                                          self.observed_negatives)


def check_sample_idx(sample_idx: torch.Tensor, num_samples: int, loss: str) -> None:
    """Raise a clear error for dataset indices outside the per-sample state."""
    if sample_idx.numel() and (int(sample_idx.min()) < 0 or int(sample_idx.max()) >= num_samples):
        raise IndexError(f'{loss}: sample_idx {int(sample_idx.max())} is outside the state of '
                         f'num_samples={num_samples}; set num_samples to the training set size')


def logit(p: float) -> float:
    """The reference's ``log(p/(1−p))`` with ``p`` clipped to ``[1e−5, 1−1e−5]``."""
    p = min(max(p, 1e-5), 1 - 1e-5)
    return math.log(p / (1 - p))


@MODELS.register_module()
class ROLELoss(_SinglePositiveLoss):
    """ROLE: trainable per-sample label estimates ``Θ [N, C]`` (``label_logits``) + :func:`role_loss`.

    ``Θ`` is a parameter of the loss, indexed by ``sample_idx``: it trains with the network, lives
    in checkpoints, and is reachable by ``paramwise_cfg``. The reference trains it with 10× the
    network's learning rate and no weight decay::

        optim_wrapper = dict(paramwise_cfg=dict(custom_keys={
            'label_logits': dict(lr_mult=10.0, decay_mult=0.0)}))

    Initialisation as the reference: every entry uniform in ``[logit(0.4), logit(0.6)]`` (drawn at
    build time, so every DDP rank draws the same); at a sample's first visit its observed positives
    are set to ``logit(0.995)`` (observed negatives to ``logit(0.005)``) — the reference does this
    from the label matrix before training, which gives the same values.

    The loss depends on ``Θ`` of the batch's samples only, but under DDP every rank must update the
    same rows: ``compares_samples = True`` gathers the global batch.

    Args:
        num_samples: training set size ``N``.
        num_classes: ``C`` (injected).
        expected_positives: k, as :class:`ExpectedPositivesLoss`.
    """

    compares_samples = True

    def __init__(self, num_samples: int, num_classes: int, expected_positives: float,
                 observed_negatives: bool = False, seed: int = 0, loss_weight: float = 1.0) -> None:
        super().__init__(observed_negatives, loss_weight)
        self.num_samples = int(num_samples)
        self.expected_positives = _check_expected_positives(expected_positives)
        generator = torch.Generator().manual_seed(seed)
        low, high = logit(0.4), logit(0.6)
        init = torch.rand(self.num_samples, num_classes, generator=generator) * (high - low) + low
        self.label_logits = nn.Parameter(init)
        self.register_buffer('seen', torch.zeros(self.num_samples, dtype=torch.bool))

    @torch.no_grad()
    def _initialise_observed(self, gt: torch.Tensor, sample_idx: torch.Tensor) -> None:
        fresh = ~self.seen[sample_idx]
        if not fresh.any():
            return
        rows, targets = sample_idx[fresh], gt[fresh]
        positive, negative, _ = observation_masks(targets, self.observed_negatives)
        values = self.label_logits[rows]
        values[positive] = logit(0.995)
        values[negative] = logit(0.005)
        self.label_logits[rows] = values
        self.seen[rows] = True

    def forward(self, logits: torch.Tensor, gt: torch.Tensor,
                sample_idx: torch.Tensor) -> torch.Tensor:
        check_targets(gt, logits, type(self).__name__)
        check_sample_idx(sample_idx, self.num_samples, type(self).__name__)
        self._initialise_observed(gt, sample_idx)
        return self.loss_weight * role_loss(logits, self.label_logits[sample_idx], gt,
                                            self.expected_positives, self.observed_negatives)


@MODELS.register_module()
class EntropyMaximisationLoss(_SinglePositiveLoss):
    """EN: :func:`entropy_maximisation`; ``alpha`` as the reference (COCO / NUS 0.1, VOC 0.2)."""

    def __init__(self, alpha: float = 0.1, observed_negatives: bool = False,
                 loss_weight: float = 1.0) -> None:
        super().__init__(observed_negatives, loss_weight)
        if alpha < 0:
            raise ValueError(f'alpha must be >= 0, got {alpha}')
        self.alpha = float(alpha)

    def forward(self, logits: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        check_targets(gt, logits, type(self).__name__)
        return self.loss_weight * entropy_maximisation(logits, gt, self.alpha,
                                                       self.observed_negatives)
