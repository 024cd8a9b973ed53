"""Softmax cross-entropy with the target spread uniformly over the positives ("Softmax").

The "Softmax" baseline of the Two-way paper (Kobayashi, "Two-way Multi-Label Loss", CVPR 2023:
supplement Table C on NUS-WIDE, and the official README's MS-COCO row 58.00 / 83.60). The
supplement and the README only name it; the main paper's definition was not available to us, so
we take the standard multi-label softmax loss, in the form of Mahajan, Girshick, Ramanathan, He,
Paluri, Li, Bharambe, van der Maaten, "Exploring the Limits of Weakly Supervised Pretraining",
ECCV 2018 (multi-label hashtag targets: each of the ``k`` positives gets ``1/k``, trained with
softmax cross-entropy) and of Gong, Jia, Leung, Toshev, Ioffe, "Deep Convolutional Ranking for
Multilabel Image Annotation", ICLR 2014 (their "softmax" loss, ground-truth probabilities
normalised over the image's labels). For a sample with positives ``P`` and labelled classes ``V``
(positives and negatives):

    ℓ = − Σ_{p∈P} (1/|P|) · log softmax_V(z)_p = LSE_{c∈V}(z_c) − mean_{p∈P} z_p

Ignored (``-1``) entries are left out of the softmax's normaliser as well; a sample without a
positive has no target distribution and counts nowhere. ``docs/methods.md`` §2.3.
"""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import label_masks, masked_logsumexp


def multilabel_softmax_loss(
    logits: torch.Tensor, gt: torch.Tensor, reduction: str = 'mean'
) -> torch.Tensor:
    """Softmax cross-entropy against the uniform distribution over each sample's positives.

    Args:
        logits: ``[B, C]``; gt: ``[B, C]`` 1 positive, 0 negative, -1 ignored.
        reduction: ``'mean'`` over the samples with a positive (the usual cross-entropy mean
            over the batch; 0 without any), ``'sum'`` over them, or ``'none'`` (``[B, C]``: each
            positive's ``−log softmax_V(z)_p / |P|``, 0 elsewhere; a row sums to its ``ℓ``).
    """
    pos, neg = label_masks(gt)
    log_partition = masked_logsumexp(logits, pos | neg, dim=1)  # [B]
    num_pos = pos.sum(1, keepdim=True)
    per_entry = (log_partition[:, None] - logits) * pos / num_pos.clamp(min=1)  # [B, C]
    if reduction == 'none':
        return per_entry
    total = per_entry.sum()
    if reduction == 'sum':
        return total
    if reduction == 'mean':
        return total / (num_pos > 0).sum().clamp(min=1)
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


@MODELS.register_module()
class MultiLabelSoftmaxLoss(TaskLoss):
    """Softmax cross-entropy over the positives as a task loss; see
    :func:`multilabel_softmax_loss`.

    Args:
        reduction: ``'mean'`` (default: over the samples with a positive), ``'sum'``,
            ``'none'``.
        loss_weight: factor applied to the loss.
    """

    reductions = ('mean', 'sum', 'none')

    def __init__(
        self, reduction: str = 'mean', scale_by_world_size: bool = True, loss_weight: float = 1.0
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return multilabel_softmax_loss(logits, gt, reduction)
