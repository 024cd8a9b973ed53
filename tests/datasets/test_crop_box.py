"""RandomResizedCropWithBox: the recorded box maps crop pixels back to the source pixels."""

import numpy as np
import pytest
from mmcv.transforms import Compose

import mlkd  # noqa: F401  (registers the transforms)
from mlkd.registry import TRANSFORMS

H, W = 90, 120  # a non-square source: the square resize must be undone per axis


def _gradient_image():
    """Float image whose channel 0 is the column and channel 1 the row of each pixel."""
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float32)
    return np.stack([xs, ys, np.zeros_like(xs)], axis=2)


def _pipeline(flip_prob):
    return Compose(
        [
            TRANSFORMS.build(t)
            for t in (
                dict(type='Resize', scale=(60, 60)),
                dict(
                    type='RandomResizedCropWithBox',
                    scale=40,
                    crop_ratio_range=(0.25, 1.0),
                    aspect_ratio_range=(1.0, 1.0),
                ),
                dict(type='RandomFlip', prob=flip_prob, direction='horizontal'),
            )
        ]
    )


@pytest.mark.parametrize('flip_prob', [0.0, 1.0])
def test_box_maps_crop_pixels_to_source_pixels(flip_prob):
    np.random.seed(3)
    for _ in range(5):
        out = _pipeline(flip_prob)(dict(img=_gradient_image(), ori_shape=(H, W)))
        x1, y1, x2, y2 = out['crop_box']
        assert 0 <= x1 < x2 <= W and 0 <= y1 < y2 <= H
        assert out['flip'] is bool(flip_prob)
        size = out['img'].shape[0]
        j = np.arange(size, dtype=np.float32)
        cols = x1 + (j + 0.5) * (x2 - x1) / size - 0.5  # source column of output column j
        rows = y1 + (j + 0.5) * (y2 - y1) / size - 0.5
        if out['flip']:
            cols = cols[::-1]
        # interior pixels (bilinear resizes of a linear ramp are exact away from the borders)
        inner = slice(3, size - 3)
        np.testing.assert_allclose(
            out['img'][inner, inner, 0],
            np.broadcast_to(cols[inner][None], (size - 6, size - 6)),
            atol=0.05,
        )
        np.testing.assert_allclose(
            out['img'][inner, inner, 1],
            np.broadcast_to(rows[inner][:, None], (size - 6, size - 6)),
            atol=0.05,
        )


def test_box_is_square_in_the_resized_frame_and_covers_the_area_range():
    np.random.seed(0)
    pipeline = _pipeline(0.5)
    areas = []
    for _ in range(200):
        out = pipeline(dict(img=_gradient_image(), ori_shape=(H, W)))
        x1, y1, x2, y2 = out['crop_box']
        w60, h60 = (x2 - x1) * 60 / W, (y2 - y1) * 60 / H  # the box in the 60x60 frame
        assert abs(w60 - h60) < 1e-3
        areas.append(w60 * h60 / 3600)
    assert 0.24 < min(areas) < 0.35 and max(areas) > 0.9


def test_missing_ori_shape_is_named():
    crop = TRANSFORMS.build(dict(type='RandomResizedCropWithBox', scale=8))
    with pytest.raises(KeyError, match='ori_shape'):
        crop(dict(img=np.zeros((10, 10, 3), np.uint8)))


def test_the_448_recipe_config_packs_the_crop_for_the_model(tmp_path):
    from conftest import config_path, write_jpeg
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    cfg = Config.fromfile(config_path('_base_', 'datasets', 'spml_pipeline.py'))
    write_jpeg(tmp_path / 'a.jpg', size=(640, 480))
    with DefaultScope.overwrite_default_scope('mlkd'):
        train, test = Compose(cfg.train_pipeline), Compose(cfg.test_pipeline)
    np.random.seed(1)
    packed = train(dict(img_path=str(tmp_path / 'a.jpg'), sample_idx=0))
    assert tuple(packed['inputs'].shape) == (3, 448, 448)
    meta = packed['data_samples'].metainfo
    x1, y1, x2, y2 = meta['crop_box']
    assert meta['ori_shape'] == (480, 640) and 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480
    assert (x2 - x1) / 640 == pytest.approx((y2 - y1) / 480, abs=0.01)  # square at 672x672
    assert isinstance(meta['flip'], bool)
    assert tuple(test(dict(img_path=str(tmp_path / 'a.jpg')))['inputs'].shape) == (3, 448, 448)
