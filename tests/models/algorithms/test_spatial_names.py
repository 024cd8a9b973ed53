"""The names ClassifierWithLosses supplies for spatial single-positive losses: class maps, crops."""

import pytest
import torch
from conftest import build_model, config_path
from mmengine.config import Config
from mmpretrain.structures import DataSample

from mlkd.models.algorithms.base import crop_geometry


def test_class_maps_average_to_the_logits_and_feed_the_loss():
    cfg = Config.fromfile(config_path('spml', 'scl_multidigits.py'))
    model = build_model(cfg.model)
    model.eval()
    x = torch.randn(3, 3, 32, 32)
    feats = model.classifier.extract_feat(x)  # neck output: pooled features
    maps = model.class_maps(model.classifier.backbone(x))
    assert maps.shape == (3, 10, 4, 4)
    torch.testing.assert_close(
        maps.mean((2, 3)), model.classifier.head(feats), rtol=1e-5, atol=1e-5
    )
    assert 'feats' in model._recorded[('', '')]  # recorded because class_maps is read
    # one store row per training image, at 2x the probed 4x4 features
    num_train = cfg.train_dataloader.dataset.num_samples
    assert model.losses.scl.heatmaps.shape == (num_train, 10, 8, 8)


def test_class_maps_need_a_pooling_neck_and_a_linear_head():
    classifier = dict(
        type='ImageClassifier',
        backbone=dict(
            type='ResNet_CIFAR', depth=18, stem_channels=16, base_channels=16, out_indices=(3,)
        ),
        neck=dict(type='GeneralizedMeanPooling'),
        head=dict(type='MultiLabelLinearClsHead', num_classes=10, in_channels=128),
    )
    with pytest.raises(ValueError, match='GlobalAveragePooling'):
        build_model(
            dict(
                type='ClassifierWithLosses',
                classifier=classifier,
                probe_input_size=(32, 32),
                losses=dict(scl=dict(type='SpatialConsistencyLoss', num_samples=4)),
            )
        )


def _map_head_classifier(neck=None):
    return dict(
        type='ImageClassifier',
        backbone=dict(
            type='ResNet_CIFAR', depth=18, stem_channels=16, base_channels=16, out_indices=(3,)
        ),
        neck=neck,
        head=dict(type='ClassMapHead', num_classes=10, in_channels=128, pooling='max'),
    )


def test_class_maps_of_a_map_head_are_the_maps_it_pools():
    model = build_model(
        dict(
            type='ClassifierWithLosses',
            classifier=_map_head_classifier(),
            probe_input_size=(32, 32),
            losses=dict(scl=dict(type='SpatialConsistencyLoss', num_samples=4)),
        )
    )
    model.eval()
    x = torch.randn(3, 3, 32, 32)
    maps = model.class_maps(model.classifier.backbone(x))
    assert maps.shape == (3, 10, 4, 4)
    torch.testing.assert_close(maps.flatten(2).amax(2), model(x, mode='tensor'))


def test_a_map_head_behind_a_neck_is_refused():
    with pytest.raises(ValueError, match='neck=None'):
        build_model(
            dict(
                type='ClassifierWithLosses',
                classifier=_map_head_classifier(neck=dict(type='GlobalAveragePooling')),
                probe_input_size=(32, 32),
                losses=dict(scl=dict(type='SpatialConsistencyLoss', num_samples=4)),
            )
        )


def test_crop_geometry_normalises_by_the_original_size():
    cropped = DataSample(
        metainfo=dict(
            crop_box=[30.0, 10.0, 90.0, 70.0],
            ori_shape=(80, 120),
            flip=True,
            flip_direction='horizontal',
        )
    )
    plain = DataSample(metainfo=dict(ori_shape=(80, 120)))
    box, flip = crop_geometry([cropped, plain], torch.device('cpu'))
    torch.testing.assert_close(
        box, torch.tensor([[0.25, 0.125, 0.75, 0.875], [0.0, 0.0, 1.0, 1.0]])
    )
    assert flip.tolist() == [True, False]
    vertical = DataSample(metainfo=dict(flip=True, flip_direction='vertical'))
    with pytest.raises(ValueError, match='horizontal'):
        crop_geometry([vertical], torch.device('cpu'))
    with pytest.raises(KeyError, match='ori_shape'):
        crop_geometry([DataSample(metainfo=dict(crop_box=[0, 0, 1, 1]))], torch.device('cpu'))
