"""Intra- and inter-class spread of an embedding, and the entropy of soft labels.

The diagnostics of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
(anonymous ICLR submission, §4.2): for L2-normalised embeddings ``φ`` the paper defines

    d_Intra = E_{x⁻ ∈ C(x)} [exp(φ(x)ᵀφ(x⁻))],     d_Inter = E_{x⁻ ∉ C(x)} [exp(φ(x)ᵀφ(x⁻))]

(``C(x)``: the samples of ``x``'s class). Despite the name these grow as samples get *closer*
(``exp`` of a cosine similarity, in ``[1/e, e]``); the Euclidean distance ``‖φ(x) − φ(x⁻)‖`` of the
same normalised embeddings is reported next to them. Each expectation is read as: for every anchor
``x``, the mean over its partners ``x⁻`` (the other samples of its class, or the samples of the
other classes; ``x`` itself never), then the mean over the anchors that have at least one partner.
With equally many samples per class this equals the mean over all ordered pairs.

Everything is computed without loops over samples or classes: row blocks of the ``[N, N]``
similarity matrix (``chunk_size`` rows at a time, so memory stays ``chunk_size × N``) are reduced
to per-class sums by one matrix product with the one-hot label matrix.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ['class_distance_statistics', 'soft_label_entropy']


def class_distance_statistics(
    embeddings: Tensor, labels: Tensor, num_classes: int | None = None, chunk_size: int = 4096
) -> dict[str, float]:
    """Mean intra- / inter-class Euclidean distance and ``d_Intra`` / ``d_Inter`` of ``embeddings``.

    Args:
        embeddings: ``[N, D]``; L2-normalised here (a zero row raises).
        labels: ``[N]`` class indices in ``[0, num_classes)``.
        num_classes: number of classes (default: ``labels.max() + 1``).
        chunk_size: rows of the similarity matrix computed at once.

    Returns:
        ``intra_distance``, ``inter_distance`` (mean ``‖φ_i − φ_j‖``, in ``[0, 2]``) and their ratio
        ``distance_ratio``; ``d_intra``, ``d_inter`` (mean ``exp(φ_iᵀφ_j)``) and ``d_ratio``
        (``d_intra / d_inter``); ``intra_anchors`` / ``inter_anchors``, the numbers of anchors with
        at least one partner. A statistic without any anchor is ``nan``.

    Raises:
        ValueError: naming the shape or value at fault.
    """
    if embeddings.ndim != 2 or labels.shape != (embeddings.shape[0],):
        raise ValueError(
            f'expected embeddings [N, D] and labels [N], got {tuple(embeddings.shape)}'
            f' and {tuple(labels.shape)}'
        )
    if embeddings.shape[0] == 0:
        raise ValueError('class_distance_statistics needs at least one sample')
    if chunk_size < 1:
        raise ValueError(f'chunk_size must be >= 1, got {chunk_size}')
    labels = labels.long()
    num_classes = int(labels.max()) + 1 if num_classes is None else num_classes
    if int(labels.min()) < 0 or int(labels.max()) >= num_classes:
        raise ValueError(
            f'labels must lie in [0, {num_classes}), got [{int(labels.min())}, {int(labels.max())}]'
        )
    norms = embeddings.norm(dim=1)
    if not bool((norms > 0).all()):
        raise ValueError(
            f'{int((norms == 0).sum())} embeddings are all zeros; they have no '
            'direction to normalise'
        )
    # float64 throughout: a few thousand rows of exp() sums lose digits in float32.
    unit = F.normalize(embeddings.double(), dim=1)
    onehot = F.one_hot(labels, num_classes).double()  # [N, C]
    class_size = onehot.sum(0)  # [C]
    num = unit.shape[0]
    sums = {
        key: unit.new_zeros(())
        for key in ('intra_distance', 'inter_distance', 'd_intra', 'd_inter')
    }
    anchors = {'intra': 0, 'inter': 0}
    for start in range(0, num, chunk_size):
        rows = torch.arange(start, min(start + chunk_size, num))
        own = labels[rows]
        cosine = unit[rows] @ unit.T  # [b, N]
        pair_values = {
            'distance': (2 - 2 * cosine).clamp_min(0).sqrt(),
            'd': cosine.exp(),
        }
        same_count = class_size[own] - 1  # partners in the class
        other_count = num - class_size[own]
        has_same, has_other = same_count > 0, other_count > 0
        for name, values in pair_values.items():
            per_class = values @ onehot  # [b, C] sums per class
            own_class = per_class.gather(1, own[:, None]).squeeze(1)
            self_pair = values[torch.arange(len(rows)), rows]  # the anchor with itself
            same = (own_class - self_pair) / same_count.clamp_min(1)
            other = (values.sum(1) - own_class) / other_count.clamp_min(1)
            key_intra = 'intra_distance' if name == 'distance' else 'd_intra'
            key_inter = 'inter_distance' if name == 'distance' else 'd_inter'
            sums[key_intra] += same[has_same].sum()
            sums[key_inter] += other[has_other].sum()
        anchors['intra'] += int(has_same.sum())
        anchors['inter'] += int(has_other.sum())

    def mean(key: str, count: int) -> float:
        return float(sums[key]) / count if count else math.nan

    stats = dict(
        intra_distance=mean('intra_distance', anchors['intra']),
        inter_distance=mean('inter_distance', anchors['inter']),
        d_intra=mean('d_intra', anchors['intra']),
        d_inter=mean('d_inter', anchors['inter']),
    )
    stats['distance_ratio'] = _ratio(stats['intra_distance'], stats['inter_distance'])
    stats['d_ratio'] = _ratio(stats['d_intra'], stats['d_inter'])
    stats['intra_anchors'] = anchors['intra']
    stats['inter_anchors'] = anchors['inter']
    return stats


def _ratio(numerator: float, denominator: float) -> float:
    if math.isnan(numerator) or math.isnan(denominator) or denominator == 0:
        return math.nan
    return numerator / denominator


def soft_label_entropy(logits: Tensor, temperature: float = 1.0) -> Tensor:
    """Entropy (nats) of ``softmax(logits / temperature)`` per sample: ``[N, C] -> [N]``.

    Computed from ``log_softmax``, so saturated rows give 0, not ``nan``.
    """
    if logits.ndim != 2:
        raise ValueError(f'expected logits [N, C], got {tuple(logits.shape)}')
    if temperature <= 0:
        raise ValueError(f'temperature must be > 0, got {temperature}')
    log_p = F.log_softmax(logits.double() / temperature, dim=1)
    return -(log_p.exp() * log_p).sum(1)
