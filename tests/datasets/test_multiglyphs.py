"""MultiGlyphs (the demo's pretraining task): deterministic, label = glyphs present, no digits."""

import hashlib

import numpy as np
import pytest

from mlkd.datasets import MultiDigits, MultiGlyphs
from mlkd.datasets.multiglyphs import GLYPH_CLASSES, GLYPH_SIZE, render_glyphs

# Digests recorded when the bundled pretrained weights were built (mlkd/weights/manifest.json):
# the same arguments must give the same bytes on any machine, or the weights cannot be rebuilt.
# A snapshot by necessity: the bytes of generated glyphs have no independent reference; what
# they must show (labels = glyphs present, no digit) is checked by the tests below.
GLYPHS_DIGEST = '0af61889a3e7df72c452c6a12588e41e0fd132c3a9dad9c2551bb0b012e4fbd5'
MOSAICS_DIGEST = 'ac3e1736634b049d7c2d17f7b83b78c96a947f021c50e6c407dd0899c3bbe3ed'


def test_glyphs_and_mosaics_match_the_recorded_bytes():
    glyphs, targets = render_glyphs(3, [7, 1])
    assert hashlib.sha256(glyphs.tobytes() + targets.tobytes()).hexdigest() == GLYPHS_DIGEST
    data = MultiGlyphs(split='val', num_samples=6, glyphs_per_class=4, glyph_seed=3, seed=5)
    images = np.stack([data.get_data_info(i)['img'] for i in range(6)])
    assert hashlib.sha256(images.tobytes()).hexdigest() == MOSAICS_DIGEST
    assert [data.get_data_info(i)['gt_label'] for i in range(6)] == [
        [8],
        [0, 3, 9, 11],
        [1, 2, 10, 11],
        [6, 7],
        [5, 6, 7, 8],
        [6, 7, 10],
    ]


def test_glyph_classes_are_not_digits_and_each_class_is_drawn():
    assert len(GLYPH_CLASSES) == 12 and not set(GLYPH_CLASSES) & {str(d) for d in range(10)}
    glyphs, targets = render_glyphs(5, 0)
    assert glyphs.shape == (60, GLYPH_SIZE, GLYPH_SIZE) and glyphs.dtype == np.float32
    assert np.bincount(targets).tolist() == [5] * 12
    assert glyphs.min() == 0.0 and glyphs.max() == 255.0
    # Coverage is a mean of 16 inside-tests: multiples of 255 / 16.
    assert np.allclose(glyphs * 16 / 255, np.round(glyphs * 16 / 255), atol=1e-4)
    # Every glyph has ink and background (none clipped away by its jitter).
    flat = glyphs.reshape(60, -1)
    assert (flat.max(axis=1) == 255.0).all() and (flat.min(axis=1) == 0.0).all()


def test_labels_are_the_set_of_glyphs_drawn_and_splits_draw_their_own_glyphs():
    train = MultiGlyphs(split='train', num_samples=40, glyphs_per_class=3)
    val = MultiGlyphs(split='val', num_samples=40, glyphs_per_class=3)
    pool_train, targets = train._source_pool()
    pool_val, _ = val._source_pool()
    assert not any((pool_train == v).all(axis=(1, 2)).any() for v in pool_val)
    for i in range(len(train)):
        info = train.get_data_info(i)
        cells = [c for c in info['cell_labels'] if c >= 0]
        assert info['gt_label'] == sorted(set(cells))
        ids = [s for s in info['source_ids'] if s >= 0]
        assert [int(targets[s]) for s in ids] == cells
    assert train.get_label_matrix().shape == (40, 12)


def test_multiglyphs_rejects_digit_scan_arguments_and_bad_sizes():
    with pytest.raises(TypeError, match='val_fraction'):
        MultiGlyphs(split='train', num_samples=4, val_fraction=0.5)
    with pytest.raises(ValueError, match='glyphs_per_class'):
        MultiGlyphs(split='train', num_samples=4, glyphs_per_class=0)
    with pytest.raises(ValueError, match='per_class'):
        render_glyphs(0, 0)


def test_multidigits_is_unchanged_by_the_shared_composition():
    # The digest of MultiDigits before the scan source became a method (main at e1367b8).
    data = MultiDigits(split='train', num_samples=300)
    digest = hashlib.sha256(np.stack([data.get_data_info(i)['img'] for i in range(300)]).tobytes())
    digest.update(repr([data.get_data_info(i)['gt_label'] for i in range(300)]).encode())
    assert digest.hexdigest() == (
        'f493b084eef52b25a9d009d44e489985611139aaf8b3371f6aa00b8dc4f40f9a'
    )
