"""One reproducible call of every registered mlkd loss, for tests that cover them all.

``CASES[name] = (constructor kwargs, inputs(seed) -> (args, kwargs))``. The inputs are built from a
seeded generator, so a case gives the same tensors in every process and on every version of the
code (task losses: ``(logits, gt)`` positionally; every other input by name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

B, C = 6, 5
Case = tuple[dict[str, Any], Callable[[int], tuple[tuple, dict]]]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _logits(g, *shape, scale=2.0):
    return torch.randn(*shape, generator=g) * scale


def multi_label(g, unobserved=False):
    """``[B, C]`` targets 1 / 0 (and -1 where ``unobserved``), at least one positive per row."""
    gt = (torch.rand(B, C, generator=g) > 0.6).float()
    gt[torch.arange(B), torch.randint(C, (B,), generator=g)] = 1.0
    if unobserved:
        gt[(torch.rand(B, C, generator=g) > 0.7) & (gt == 0)] = -1.0
    return gt


def one_hot(g):
    return torch.eye(C)[torch.randint(C, (B,), generator=g)]


def task(unobserved=False):
    def make(seed):
        g = _gen(seed)
        return (_logits(g, B, C), multi_label(g, unobserved)), {}

    return make


def task_with_index():
    def make(seed):
        g = _gen(seed)
        return (_logits(g, B, C), multi_label(g)), dict(sample_idx=torch.tensor([3, 0, 7, 1, 9, 4]))

    return make


def logits_pair(with_gt=None):
    def make(seed):
        g = _gen(seed)
        named = dict(s_logits=_logits(g, B, C), t_logits=_logits(g, B, C))
        if with_gt == 'multi':
            named['gt'] = multi_label(g)
        elif with_gt == 'single':
            named['gt'] = one_hot(g)
        return (), named

    return make


def label_embeddings():
    def make(seed):
        g = _gen(seed)
        return (), dict(
            s_label_emb=torch.randn(B, C, 8, generator=g),
            t_label_emb=torch.randn(B, C, 12, generator=g),
            gt=multi_label(g),
        )

    return make


def stage_maps(channels=(4, 6), sizes=(8, 4), teacher_channels=None):
    teacher_channels = teacher_channels or channels

    def make(seed):
        g = _gen(seed)
        return (), dict(
            s_feats=[torch.randn(B, c, s, s, generator=g) for c, s in zip(channels, sizes)],
            t_feats=[torch.randn(B, c, s, s, generator=g) for c, s in zip(teacher_channels, sizes)],
        )

    return make


def pooled(dim_s=8, dim_t=8, with_index=False):
    def make(seed):
        g = _gen(seed)
        named = dict(
            s_pooled=torch.nn.functional.normalize(torch.randn(B, dim_s, generator=g)),
            t_pooled=torch.nn.functional.normalize(torch.randn(B, dim_t, generator=g)),
        )
        if with_index:
            named['sample_idx'] = torch.tensor([3, 0, 7, 1, 9, 4])
        return (), named

    return make


def consistency():
    def make(seed):
        g = _gen(seed)
        return (), dict(logits=_logits(g, B, C), sample_idx=torch.tensor([3, 0, 7, 1, 9, 4]))

    return make


def spatial_consistency():
    def make(seed):
        g = _gen(seed)
        x1y1 = torch.rand(B, 2, generator=g) * 0.4
        box = torch.cat([x1y1, x1y1 + 0.5 + torch.rand(B, 2, generator=g) * 0.1], dim=1)
        return (), dict(
            class_maps=_logits(g, B, C, 4, 4),
            sample_idx=torch.tensor([3, 0, 7, 1, 9, 4]),
            crop_box=box,
            flip=torch.rand(B, generator=g) > 0.5,
        )

    return make


def two_views():
    def make(seed):
        g = _gen(seed)
        return (), dict(
            anchor=torch.randn(B, 8, generator=g),
            positive=torch.randn(B, 8, generator=g),
            logits=_logits(g, B, C),
            gt=one_hot(g),
        )

    return make


CASES: dict[str, Case] = {
    # task losses
    'BinaryCrossEntropySumLoss': ({}, task(True)),
    'AsymmetricMultiLabelLoss': ({}, task(True)),
    'AsymmetricFocalLoss': ({}, task(True)),
    'SigmoidFocalLoss': ({}, task(True)),
    'HillLoss': ({}, task(True)),
    'SPLCLoss': ({}, task(True)),
    'FocalMarginLoss': ({}, task(True)),
    'TwoWayMultiLabelLoss': ({}, task(True)),
    'WARPLoss': ({}, task(True)),
    'RobustMultiLabelLoss': ({}, task(True)),
    'MultiLabelSoftmaxLoss': ({}, task(True)),
    'UnobservedAsNegative': (dict(loss=dict(type='HillLoss')), task(True)),
    'AssumeNegativeLoss': (dict(label_smoothing=0.1), task(True)),
    'WeakAssumeNegativeLoss': (dict(num_classes=C), task(True)),
    'ExpectedPositivesLoss': (dict(expected_positives=1.5), task(True)),
    'EntropyMaximisationLoss': (dict(alpha=0.2), task(True)),
    'ExpectedNegativeLoss': (
        dict(num_samples=10, num_classes=C, expected_positives=1.5),
        task_with_index(),
    ),
    'ROLELoss': (dict(num_samples=10, num_classes=C, expected_positives=1.5), task_with_index()),
    # logit distillation
    'MultiLabelKDLoss': ({}, logits_pair()),
    'SoftmaxKDLoss': ({}, logits_pair()),
    'MultiLabelLogitDistillLoss': ({}, logits_pair()),
    'MSEDistillLoss': ({}, logits_pair()),
    'DKDLoss': (dict(warmup_epochs=0), logits_pair('single')),
    'MLLDLoss': ({}, logits_pair()),
    'PartialSoftmaxLoss': ({}, logits_pair('multi')),
    'PositiveDivideLoss': ({}, logits_pair('multi')),
    'NegativeDiscrepancyLoss': ({}, logits_pair('multi')),
    'MultiOrderDependencyLoss': (dict(teacher_ema=0.9, num_classes=C), logits_pair('multi')),
    'ClassAwareDistillLoss': ({}, label_embeddings()),
    'InstanceAwareDistillLoss': ({}, label_embeddings()),
    'LabelEmbeddingDistillLoss': ({}, label_embeddings()),
    # feature and relation distillation
    'ATLoss': ({}, stage_maps(teacher_channels=(8, 10))),
    'FitNetLoss': ({}, stage_maps()),
    'ReviewKDLoss': (dict(warmup_epochs=0), stage_maps()),
    'VIDLoss': (dict(num_channels=[4, 6]), stage_maps()),
    'OFDLoss': (
        dict(margins=[[-0.5, 0.1, -1.0, 0.3], [0.0, -0.2, -0.4, 0.2, -0.1, 0.5]]),
        stage_maps(),
    ),
    'RKDLoss': ({}, pooled(8, 12)),
    'PKTLoss': ({}, pooled(8, 12)),
    'CRDLoss': (dict(num_samples=10, embed_dim=8, num_negatives=4), pooled(with_index=True)),
    # contrastive terms for training a network
    'IntraClassContrastiveLoss': (
        dict(num_classes=C, margin_threshold=-1.0, queue_size=None),
        two_views(),
    ),
    # consistency (single positive)
    'ConsistencyLoss': (dict(num_samples=10, num_classes=C), consistency()),
    'SpatialConsistencyLoss': (
        dict(num_samples=10, num_classes=C, heatmap_size=6),
        spatial_consistency(),
    ),
}

#: Losses that keep state: each case is called twice (the second value depends on the state).
STATEFUL = (
    'IntraClassContrastiveLoss',
    'ExpectedNegativeLoss',
    'ROLELoss',
    'MultiOrderDependencyLoss',
    'CRDLoss',
    'ConsistencyLoss',
    'SpatialConsistencyLoss',
)


def build(name: str, **overrides):
    """The registered loss ``name`` built with its case's arguments (and ``overrides``)."""
    import mlkd.models  # noqa: F401  (registers the losses)
    from mlkd.registry import MODELS

    kwargs, _ = CASES[name]
    return MODELS.build(dict(type=name, **kwargs, **overrides))
