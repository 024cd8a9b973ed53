"""CUBAttributes on a tiny release in the official layout, its label rule and its config."""

from __future__ import annotations

import os
import os.path as osp

import pytest
from conftest import config_path, write_cub
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import CUBAttributes
from mlkd.registry import DATASETS

mlkd.register_all_modules()
IMAGES = [('001.A/a_1.jpg', 1), ('001.A/a_2.jpg', 0), ('002.B/b_1.jpg', 1)]
# (image id, attribute id, is_present, certainty id)
LABELS = [
    (1, 1, 1, 4),
    (1, 2, 1, 2),
    (1, 312, 1, 1),
    (1, 3, 0, 4),
    (2, 5, 1, 3),
    (3, 2, 0, 1),
    (3, 7, 1, 3),
    (3, 8, 1, 1),
]


@pytest.fixture
def root(tmp_path):
    write_cub(tmp_path / 'CUB_200_2011', IMAGES, LABELS)
    return str(tmp_path / 'CUB_200_2011')


def _infos(ds):
    return [ds.get_data_info(i) for i in range(len(ds))]


def test_is_present_rule_split_and_names(root):
    train = CUBAttributes(data_root=root, split='train')
    assert [osp.relpath(i['img_path'], osp.join(root, 'images')) for i in _infos(train)] == [
        '001.A/a_1.jpg',
        '002.B/b_1.jpg',
    ]
    # Attribute id a -> index a - 1; every certainty counts with min_certainty=1.
    assert [i['gt_label'] for i in _infos(train)] == [[0, 1, 311], [6, 7]]
    assert 'gt_label_ignored' not in _infos(train)[0]
    assert [i['gt_label'] for i in _infos(CUBAttributes(data_root=root, split='test'))] == [[4]]
    assert len(train.metainfo['classes']) == 312
    assert train.metainfo['classes'][311] == 'has_attr::312'


def test_min_certainty_moves_uncertain_present_attributes_to_ignored(root):
    train = CUBAttributes(data_root=root, split='train', min_certainty=3)
    assert [i['gt_label'] for i in _infos(train)] == [[0], [6]]
    assert [i['gt_label_ignored'] for i in _infos(train)] == [[1, 311], [7]]


def test_bad_files_are_named(root):
    path = osp.join(root, 'attributes', 'image_attribute_labels.txt')
    with open(path, 'a') as f:
        f.write('9 1 1 4 1.0\n')
    with pytest.raises(ValueError, match=r'image_attribute_labels\.txt: entry 9 \[9, 1, 1, 4\]'):
        CUBAttributes(data_root=root)
    with open(path, 'a') as f:
        f.write('3 4\n')
    with pytest.raises(ValueError, match=r'image_attribute_labels\.txt:10: expected 4 fields'):
        CUBAttributes(data_root=root)
    os.remove(path)
    with pytest.raises(FileNotFoundError, match=r'attribute labels .*image_attribute_labels'):
        CUBAttributes(data_root=root)


def test_missing_image_is_named(root):
    os.remove(osp.join(root, 'images', '002.B', 'b_1.jpg'))
    with pytest.raises(FileNotFoundError, match=r'images\.txt do not exist: .*002\.B/b_1\.jpg'):
        CUBAttributes(data_root=root)
    assert len(CUBAttributes(data_root=root, missing_images='skip')) == 1


def test_config_builds_single_positive_train(root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'cub_attributes_spml.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        train = DATASETS.build(dict(cfg.train_dataloader.dataset, data_root=root))
        test = DATASETS.build(dict(cfg.test_dataloader.dataset, data_root=root))
    assert [len(i['gt_label']) for i in _infos(train)] == [1, 1]
    assert [i['gt_label_full'] for i in _infos(train)] == [[0, 1, 311], [6, 7]]
    assert [i['gt_label'] for i in _infos(test)] == [[4]]
    assert tuple(test[0]['inputs'].shape) == (3, 448, 448)
