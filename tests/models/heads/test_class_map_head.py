"""Tests of ClassMapHead: per-position linear class maps, pooled per class."""

import math

import pytest
import torch
from conftest import build_model
from mmpretrain.structures import DataSample

from mlkd.models.heads import ClassMapHead, pool_class_maps

C, F_IN = 5, 8


def _maps_by_loop(head, x):
    """The maps written position by position: the linear layer on each feature vector."""
    b, _, h, w = x.shape
    out = torch.empty(b, C, h, w)
    for i in range(h):
        for j in range(w):
            out[:, :, i, j] = x[:, :, i, j] @ head.fc.weight.T + head.fc.bias
    return out


def test_class_maps_are_the_linear_layer_at_every_position():
    head = ClassMapHead(C, F_IN)
    x = torch.randn(2, F_IN, 3, 4)
    maps = head.class_maps((torch.randn(2, 3), x))  # only the last stage is read
    torch.testing.assert_close(maps, _maps_by_loop(head, x))


def test_avg_pooling_equals_global_average_pooling_then_linear():
    head = ClassMapHead(C, F_IN, pooling='avg')
    x = torch.randn(2, F_IN, 3, 4)
    torch.testing.assert_close(head((x,)), head.fc(x.mean((2, 3))), rtol=1e-5, atol=1e-6)


def test_max_and_lse_pooling_by_hand():
    maps = torch.tensor([[[[0.0, 1.0], [2.0, -1.0]]]], dtype=torch.float64)  # [1, 1, 2, 2]
    assert pool_class_maps(maps, 'max').item() == 2.0
    assert pool_class_maps(maps, 'avg').item() == 0.5
    r = 2.0  # (1/r) log((1 + e^2 + e^4 + e^-2) / 4)
    expected = math.log((1 + math.e**2 + math.e**4 + math.e**-2) / 4) / r
    assert pool_class_maps(maps, 'lse', r).item() == pytest.approx(expected, rel=1e-12)
    # sharp LSE tends to the maximum (within log(4) / r), flat LSE to the mean (float64: the
    # limit, not rounding, is what is measured)
    assert pool_class_maps(maps, 'lse', 1e3).item() == pytest.approx(2.0, abs=math.log(4) / 1e3)
    assert pool_class_maps(maps, 'lse', 1e-4).item() == pytest.approx(0.5, abs=1e-4)


def test_max_pooling_scores_each_class_at_its_own_position():
    head = ClassMapHead(C, F_IN, pooling='max')
    x = torch.randn(2, F_IN, 3, 3)
    maps = _maps_by_loop(head, x)
    torch.testing.assert_close(head((x,)), maps.flatten(2).amax(2))


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(pooling='gem'), 'pooling'),
        (dict(pooling='lse', lse_sharpness=0.0), 'lse_sharpness'),
        (dict(pooling='lse', lse_sharpness=math.inf), 'lse_sharpness'),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ClassMapHead(C, F_IN, **kwargs)


def test_pooled_input_is_refused_naming_the_shape():
    with pytest.raises(ValueError, match=r'neck=None.*\(2, 8\)'):
        ClassMapHead(C, F_IN)((torch.randn(2, F_IN),))


def test_trains_and_predicts_in_an_image_classifier():
    model = build_model(
        dict(
            type='ImageClassifier',
            backbone=dict(
                type='ResNet_CIFAR', depth=18, stem_channels=8, base_channels=8, out_indices=(3,)
            ),
            neck=None,
            head=dict(type='ClassMapHead', num_classes=C, in_channels=64, pooling='max'),
        )
    )
    x = torch.randn(2, 3, 32, 32)
    samples = [DataSample().set_gt_score(torch.tensor([1.0, 0, 1, 0, 0])) for _ in range(2)]
    losses = model(x, samples, mode='loss')
    losses['loss'].backward()
    assert model.head.fc.weight.grad is not None and model.head.fc.weight.grad.abs().sum() > 0
    model.eval()
    predictions = model(x, [DataSample() for _ in range(2)], mode='predict')
    assert predictions[0].pred_score.shape == (C,)


def test_the_default_loss_skips_ignored_labels():
    """The data preprocessor writes -1 for an ignored label: the default loss (BCE summed over the
    valid entries) leaves it out; mmpretrain's sigmoid cross-entropy fell without bound on it."""
    head = ClassMapHead(num_classes=3, in_channels=2)
    gt = torch.tensor([[1.0, -1.0, 0.0]])
    values = [
        head.loss_module(torch.tensor([[2.0, logit, -1.0]]), gt) for logit in (-1.0, -10.0, -100.0)
    ]
    assert values[0] == values[1] == values[2] and values[0] > 0
