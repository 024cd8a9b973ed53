"""weight_reference: paper weights rescaled so that weighted term / task loss keeps its value."""

import pytest
import torch

from mlkd.models.losses import (
    BinaryCrossEntropySumLoss,
    ClassAwareDistillLoss,
    InstanceAwareDistillLoss,
    LabelEmbeddingDistillLoss,
    MultiLabelLogitDistillLoss,
    NegativeDiscrepancyLoss,
    PositiveDivideLoss,
)
from mlkd.models.losses.weight_reference import PAPER_REFERENCE

LOGIT_LOSSES = (MultiLabelLogitDistillLoss, PositiveDivideLoss, NegativeDiscrepancyLoss)
EMB_LOSSES = (ClassAwareDistillLoss, InstanceAwareDistillLoss, LabelEmbeddingDistillLoss)


def _batch(batch_size=8, num_classes=5, dim=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    gt = (torch.rand(batch_size, num_classes, generator=g) < 0.5).float()
    gt[:, 0] = 1.0  # every sample has a positive
    s = torch.randn(batch_size, num_classes, generator=g)
    t = torch.randn(batch_size, num_classes, generator=g) * 3
    se = torch.randn(batch_size, num_classes, dim, generator=g)
    te = torch.randn(batch_size, num_classes, dim, generator=g)
    return s, t, gt, se, te


def _value(loss, s, t, gt, se, te):
    if isinstance(loss, LOGIT_LOSSES):
        args = (s, t) if isinstance(loss, MultiLabelLogitDistillLoss) else (s, t, gt)
        return loss(*args)
    out = loss(se, te, gt)
    return sum(out.values()) if isinstance(out, dict) else out


# Hand-computed factors: MultiDigits (B 64, C 10) and a half batch (B 32, C 10) against the paper's
# B 64, C 80, both with a BCE-sum task loss.
@pytest.mark.parametrize(
    'loss_cls, at_64_10, at_32_10',
    [
        (MultiLabelLogitDistillLoss, 1.0, 0.5),  # ∝ C / B like the task loss per sample
        (PositiveDivideLoss, 1 / 8, 1 / 16),
        (NegativeDiscrepancyLoss, 1 / 8, 1 / 16),
        (ClassAwareDistillLoss, 1 / 8, 1 / 8),  # ∝ B like the task loss
        (InstanceAwareDistillLoss, 1 / 8, 1 / 8),
        (LabelEmbeddingDistillLoss, 1 / 8, 1 / 8),
    ],
)
def test_reference_scale_by_hand(loss_cls, at_64_10, at_32_10):
    loss = loss_cls(weight_reference=PAPER_REFERENCE)
    assert loss.reference_scale(64, 10) == pytest.approx(at_64_10)
    assert loss.reference_scale(32, 10) == pytest.approx(at_32_10)
    assert loss.reference_scale(64, 80) == pytest.approx(1.0)
    assert loss_cls().reference_scale(32, 10) == 1.0  # default: literal weights


@pytest.mark.parametrize('loss_cls', LOGIT_LOSSES + EMB_LOSSES)
def test_forward_applies_the_factor_to_the_literal_loss(loss_cls):
    batch = _batch()
    literal = _value(loss_cls(loss_weight=3.0), *batch)
    scaled = _value(
        loss_cls(loss_weight=3.0, weight_reference=dict(batch_size=4, num_classes=20)), *batch
    )
    factor = loss_cls(weight_reference=dict(batch_size=4, num_classes=20)).reference_scale(8, 5)
    assert factor != 1.0
    torch.testing.assert_close(scaled, literal * factor)


def _ratio(loss, batch):
    s, t, gt, se, te = batch
    return float(_value(loss, *batch) / BinaryCrossEntropySumLoss()(s, gt))


@pytest.mark.parametrize(
    'loss_cls', [MultiLabelLogitDistillLoss, PositiveDivideLoss, InstanceAwareDistillLoss]
)
def test_ratio_to_the_bce_sum_is_kept_when_the_batch_is_repeated(loss_cls):
    """Repeating every sample twice changes nothing per entry, so the ratio must not move."""
    batch = _batch()
    twice = tuple(torch.cat([x, x]) for x in batch)
    loss = loss_cls(loss_weight=10.0, weight_reference=dict(batch_size=8, num_classes=5))
    assert loss.reference_scale(8, 5) == pytest.approx(1.0)
    assert _ratio(loss, twice) == pytest.approx(_ratio(loss, batch), rel=1e-5)
    # Literal weights do drift for the terms that do not grow like the task loss.
    if loss_cls is not InstanceAwareDistillLoss:
        assert _ratio(loss_cls(loss_weight=10.0), twice) == pytest.approx(
            _ratio(loss_cls(loss_weight=10.0), batch) / 2, rel=1e-5
        )


def test_mld_ratio_is_kept_when_the_classes_are_repeated():
    batch = _batch()
    wide = tuple(torch.cat([x, x], dim=1) for x in batch)
    loss = MultiLabelLogitDistillLoss(weight_reference=dict(batch_size=8, num_classes=5))
    assert _ratio(loss, wide) == pytest.approx(_ratio(loss, batch), rel=1e-5)


def test_mean_task_reduction_keeps_the_ratio_of_the_sum_setting():
    s, t, gt, se, te = batch = _batch()
    ref = dict(batch_size=8, num_classes=5)
    literal_vs_sum = _ratio(PositiveDivideLoss(loss_weight=100.0), batch)
    mean_task = BinaryCrossEntropySumLoss(reduction='mean')(s, gt)
    scaled = PositiveDivideLoss(
        loss_weight=100.0, weight_reference=dict(ref, task_reduction='mean')
    )(s, t, gt)
    assert float(scaled / mean_task) == pytest.approx(literal_vs_sum, rel=1e-5)


@pytest.mark.parametrize(
    'bad, match',
    [
        (dict(batch_size=64), 'weight_reference must be'),
        (dict(batch_size=64, num_classes=80, extra=1), 'weight_reference must be'),
        (dict(batch_size=0, num_classes=80), 'batch_size must be a positive int'),
        (dict(batch_size=64, num_classes=80, task_reduction='avg'), 'task_reduction'),
    ],
)
def test_bad_reference_is_named(bad, match):
    with pytest.raises(ValueError, match=match):
        PositiveDivideLoss(weight_reference=bad)
