"""UDARandAugment: magnitude grids by hand, operations against numpy formulas, the policy's
sampling distribution, channel order and bad input."""

from collections import Counter

import numpy as np
import pytest
from PIL import Image

from mlkd.datasets.transforms import (
    UDA_OPERATIONS,
    UDARandAugment,
    apply_uda_operation,
    uda_magnitude,
)


def _image(h=24, w=32, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 7, yy * 9, (xx + yy) * 3], -1) + rng.integers(0, 30, (h, w, 3))
    return np.clip(base, 0, 255).astype(np.uint8)


def _apply(img, operation, magnitude):
    return np.asarray(apply_uda_operation(Image.fromarray(img), operation, magnitude))


def test_magnitude_grids_by_hand():
    assert uda_magnitude('shear_x', 9) == pytest.approx(0.3)
    assert uda_magnitude('translate_y', 9) == pytest.approx(150 / 331)
    assert uda_magnitude('rotate', 3) == pytest.approx(10.0)
    assert uda_magnitude('brightness', 5) == pytest.approx(0.5)
    assert uda_magnitude('solarize', 0) == 256.0 and uda_magnitude('solarize', 9) == 0.0
    # round(8 - 4 l / 9) and round(20 l / 9), worked out for every level
    assert [uda_magnitude('posterize', lv) for lv in range(10)] == [8, 8, 7, 7, 6, 6, 5, 5, 4, 4]
    assert [uda_magnitude('cutout', lv) for lv in range(10)] == [0, 2, 4, 7, 9, 11, 13, 16, 18, 20]
    assert uda_magnitude('equalize', 7) == 0.0
    with pytest.raises(KeyError, match='unknown UDA RandAugment operation'):
        uda_magnitude('blur', 1)
    with pytest.raises(ValueError, match='0..9'):
        uda_magnitude('rotate', 10)


def test_pointwise_operations_match_numpy():
    img = _image()
    np.testing.assert_array_equal(_apply(img, 'invert', 0), 255 - img)
    for bits in (4, 5, 7, 8):
        np.testing.assert_array_equal(
            _apply(img, 'posterize', bits), img & np.uint8((0xFF << (8 - bits)) & 0xFF)
        )
    for threshold in (256.0, 200.0, 113.77, 0.0):
        expected = np.where(img >= threshold, 255 - img, img)
        np.testing.assert_array_equal(_apply(img, 'solarize', threshold), expected)
    # Brightness blends with black: factor f scales every value (PIL rounds; allow 1 level).
    for magnitude in (-0.9, -0.3, 0.4):
        expected = np.clip(img.astype(float) * (1 + magnitude), 0, 255)
        assert np.abs(_apply(img, 'brightness', magnitude) - expected).max() <= 1.0


@pytest.mark.parametrize('operation', ['translate_x', 'translate_y'])
@pytest.mark.parametrize('magnitude', [0.25, -0.25, 150 / 331 * 4 / 9])
def test_translation_shifts_with_grey_fill(operation, magnitude):
    img = _image()
    h, w = img.shape[:2]
    out = _apply(img, operation, magnitude)
    # Nearest-neighbour inverse map on pixel centres: output index i reads input
    # floor(i + 0.5 + shift), grey (128) where that falls outside.
    size = w if operation == 'translate_x' else h
    source = np.floor(np.arange(size) + 0.5 + magnitude * size).astype(int)
    inside = (source >= 0) & (source < size)
    expected = np.full_like(img, 128)
    if operation == 'translate_x':
        expected[:, inside] = img[:, source[inside]]
    else:
        expected[inside] = img[source[inside]]
    np.testing.assert_array_equal(out, expected)


def test_geometric_identities_and_rotation_fill():
    img = _image()
    for operation in ('shear_x', 'shear_y', 'rotate', 'color', 'contrast', 'sharpness'):
        np.testing.assert_array_equal(_apply(img, operation, 0.0), img, err_msg=operation)
    square = _image(20, 20)
    # 90 degrees counter-clockwise on a square image is a pure index rotation.
    np.testing.assert_array_equal(_apply(square, 'rotate', 90.0), np.rot90(square))
    # 30 degrees: the corners come from outside the image and are filled grey.
    out = _apply(square, 'rotate', 30.0)
    assert (out[0, 0] == 128).all() and (out[-1, -1] == 128).all()


def test_cutout_paints_the_half_open_square_around_the_drawn_centre():
    img = _image()
    h, w = img.shape[:2]
    for seed in range(20):
        np.random.seed(seed)
        out = _apply(img, 'cutout', 7)
        np.random.seed(seed)
        cx, cy = np.random.randint(w), np.random.randint(h)  # horizontal centre first
        mask = np.zeros((h, w), bool)
        mask[max(0, cy - 3) : min(h, cy + 3), max(0, cx - 3) : min(w, cx + 3)] = True
        assert (out[mask] == (125, 122, 113)).all()
        np.testing.assert_array_equal(out[~mask], img[~mask])


def test_policy_draws_are_uniform_and_applied_half_the_time():
    transform = UDARandAugment()
    img = _image(8, 8)
    np.random.seed(0)
    ops, levels, applied = Counter(), Counter(), 0
    draws = 3000
    for _ in range(draws):
        record = transform(dict(img=img))['uda_ops']
        assert len(record) == 2
        for operation, level, was_applied in record:
            ops[operation] += 1
            levels[level] += 1
            applied += was_applied
    total = 2 * draws
    assert set(ops) == set(UDA_OPERATIONS) and set(levels) == set(range(1, 10))
    # 6000 draws: each of 15 ops has expectation 400 (sd about 19); each of 9 levels 667.
    assert all(abs(n - total / 15) < 5 * np.sqrt(total / 15) for n in ops.values()), ops
    assert all(abs(n - total / 9) < 5 * np.sqrt(total / 9) for n in levels.values()), levels
    assert abs(applied / total - 0.5) < 0.03


def test_prob_zero_is_identity_and_input_is_not_written():
    img = _image()
    before = img.copy()
    out = UDARandAugment(prob=0.0)(dict(img=img))
    np.testing.assert_array_equal(out['img'], before)
    np.random.seed(3)
    for _ in range(20):
        UDARandAugment(prob=1.0)(dict(img=img))
    np.testing.assert_array_equal(img, before)


def test_bgr_and_rgb_inputs_give_the_same_image():
    """Colour operations and fills are defined on RGB: a BGR image is flipped in and out."""
    rgb = _image()
    for seed in range(30):
        np.random.seed(seed)
        from_rgb = UDARandAugment(channel_order='rgb', prob=1.0)(dict(img=rgb.copy()))
        np.random.seed(seed)
        from_bgr = UDARandAugment(channel_order='bgr', prob=1.0)(dict(img=rgb[..., ::-1].copy()))
        assert from_rgb['uda_ops'] == from_bgr['uda_ops']
        np.testing.assert_array_equal(from_bgr['img'][..., ::-1], from_rgb['img'])


def test_bad_input_and_arguments_are_named():
    with pytest.raises(TypeError, match=r'uint8 numpy array of shape \[H, W, 3\]'):
        UDARandAugment()(dict(img=np.zeros((8, 8), np.uint8)))
    with pytest.raises(TypeError, match='float32'):
        UDARandAugment()(dict(img=np.zeros((8, 8, 3), np.float32)))
    with pytest.raises(ValueError, match='prob'):
        UDARandAugment(prob=1.5)
    with pytest.raises(ValueError, match='channel_order'):
        UDARandAugment(channel_order='hsv')
    with pytest.raises(ValueError, match='fill'):
        UDARandAugment(fill=(1, 2))
