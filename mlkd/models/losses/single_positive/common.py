"""What the single-positive losses share: the reference's negative log, observation masks, k.

Papers / code: Cole et al., "Multi-Label Learning from Single Positive Labels", CVPR 2021
(``elijahcole/single-positive-multi-label``); Zhou et al., "Acknowledging the Unknown for
Multi-label Learning with Single Positive Labels", ECCV 2022 (``Correr-Zhou/SPML-AckTheUnknown``).
Formulas in ``docs/methods.md`` §3.1 and §3.4.

Labels. mlkd's target ``gt`` is 1 (positive), 0 (negative), -1 (ignored / unobserved). A
single-positive training set has no annotated negatives, so by default (``observed_negatives=False``)
every entry that is not a positive — 0 or -1 — is *unobserved*; this also covers datasets that
give the unobserved labels as plain zeros (MultiDigits ``single_positive``). With
``observed_negatives=True`` a 0 is an annotated negative (partial labels) and only -1 is unobserved.

Numerics as the reference code: ``p = σ(z)``, ``nl(u) = −log(u + 1e−5)``, a loss matrix ``M``
reduced as ``Σ M / (B·C)`` (the mean over **all** entries, observed or not: the task-loss reduction
``'mean'`` of these losses), a regulariser added without that division.
"""

from __future__ import annotations

import math

import torch

from ..base import TaskLoss

#: ε inside the reference's ``−log(u + ε)``.
LOG_EPSILON = 1e-5


def neg_log(u: torch.Tensor) -> torch.Tensor:
    """``−log(u + 1e−5)``, the reference's negative log (finite at ``u = 0``)."""
    return -torch.log(u + LOG_EPSILON)


def observation_masks(
    gt: torch.Tensor, observed_negatives: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(positive, negative, unobserved)`` bool ``[B, C]`` masks of a target (see module doc)."""
    positive = gt == 1
    if observed_negatives:
        return positive, gt == 0, gt < 0
    return positive, torch.zeros_like(positive), ~positive


def expected_positives_regulariser(probs: torch.Tensor, expected_positives: float) -> torch.Tensor:
    """EPR's ``R = (mean_i Σ_c p_ic − k)² / C²`` for ``[B, C]`` probabilities."""
    return (probs.sum(dim=1).mean() - expected_positives) ** 2 / probs.shape[1] ** 2


def check_expected_positives(value: float) -> float:
    value = float(value)
    if not value > 0:
        raise ValueError(f'expected_positives (k, positives per image) must be > 0, got {value}')
    return value


def logit(p: float) -> float:
    """The reference's ``log(p/(1−p))`` with ``p`` clipped to ``[1e−5, 1−1e−5]``."""
    p = min(max(p, 1e-5), 1 - 1e-5)
    return math.log(p / (1 - p))


class SinglePositiveTaskLoss(TaskLoss):
    """Base of the single-positive task losses: ``observed_negatives`` and the reference reduction.

    The only reduction is the references' ``'mean'``: ``Σ M / (B·C)`` over all entries.

    Args:
        observed_negatives: whether a 0 target is an annotated negative (module docstring).
        loss_weight: factor applied to the loss.
    """

    reductions = ('mean',)
    repr_fields = ('observed_negatives',)

    def __init__(self, observed_negatives: bool = False, loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight=loss_weight)
        self.observed_negatives = bool(observed_negatives)
