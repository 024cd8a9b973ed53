"""SCL's crop / flip geometry end to end, on the MultiDigits SCL config as a user runs it.

The chain under test: the config's train pipeline (square ``Resize`` to 48, then
``RandomResizedCropWithBox`` to 32, then ``RandomFlip``, then ``PackInputs``) records a crop box
in ``ori_shape`` pixels; :func:`~mlkd.models.algorithms.base.crop_geometry` normalises it by
``ori_shape``; :func:`crop_grid` / :func:`heatmap_cell_grid` place the class-map cells and the
heatmap cells in the full image; :func:`write_heatmaps` / :func:`read_heatmaps` move maps between
the crop and the store. Every test compares with positions or maps computed independently.
"""

import numpy as np
import pytest
import torch
from conftest import config_path
from mmcv.transforms import Compose
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd  # noqa: F401  (registers the transforms)
from mlkd.models.algorithms.base import crop_geometry
from mlkd.models.losses.single_positive.spatial_consistency import (
    crop_grid,
    read_heatmaps,
    write_heatmaps,
)

SIZE = 32  # MultiDigits image side (ori_shape) and the crop's output side
FEATURES = 4  # the CIFAR ResNet-18 student's last feature map: 32 / 8
HEATMAP = 2 * FEATURES  # SCL's store: 2x the feature map
QUANTUM = 0.5 / 255  # uint8 rounding of one write


@pytest.fixture(scope='module')
def pipeline():
    cfg = Config.fromfile(config_path('spml', 'scl_multidigits.py'))
    steps = [t['type'] for t in cfg.train_dataloader.dataset.pipeline]
    assert steps == ['Resize', 'RandomResizedCropWithBox', 'RandomFlip', 'PackInputs']
    with DefaultScope.overwrite_default_scope('mlkd'):
        return Compose(cfg.train_dataloader.dataset.pipeline)


def _coordinate_image():
    """Float 32x32 image: channel 0 the normalised x of each pixel centre, channel 1 its y."""
    centres = (np.arange(SIZE, dtype=np.float32) + 0.5) / SIZE
    xs, ys = np.meshgrid(centres, centres)
    return np.stack([xs, ys, np.zeros_like(xs)], axis=2)


def _packed(pipeline, seed):
    """One training sample of the coordinate image as the model receives it."""
    np.random.seed(seed)
    packed = pipeline(
        dict(img=_coordinate_image(), img_shape=(SIZE, SIZE), ori_shape=(SIZE, SIZE), sample_idx=0)
    )
    box, flip = crop_geometry([packed['data_samples']], torch.device('cpu'))
    return packed['inputs'].float(), box, flip


def test_the_box_normalised_by_ori_shape_points_at_the_pixels_the_network_sees(pipeline):
    """The crop box passes through the 1.5x square resize: recorded in 32-pixel (ori_shape)
    units and normalised by ori_shape = (32, 32), it must give, for each input pixel, the
    normalised position of the image content there. A box left in the 48-pixel frame (or
    normalised by the resized shape) would be off by up to a third of the image."""
    flips = set()
    for seed in range(40):
        inputs, box, flip = _packed(pipeline, seed)
        flips.add(bool(flip))
        assert inputs.shape == (3, SIZE, SIZE)
        expected = (crop_grid(box, flip, (SIZE, SIZE))[0] + 1) / 2  # [h, w, (x, y)]
        # Two bilinear resizes of a linear ramp are exact away from the image border, where
        # the resize clamps; the crop keeps at least half the side, so rows / columns 3..28 of
        # the output lie at least 1.5 source pixels inside.
        inner = slice(3, SIZE - 3)
        for channel in (0, 1):
            seen = inputs[channel, inner, inner]
            torch.testing.assert_close(seen, expected[inner, inner, channel], atol=2e-3, rtol=0)
    assert flips == {False, True}


def test_crop_box_is_refused_without_ori_shape():
    from mmpretrain.structures import DataSample

    sample = DataSample(metainfo=dict(crop_box=np.array([0, 0, 8, 8], np.float32)))
    with pytest.raises(KeyError, match='ori_shape'):
        crop_geometry([sample], torch.device('cpu'))


def _linear_map(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A known activation map of the full image, probabilities in [0.1, 0.9]."""
    return 0.1 + 0.5 * x + 0.3 * y


SLOPE = (0.5, 0.3)  # |∂m/∂x|, |∂m/∂y| of _linear_map


def _ideal_class_maps(box, flip):
    """What a perfectly consistent network outputs on the crop: the map at its cell centres."""
    grid = (crop_grid(box, flip, (FEATURES, FEATURES)) + 1) / 2
    return _linear_map(grid[..., 0], grid[..., 1])[:, None]  # [B, 1, h, w]


def _clamp_distance(box, size):
    """For each heatmap cell, how far (normalised units, per axis) its centre lies beyond the
    outermost class-map cell centres of the crop: there the write clamps (border padding)
    instead of interpolating, so a linear map is off by at most slope x distance."""
    centres = (torch.arange(size, dtype=torch.float32) + 0.5) / size
    x1, y1, x2, y2 = box[0]
    half_x, half_y = (x2 - x1) / (2 * FEATURES), (y2 - y1) / (2 * FEATURES)
    dx = torch.clamp(x1 + half_x - centres, min=0) + torch.clamp(centres - (x2 - half_x), min=0)
    dy = torch.clamp(y1 + half_y - centres, min=0) + torch.clamp(centres - (y2 - half_y), min=0)
    return dx[None, :].expand(size, size), dy[:, None].expand(size, size)


def test_a_known_map_written_under_a_crop_and_flip_lands_where_it_belongs(pipeline):
    centres = (torch.arange(HEATMAP, dtype=torch.float32) + 0.5) / HEATMAP
    truth = _linear_map(centres[None, :], centres[:, None])  # [H, W] store frame
    for seed in range(40):
        _, box, flip = _packed(pipeline, seed)
        store, known = write_heatmaps(
            torch.zeros(1, 1, HEATMAP, HEATMAP, dtype=torch.uint8),
            torch.zeros(1, HEATMAP, HEATMAP, dtype=torch.bool),
            _ideal_class_maps(box, flip),
            box,
            flip,
            momentum=0.0,
        )
        written = known[0]
        dx, dy = _clamp_distance(box, HEATMAP)
        bound = QUANTUM + 1e-5 + SLOPE[0] * dx + SLOPE[1] * dy
        error = (store[0, 0].float() / 255 - truth).abs()
        assert written.any() and (error[written] <= bound[written]).all(), seed
        # Interior cells interpolate exactly: only the uint8 rounding remains.
        exact = written & (dx == 0) & (dy == 0)
        assert (error[exact] <= QUANTUM + 1e-5).all()
        # Cells outside the crop stay unwritten.
        assert (store[0, 0][~written] == 0).all()


def test_a_map_written_through_many_crops_reads_back_under_the_same_and_other_crops(pipeline):
    """Fill the store from 30 random crops + flips of the training pipeline (EMA momentum 0.5),
    then read it back under the same and other crops: each read must reproduce the known map at
    the class-map cells, up to the write bound above (the EMA averages values that all lie
    within it), one more uint8 rounding and the read's own border clamp."""
    store = torch.zeros(1, 1, HEATMAP, HEATMAP, dtype=torch.uint8)
    known = torch.zeros(1, HEATMAP, HEATMAP, dtype=torch.bool)
    crops = [_packed(pipeline, seed)[1:] for seed in range(30)]
    worst_write = 0.0
    for box, flip in crops:
        store, known = write_heatmaps(
            store, known, _ideal_class_maps(box, flip), box, flip, momentum=0.5
        )
        dx, dy = _clamp_distance(box, HEATMAP)
        worst_write = max(worst_write, float((SLOPE[0] * dx + SLOPE[1] * dy).max()))
    assert known.all()  # 30 crops of 25-100 % of the area cover the 8 x 8 store
    for box, flip in crops[:5] + [_packed(pipeline, seed)[1:] for seed in range(100, 110)]:
        read, read_known = read_heatmaps(store, known, box, flip, (FEATURES, FEATURES))
        assert read_known.all()
        # The read samples the store bilinearly at the class-map centres; near the store's
        # border it clamps to the outermost cell centres (half a store cell away at most).
        grid = (crop_grid(box, flip, (FEATURES, FEATURES))[0] + 1) / 2
        half_cell = 0.5 / HEATMAP
        over_x = torch.clamp(half_cell - grid[..., 0], min=0) + torch.clamp(
            grid[..., 0] - (1 - half_cell), min=0
        )
        over_y = torch.clamp(half_cell - grid[..., 1], min=0) + torch.clamp(
            grid[..., 1] - (1 - half_cell), min=0
        )
        bound = worst_write + 2 * QUANTUM + 1e-5 + SLOPE[0] * over_x + SLOPE[1] * over_y
        error = (read[0, 0] - _ideal_class_maps(box, flip)[0, 0]).abs()
        assert (error <= bound).all(), (error.max(), bound.min())


def test_a_digit_bump_stays_in_its_quadrant_through_crops_and_flips(pipeline):
    """A class present only in the top-left quadrant (as a digit in cell 0 of a 2 x 2 mosaic):
    written through flipped and unflipped crops, the store is high there and low in the other
    three quadrants; a left-right mirror error would move it to the top-right."""

    def bump(x, y):
        return torch.where((x < 0.5) & (y < 0.5), 0.9, 0.1)

    store = torch.zeros(1, 1, HEATMAP, HEATMAP, dtype=torch.uint8)
    known = torch.zeros(1, HEATMAP, HEATMAP, dtype=torch.bool)
    for seed in range(30):
        _, box, flip = _packed(pipeline, seed)
        grid = (crop_grid(box, flip, (FEATURES, FEATURES)) + 1) / 2
        maps = bump(grid[..., 0], grid[..., 1])[:, None]
        store, known = write_heatmaps(store, known, maps, box, flip, momentum=0.5)
    values = store[0, 0].float() / 255
    half = HEATMAP // 2
    # Cells one store cell away from the quadrant edge are never interpolated across it.
    inner = slice(0, half - 1)
    assert values[inner, inner].min() > 0.8
    for rows, cols in (
        (slice(0, half - 1), slice(half + 1, None)),
        (slice(half + 1, None), slice(0, half - 1)),
        (slice(half + 1, None), slice(half + 1, None)),
    ):
        assert values[rows, cols].max() < 0.2
