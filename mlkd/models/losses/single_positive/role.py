"""ROLE: per-sample label estimates learnt jointly with the network.

Source: E. Cole et al., "Multi-Label Learning from Single Positive Labels", CVPR 2021.

See :mod:`.common` for the label convention and the reference numerics.
"""

from __future__ import annotations

import torch
from torch import nn

from mlkd.registry import MODELS

from ..base import StatefulLoss
from .common import (
    SinglePositiveTaskLoss,
    check_expected_positives,
    expected_positives_regulariser,
    logit,
    neg_log,
    observation_masks,
)


def role_loss(
    logits: torch.Tensor,
    label_logits: torch.Tensor,
    gt: torch.Tensor,
    expected_positives: float,
    observed_negatives: bool = False,
) -> torch.Tensor:
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
    positive, negative, _ = observation_masks(gt, observed_negatives)
    p, estimate = torch.sigmoid(logits), torch.sigmoid(label_logits)

    def side(prob: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        other = other.detach()
        return (
            positive * neg_log(prob)
            + negative * neg_log(1 - prob)
            + other * neg_log(prob)
            + (1 - other) * neg_log(1 - prob)
        )

    matrix = 0.5 * side(p, estimate) + 0.5 * side(estimate, p)
    regulariser = 0.5 * (
        expected_positives_regulariser(p, expected_positives)
        + expected_positives_regulariser(estimate, expected_positives)
    )
    return matrix.sum() / logits.numel() + regulariser


@MODELS.register_module()
class ROLELoss(SinglePositiveTaskLoss, StatefulLoss):
    """ROLE: trainable per-sample label estimates ``Θ [N, C]`` (``label_logits``) + :func:`role_loss`.

    ``Θ`` is a parameter of the loss (per-sample state), indexed by ``sample_idx``: it trains with
    the network, lives in checkpoints, and is reachable by ``paramwise_cfg``. The reference trains
    it with 10× the network's learning rate and no weight decay::

        optim_wrapper = dict(paramwise_cfg=dict(custom_keys={
            'label_logits': dict(lr_mult=10.0, decay_mult=0.0)}))

    Initialisation as the reference: every entry uniform in ``[logit(0.4), logit(0.6)]`` (drawn at
    build time from the loss's own seed, so every DDP rank draws the same); at a sample's first
    visit its observed positives are set to ``logit(0.995)`` (observed negatives to
    ``logit(0.005)``) — the reference does this from the label matrix before training, which gives
    the same values.

    Args:
        num_samples: training set size ``N``.
        num_classes: ``C`` (injected).
        expected_positives: k, as :class:`~.expected_positives.ExpectedPositivesLoss`.
        observed_negatives: whether a 0 target is an annotated negative.
        seed: seed of the initial label estimates.
        loss_weight: factor applied to the loss.
    """

    def __init__(
        self,
        num_samples: int,
        num_classes: int,
        expected_positives: float,
        observed_negatives: bool = False,
        seed: int = 0,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(observed_negatives, loss_weight)
        self.num_samples = int(num_samples)
        self.expected_positives = check_expected_positives(expected_positives)
        generator = torch.Generator().manual_seed(seed)
        low, high = logit(0.4), logit(0.6)
        init = torch.rand(self.num_samples, num_classes, generator=generator) * (high - low) + low
        self.register_state('label_logits', nn.Parameter(init), 'sample')
        self.register_state('seen', torch.zeros(self.num_samples, dtype=torch.bool), 'sample')

    @torch.no_grad()
    def _initialise_observed(self, gt: torch.Tensor, sample_idx: torch.Tensor) -> None:
        """Set the observed labels of first-visit samples (no host synchronisation)."""
        fresh = ~self.seen[sample_idx][:, None]
        positive, negative, _ = observation_masks(gt, self.observed_negatives)
        values = self.label_logits[sample_idx]
        values = torch.where(fresh & positive, values.new_tensor(logit(0.995)), values)
        values = torch.where(fresh & negative, values.new_tensor(logit(0.005)), values)
        self.label_logits[sample_idx] = values
        self.seen[sample_idx] = True

    def compute(
        self, logits: torch.Tensor, gt: torch.Tensor, reduction: str, sample_idx: torch.Tensor
    ) -> torch.Tensor:
        self.check_sample_idx(sample_idx, self.num_samples)
        self._initialise_observed(gt, sample_idx)
        return role_loss(
            logits,
            self.label_logits[sample_idx],
            gt,
            self.expected_positives,
            self.observed_negatives,
        )
