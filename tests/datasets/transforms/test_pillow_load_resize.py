"""PillowLoadResize gives what LoadImageFromFile(pillow) + Resize(pillow, no aspect) give: the
same array (BGR, pixel for pixel) and the same result keys, for RGB, grayscale, CMYK and
EXIF-rotated JPEGs and for each filter."""

import numpy as np
import pytest
from mmcv.transforms import LoadImageFromFile, Resize
from PIL import Image

from mlkd.datasets.transforms import PillowLoadResize

KEYS = ('img_shape', 'ori_shape', 'scale', 'scale_factor', 'keep_ratio')


def _photo(seed: int, size=(64, 48)) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (4, 5, 3), dtype=np.uint8))
    smooth = np.asarray(coarse.resize(size, Image.Resampling.BICUBIC), dtype=np.int16)
    noisy = smooth + rng.normal(0, 12, smooth.shape)
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


@pytest.fixture(scope='module')
def jpegs(tmp_path_factory):
    folder = tmp_path_factory.mktemp('jpegs')
    paths = {}
    for name, image in (
        ('rgb', _photo(0)),
        ('portrait', _photo(1, (30, 70))),
        ('gray', _photo(2).convert('L')),
        ('cmyk', _photo(3).convert('CMYK')),
    ):
        paths[name] = str(folder / f'{name}.jpg')
        image.save(paths[name], quality=90)
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90 degrees on display
    paths['exif_rotated'] = str(folder / 'exif_rotated.jpg')
    _photo(4).save(paths['exif_rotated'], quality=90, exif=exif)
    return paths


@pytest.mark.parametrize('interpolation', ['bilinear', 'bicubic', 'nearest'])
@pytest.mark.parametrize('name', ['rgb', 'portrait', 'gray', 'cmyk', 'exif_rotated'])
def test_same_array_and_keys_as_the_two_steps(jpegs, name, interpolation):
    two_steps = Resize(
        scale=(32, 24), keep_ratio=False, backend='pillow', interpolation=interpolation
    )(LoadImageFromFile(imdecode_backend='pillow')(dict(img_path=jpegs[name])))
    fused = PillowLoadResize(scale=(32, 24), interpolation=interpolation)(
        dict(img_path=jpegs[name])
    )
    assert fused['img'].dtype == np.uint8 and fused['img'].shape == (24, 32, 3)
    np.testing.assert_array_equal(fused['img'], two_steps['img'])
    for key in KEYS:
        assert fused[key] == two_steps[key], key
    if name == 'exif_rotated':  # the orientation was applied: 64 x 48 stored, 48 x 64 shown
        assert fused['ori_shape'] == (64, 48)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match='interpolation'):
        PillowLoadResize(scale=224, interpolation='area')
    with pytest.raises(ValueError, match='scale'):
        PillowLoadResize(scale=(224, 0))
    assert PillowLoadResize(scale=224).scale == (224, 224)
