"""Observed labels (single positive, partial positives, Cole et al.'s files) on real datasets."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import config_path
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import MultiDigits, MultiLabelImageList
from mlkd.datasets.observed_labels import (
    draw_observed_positives,
    label_lists_to_matrix,
    read_observed_file,
)
from mlkd.registry import DATASETS, MODELS

mlkd.register_all_modules()
SMALL = dict(num_samples=300, image_size=16, seed=3)


def _matrix(ds, key: str = 'gt_label') -> np.ndarray:
    return label_lists_to_matrix(
        [ds.get_data_info(i)[key] for i in range(len(ds))], len(ds.metainfo['classes'])
    )


def _clean(n: int = 4000, c: int = 12, seed: int = 0) -> np.ndarray:
    labels = np.random.default_rng(seed).random((n, c)) < 0.3
    labels[:5] = False  # images without positives keep none
    labels[5, :] = True
    return labels


def test_single_positive_draw_keeps_exactly_one_uniformly_chosen_positive():
    clean = _clean()
    observed = draw_observed_positives(clean, seed=7)
    assert not (observed & ~clean).any()
    num_pos = clean.sum(1)
    np.testing.assert_array_equal(observed.sum(1), np.minimum(num_pos, 1))
    # Uniform among the positives: for the rows with exactly 3 positives, each of the 3 is chosen
    # a third of the time (position of the kept positive among the row's positives).
    rows = np.flatnonzero(num_pos == 3)
    position = (np.cumsum(clean[rows], 1) * observed[rows]).sum(1) - 1
    freq = np.bincount(position, minlength=3) / len(rows)
    np.testing.assert_allclose(freq, [1 / 3] * 3, atol=4 * np.sqrt(2 / 9 / len(rows)))
    # Deterministic under a seed, different for another seed.
    np.testing.assert_array_equal(observed, draw_observed_positives(clean, seed=7))
    assert (observed != draw_observed_positives(clean, seed=8)).any()


@pytest.mark.parametrize('fraction', [0.75, 0.4])
def test_partial_positive_fractions_keep_round_half_up_at_least_one(fraction):
    clean = _clean()
    observed = draw_observed_positives(clean, seed=1, fraction=fraction)
    assert not (observed & ~clean).any()
    for k in range(clean.shape[1] + 1):  # hand rule: max(1, floor(f * k + 0.5)), 0 for k = 0
        rows = clean.sum(1) == k
        expected = 0 if k == 0 else max(1, int(np.floor(fraction * k + 0.5)))
        assert (observed[rows].sum(1) == expected).all(), (k, expected)
    kept = observed.sum() / clean.sum()
    assert abs(kept - fraction) < 0.1


def test_multidigits_single_positive_target_and_untouched_val():
    train = MultiDigits(variant='single_positive', **SMALL)
    observed, full = _matrix(train), _matrix(train, 'gt_label_full')
    np.testing.assert_array_equal(observed.sum(1), 1)
    np.testing.assert_array_equal(full, _matrix(MultiDigits(**SMALL)))
    np.testing.assert_array_equal(_matrix(train, 'gt_label_ignored'), ~observed)
    np.testing.assert_array_equal(observed, draw_observed_positives(full, seed=SMALL['seed']))
    val = MultiDigits(split='val', variant='single_positive', **SMALL)
    assert all('gt_label_ignored' not in val.get_data_info(i) for i in range(len(val)))
    assert (_matrix(val).sum(1) > 1).any()


def test_config_pipeline_and_preprocessor_build_the_1_minus1_target():
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'multidigits_single_positive.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        train_cfg = dict(cfg.train_dataloader.dataset, num_samples=8)
        train = DATASETS.build(train_cfg)
        val = DATASETS.build(dict(cfg.val_dataloader.dataset, num_samples=8))
        preprocessor = MODELS.build(cfg.data_preprocessor)
    batch = preprocessor(pseudo_collate([train[i] for i in range(8)]), training=True)
    for i, sample in enumerate(batch['data_samples']):
        info = train.get_data_info(i)
        expected = torch.full((10,), -1.0)
        expected[info['gt_label']] = 1.0
        torch.testing.assert_close(sample.gt_score, expected)
        full = torch.zeros(10)
        full[info['gt_label_full']] = 1.0
        torch.testing.assert_close(sample.gt_full, full)
    # The validation target is the full 1 / 0 labels.
    batch = preprocessor(pseudo_collate([val[i] for i in range(8)]), training=False)
    for i, sample in enumerate(batch['data_samples']):
        expected = torch.zeros(10)
        expected[val.get_data_info(i)['gt_label']] = 1.0
        torch.testing.assert_close(sample.gt_score, expected)


def _image_list(tmp_path, names, labels):
    (tmp_path / 'ann.txt').write_text(
        ''.join(f'imgs/{n} {" ".join(map(str, ls))}\n' for n, ls in zip(names, labels))
    )
    return dict(
        data_root=str(tmp_path), ann_file='ann.txt', classes=list('abcd'), check_files=False
    )


def test_cole_file_is_read_by_image_path_and_checked(tmp_path):
    names = ['x.jpg', 'y.jpg', 'z.jpg']
    labels = [[0, 2], [1], [1, 2, 3]]
    # Cole's files list the images in another order, with the folder in the name, and an extra
    # image the dataset does not use; -1 is an observed negative.
    obs = np.array([[0, 0, 1, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], np.float64)
    obs[3, 0] = -1
    np.save(tmp_path / 'obs.npy', obs)
    np.save(
        tmp_path / 'images.npy', np.array(['imgs/z.jpg', 'imgs/w.jpg', 'imgs/y.jpg', 'imgs/x.jpg'])
    )
    # x is row 3 (class 3 is not a positive of x: error naming the file); fix it first.
    with pytest.raises(ValueError, match='obs.npy.*class 3 of sample 0'):
        MultiLabelImageList(
            **_image_list(tmp_path, names, labels),
            observed_labels=dict(mode='file', file='obs.npy', images_file='images.npy'),
        )
    obs[3] = [-1, 0, 1, 0]
    np.save(tmp_path / 'obs.npy', obs)
    ds = MultiLabelImageList(
        **_image_list(tmp_path, names, labels),
        observed_labels=dict(mode='file', file='obs.npy', images_file='images.npy'),
    )
    assert [ds.get_data_info(i)['gt_label'] for i in range(3)] == [[2], [1], [2]]
    # Unobserved -> ignored; x's observed negative (class 0) stays a negative.
    assert [ds.get_data_info(i)['gt_label_ignored'] for i in range(3)] == [
        [1, 3],
        [0, 2, 3],
        [0, 1, 3],
    ]
    assert [ds.get_data_info(i)['gt_label_full'] for i in range(3)] == labels
    # Equality with the file: the observed matrix in dataset order is the file's rows 3, 2, 0.
    np.testing.assert_array_equal(
        read_observed_file(
            str(tmp_path / 'obs.npy'),
            4,
            [f'r/imgs/{n}' for n in names],
            str(tmp_path / 'images.npy'),
        ),
        obs[[3, 2, 0]].astype(np.int8),
    )


def test_cole_file_errors_name_the_file(tmp_path):
    np.save(tmp_path / 'bad.npy', np.array([[0, 2, 0, 0]]))
    with pytest.raises(ValueError, match=r'bad.npy row 0 class 1 holds 2'):
        read_observed_file(str(tmp_path / 'bad.npy'), 4)
    np.save(tmp_path / 'short.npy', np.zeros((2, 4)))
    with pytest.raises(ValueError, match='short.npy has 2 rows but the dataset has 3'):
        read_observed_file(str(tmp_path / 'short.npy'), 4, ['a', 'b', 'c'])
    with pytest.raises(ValueError, match=r'short.npy has shape \(2, 4\); expected \[N, 5\]'):
        read_observed_file(str(tmp_path / 'short.npy'), 5)
    with pytest.raises(FileNotFoundError, match='nope.npy'):
        read_observed_file(str(tmp_path / 'nope.npy'), 4)
    with pytest.raises(ValueError, match='mode in'):
        MultiDigits(num_samples=4, observed_labels=dict(mode='one'))
    with pytest.raises(ValueError, match=r'fraction must be in \(0, 1\]'):
        MultiDigits(num_samples=4, observed_labels=dict(mode='fraction', fraction=1.5))


def test_single_positive_leaf_trains_with_tools_train(tmp_path):
    """The shipped leaf, as a user runs it: one observed positive per image reaches the loss."""
    import re

    from conftest import SMALL_TOOL_RUN, run_tool

    out = run_tool(
        'tools/train.py',
        config_path('multidigits', 'resnet_student_single_positive.py'),
        '--work-dir',
        str(tmp_path / 'work'),
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-3000:]
    assert 'MultiDigits: observed labels (single_positive): 64 of' in log
    losses = [float(v) for v in re.findall(r'loss: (\d+\.\d+)', log)]
    assert losses and all(np.isfinite(losses))
    assert re.search(r'mAP: \d+\.\d+', log)
