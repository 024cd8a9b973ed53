"""Helpers shared by several test modules (independent reference computations)."""
from __future__ import annotations

import math

import torch


def loop_class_distance_statistics(embeddings: torch.Tensor,
                                   labels: torch.Tensor) -> dict[str, float]:
    """The definitions of :mod:`mlkd.evaluation.class_distances` written out as loops over
    samples: per anchor, the mean over its partners (other samples of its class, or samples of
    other classes); then the mean over the anchors that have partners."""
    unit = [e / math.sqrt(sum(float(v) ** 2 for v in e)) for e in embeddings.double()]
    labels = [int(v) for v in labels]
    per_anchor = {'intra_distance': [], 'inter_distance': [], 'd_intra': [], 'd_inter': []}
    for i, anchor in enumerate(unit):
        same = [j for j in range(len(unit)) if j != i and labels[j] == labels[i]]
        other = [j for j in range(len(unit)) if labels[j] != labels[i]]
        for partners, distance_key, d_key in ((same, 'intra_distance', 'd_intra'),
                                              (other, 'inter_distance', 'd_inter')):
            if not partners:
                continue
            dots = [float((anchor * unit[j]).sum()) for j in partners]
            distances = [float((anchor - unit[j]).norm()) for j in partners]
            per_anchor[distance_key].append(sum(distances) / len(partners))
            per_anchor[d_key].append(sum(math.exp(d) for d in dots) / len(partners))
    out = {k: (sum(v) / len(v) if v else math.nan) for k, v in per_anchor.items()}
    out['intra_anchors'] = len(per_anchor['d_intra'])
    out['inter_anchors'] = len(per_anchor['d_inter'])
    return out
