"""NUSWIDE on a tiny release in the official layout, its three protocols and its config."""

from __future__ import annotations

import logging
import os.path as osp
import re

import numpy as np
import pytest
from conftest import capture_log_messages, config_path, write_nus_wide
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import NUSWIDE
from mlkd.registry import DATASETS

mlkd.register_all_modules()
TRAIN = {
    'actor\\0001_1.jpg': [0, 5],
    'beach\\0002_2.jpg': [],
    'beach\\0003_3.jpg': [80],
    'zoo\\0004_4.jpg': None,
}  # listed, not on disk
TEST = {'actor\\0005_5.jpg': [3], 'sky\\0006_6.jpg': []}


@pytest.fixture
def root(tmp_path):
    write_nus_wide(tmp_path / 'nuswide', TRAIN, TEST)
    return str(tmp_path / 'nuswide')


def _rows(ds):
    return [
        (
            osp.relpath(ds.get_data_info(i)['img_path'], osp.join(ds.data_root, 'Flickr')),
            ds.get_data_info(i)['gt_label'],
        )
        for i in range(len(ds))
    ]


def _logged(messages: list[str], pattern: str) -> bool:
    """Whether one of the log ``messages`` matches ``pattern``."""
    return any(re.search(pattern, message) for message in messages)


def test_official_protocols_keep_or_drop_unlabeled_and_skip_missing_with_a_count(root):
    messages = capture_log_messages(logging.INFO)
    official = NUSWIDE(data_root=root, split='train', protocol='official')
    # The skip is counted in the log, not silent.
    assert _logged(
        messages, r'NUSWIDE: skipped 1 of 4 images listed in .*TrainImagelist\.txt.*zoo/0004_4\.jpg'
    )
    assert _rows(official) == [
        ('actor/0001_1.jpg', [0, 5]),
        ('beach/0002_2.jpg', []),
        ('beach/0003_3.jpg', [80]),
    ]
    labeled = NUSWIDE(data_root=root, split='train', protocol='official_labeled')
    # The count of the Two-way paper's split (before the skip of missing images) is logged.
    assert _logged(
        messages,
        r'official_labeled keeps 2 of 4 images of .*TrainImagelist\.txt .*'
        r'counts 125,448 for the train split',
    )
    assert _rows(labeled) == [('actor/0001_1.jpg', [0, 5]), ('beach/0003_3.jpg', [80])]
    assert _rows(NUSWIDE(data_root=root, split='test', protocol='official_labeled')) == [
        ('actor/0005_5.jpg', [3])
    ]
    assert official.metainfo['classes'][80] == 'c80'
    # The error policy names the image instead.
    with pytest.raises(
        FileNotFoundError,
        match=r'1 image\(s\) listed in .*TrainImagelist\.txt '
        r'do not exist: .*zoo/0004_4\.jpg',
    ):
        NUSWIDE(data_root=root, split='train', protocol='official', missing_images='error')


def test_cole_protocol_reads_the_formatted_files(root):
    np.save(
        osp.join(root, 'formatted_train_images.npy'),
        np.array(['beach/0003_3.jpg', 'actor/0001_1.jpg']),
    )
    labels = np.zeros((2, 81))
    labels[0, [1, 2]] = 1
    labels[1, 7] = 1
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    ds = NUSWIDE(data_root=root, split='train', protocol='cole')
    assert _rows(ds) == [('beach/0003_3.jpg', [1, 2]), ('actor/0001_1.jpg', [7])]
    with pytest.raises(FileNotFoundError, match='formatted_val_images.npy'):
        NUSWIDE(data_root=root, split='test', protocol='cole')
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels[:, :80])
    with pytest.raises(ValueError, match=r'formatted_train_labels\.npy must be a 0/1 array'):
        NUSWIDE(data_root=root, split='train', protocol='cole')


def test_bad_label_file_and_protocol_are_named(root):
    with open(osp.join(root, 'TrainTestLabels', 'Labels_c07_Train.txt'), 'w') as f:
        f.write('0\n1\n')
    with pytest.raises(ValueError, match=r'Labels_c07_Train\.txt must hold one 0/1 per image'):
        NUSWIDE(data_root=root, split='train')
    with pytest.raises(ValueError, match='protocol must be one of'):
        NUSWIDE(data_root=root, protocol='asl')


def test_config_builds_single_positive_train_and_full_test(root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'nuswide_spml.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        train = DATASETS.build(
            dict(cfg.train_dataloader.dataset, data_root=root, protocol='official_labeled')
        )
        test = DATASETS.build(
            dict(cfg.test_dataloader.dataset, data_root=root, protocol='official_labeled')
        )
    infos = [train.get_data_info(i) for i in range(len(train))]
    assert [len(i['gt_label']) for i in infos] == [1, 1]
    assert [i['gt_label_full'] for i in infos] == [[0, 5], [80]]
    assert infos[0]['gt_label'][0] in (0, 5)
    assert sorted(infos[0]['gt_label_ignored'] + infos[0]['gt_label']) == list(range(81))
    assert 'gt_label_ignored' not in test.get_data_info(0)
    out = train[0]
    assert tuple(out['inputs'].shape) == (3, 448, 448)
    assert 'gt_label_ignored' in out['data_samples']


def test_l2d_config_keeps_the_official_lists_and_flips(root):
    """The 3D paper's NUS-WIDE (161K / 107K: the official lists, unlabeled images kept) in the L2D
    pipeline with its random horizontal flip."""
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'nuswide_l2d.py'))
    assert cfg.data_preprocessor.num_classes == 81
    with DefaultScope.overwrite_default_scope('mlkd'):
        train = DATASETS.build(dict(cfg.train_dataloader.dataset, data_root=root))
        test = DATASETS.build(dict(cfg.test_dataloader.dataset, data_root=root))
    assert _rows(train) == [
        ('actor/0001_1.jpg', [0, 5]),
        ('beach/0002_2.jpg', []),
        ('beach/0003_3.jpg', [80]),
    ]
    assert _rows(test) == [('actor/0005_5.jpg', [3]), ('sky/0006_6.jpg', [])]
    assert [t['type'] for t in cfg.train_dataloader.dataset.pipeline].count('RandomFlip') == 1
    assert tuple(train[0]['inputs'].shape) == (3, 224, 224)
    assert tuple(test[1]['inputs'].shape) == (3, 224, 224)
