"""DigitScenes (the ranking benchmark's data): deterministic bytes, COCO-like label statistics,
hard objects, missed annotations, disjoint splits."""

import hashlib

import numpy as np
import pytest
from conftest import config_path
from mmengine.config import Config

from mlkd.datasets import DigitScenes
from mlkd.datasets.digit_scenes import DIGIT_SCENE_CLASSES, PALETTE, scene_world

TINY = dict(num_samples=6, seed=3, world_seed=1, grid=3, max_objects=5, mean_objects=3.5)
# Recorded when the generator was written: the same arguments must give the same bytes.
TINY_DIGEST = '568701009c74214d90821334fabea6e8a020c48cc6b7798ae45053350fe3a982'


def test_tiny_scenes_match_the_recorded_bytes_and_labels():
    data = DigitScenes(split='val', **TINY)
    images = np.stack([data.get_data_info(i)['img'] for i in range(6)])
    assert images.shape == (6, 32, 32, 3) and images.dtype == np.uint8
    digest = hashlib.sha256(images.tobytes())
    digest.update(repr([data.get_data_info(i)['gt_label'] for i in range(6)]).encode())
    assert digest.hexdigest() == TINY_DIGEST


def test_labels_are_the_classes_of_the_objects_and_misses_only_drop_positives():
    clean = DigitScenes(split='train', num_samples=300, missed_annotation=(0.0, 0.0))
    missed = DigitScenes(split='train', num_samples=300, missed_annotation=(0.2, 0.9))
    for i in range(300):
        info, noisy = clean.get_data_info(i), missed.get_data_info(i)
        present = sorted({c for c in info['object_labels'] if c >= 0})
        assert info['gt_label'] == info['gt_label_full'] == present
        # The same scene (misses are drawn after everything else is laid out) ...
        np.testing.assert_array_equal(info['img'], noisy['img'])
        assert noisy['gt_label_full'] == present
        # ... whose annotation keeps a subset of the positives.
        assert set(noisy['gt_label']) <= set(present)
    full, seen = missed.get_label_matrix(full=True), missed.get_label_matrix()
    hard = np.array([missed.get_data_info(i)['object_hard'] for i in range(300)])
    assert hard.any() and (hard.sum() / (full.sum() + 1e-9)) > 0.1
    kept = seen.sum() / full.sum()
    assert 0.5 < kept < 0.95  # misses of easy (0.2) and hard (0.9) objects


def test_label_statistics_are_coco_like():
    data = DigitScenes(split='train', num_samples=1500)
    labels = data.get_label_matrix()
    assert labels.shape == (1500, 40) and len(DIGIT_SCENE_CLASSES) == 40
    assert 2.0 <= labels.sum(axis=1).mean() <= 4.0  # positives per image
    counts = labels.sum(axis=0)
    assert counts.min() > 0 and counts.max() / counts.min() >= 10  # a long tail
    # Classes of one topic co-occur more often than independent classes would.
    freq = labels.mean(axis=0)
    lift = (labels.T.astype(float) @ labels / len(labels)) / np.outer(freq, freq)
    same = data.topics.T.astype(int) @ data.topics.astype(int) > 0
    off_diagonal = ~np.eye(40, dtype=bool)
    assert lift[same & off_diagonal].mean() > 1.5 * lift[~same & off_diagonal].mean()


def test_splits_share_the_world_and_draw_disjoint_scans():
    train = DigitScenes(split='train', num_samples=8)
    val = DigitScenes(split='val', num_samples=8)
    np.testing.assert_array_equal(train.prior, val.prior)
    np.testing.assert_array_equal(train.topics, val.topics)
    assert not set(train.source_indices) & set(val.source_indices)
    prior, topics = scene_world(8, 8, 0.8, 0)
    assert topics.sum(axis=0).min() >= 1 and (topics.sum(axis=1) == 8).all()
    assert prior.max() / prior.min() == pytest.approx(40**0.8)


@pytest.mark.parametrize(
    'kwargs, message',
    [
        (dict(split='dev'), 'split'),
        (dict(num_samples=0), 'num_samples'),
        (dict(mean_objects=0.5), 'mean_objects'),
        (dict(object_size=(20, 10)), 'object_size'),
        (dict(missed_annotation=(0.0, 1.0)), 'missed_annotation'),
        (dict(grid=2, max_objects=6), 'grid'),
        (dict(num_topics=2, topic_size=8), 'cover'),
        (dict(data_root='x'), 'does not read files'),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        DigitScenes(**dict(dict(num_samples=4), **kwargs))


#: DigitObjects' generator settings, as its dataset config sets them.
ONE_OBJECT = Config.fromfile(
    config_path('_base_', 'datasets', 'digit_objects.py')
).objects.to_dict()


def test_ten_colours_make_100_classes_painted_in_their_palette_colour():
    """DigitObjects' data (configs/_base_/datasets/digit_objects.py): one object per image, 100
    (colour, digit) classes; each object's brightest pixel has its class's palette colour."""
    data = DigitScenes(
        split='val', num_samples=400, noise=0, alpha=(1.0, 1.0), hard_fraction=0.0, **ONE_OBJECT
    )
    names = data.metainfo['classes']
    assert len(names) == 100 and names[:40] == DIGIT_SCENE_CLASSES and names[-1] == 'pink_9'
    palette = np.array(list(PALETTE.values()))
    for i in range(len(data)):
        info = data.get_data_info(i)
        (label,) = info['gt_label']
        img = info['img'].reshape(-1, 3).astype(float)
        brightest = img[img.sum(axis=1).argmax()]
        # The colour of the class, up to the scan's peak intensity (below 1 after resampling).
        np.testing.assert_allclose(
            brightest / brightest.max(),
            palette[label // 10] / palette[label // 10].max(),
            atol=0.04,
        )
        assert names[label] == f'{list(PALETTE)[label // 10]}_{label % 10}'


def test_balanced_single_object_classes_all_occur_about_equally():
    data = DigitScenes(split='train', num_samples=3000, **ONE_OBJECT)
    np.testing.assert_allclose(data.prior, np.full(100, 0.01))
    labels = data.get_label_matrix()
    assert (labels.sum(axis=1) == 1).all()
    counts = labels.sum(axis=0)  # multinomial, 30 expected per class (sd ~5.5): no long tail
    assert counts.min() >= 10 and counts.max() <= 60


def test_bad_colour_counts_and_class_names_are_refused_by_name():
    with pytest.raises(ValueError, match='num_colours must be an int in 1..10, got 11'):
        DigitScenes(num_samples=2, num_colours=11)
    with pytest.raises(ValueError, match='names 40 classes, but num_colours=10 makes 100'):
        DigitScenes(num_samples=2, metainfo=dict(classes=DIGIT_SCENE_CLASSES), **ONE_OBJECT)
