"""COCO single-positive / partial-positive configs on a tiny instances json.

The settings are those of Table B.1 of Verelst et al., "Spatial Consistency Loss for Training
Multi-Label Classifiers from Single-Label Annotations", WACV 2023.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import config_path, write_coco
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.registry import DATASETS

mlkd.register_all_modules()
CATEGORIES = [dict(id=i + 1, name=f'cat{i:02d}') for i in range(80)]


@pytest.fixture
def root(tmp_path):
    # 40 images; image i holds classes 0 .. (i % 8) (1 to 8 positives).
    images = [dict(id=i, file_name=f'{i:03d}.jpg') for i in range(40)]
    anns = [
        dict(id=100 * i + c, image_id=i, category_id=c + 1, bbox=[0, 0, 1, 1], iscrowd=0)
        for i in range(40)
        for c in range(i % 8 + 1)
    ]
    for split in ('train', 'val'):
        write_coco(tmp_path / 'coco', split, images, anns, CATEGORIES)
    return str(tmp_path / 'coco')


def _build(name: str, key: str, root: str):
    cfg = Config.fromfile(config_path('_base_', 'datasets', name))
    with DefaultScope.overwrite_default_scope('mlkd'):
        return DATASETS.build(dict(cfg[key].dataset, data_root=root))


@pytest.mark.parametrize(
    'name, fraction',
    [
        ('coco2014_spml.py', None),
        ('coco2014_spml_partial75.py', 0.75),
        ('coco2014_spml_partial40.py', 0.4),
    ],
)
def test_observed_counts_of_the_shipped_configs(root, name, fraction):
    train = _build(name, 'train_dataloader', root)
    infos = [train.get_data_info(i) for i in range(len(train))]
    num_pos = np.array([len(i['gt_label_full']) for i in infos])
    kept = np.array([len(i['gt_label']) for i in infos])
    np.testing.assert_array_equal(num_pos, np.arange(40) % 8 + 1)
    # Hand-computed keep counts for k = 1..8 positives.
    expected = {None: [1] * 8, 0.75: [1, 2, 2, 3, 4, 5, 5, 6], 0.4: [1, 1, 1, 2, 2, 2, 3, 3]}
    np.testing.assert_array_equal(kept, np.array(expected[fraction])[num_pos - 1])
    for info in infos:
        assert set(info['gt_label']) <= set(info['gt_label_full'])
        assert sorted(info['gt_label'] + info['gt_label_ignored']) == list(range(80))
    val = _build(name, 'val_dataloader', root)
    assert [len(val.get_data_info(i)['gt_label']) for i in range(len(val))] == list(num_pos)
    assert 'gt_label_ignored' not in val.get_data_info(0)
