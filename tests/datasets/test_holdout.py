"""Cole et al.'s train / val hold-out: published sizes, disjoint parts, the shipped config."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import config_path, write_coco
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets.holdout import holdout_rows
from mlkd.registry import DATASETS

mlkd.register_all_modules()


@pytest.mark.parametrize(
    'num_rows, train, val',
    [
        (82081, 65665, 16416),  # COCO, SCL Table K.1
        (5994, 4795, 1199),  # CUB
        (5717, 4574, 1143),
    ],
)  # VOC 2012
def test_part_sizes_are_the_published_ones_and_disjoint(num_rows, train, val):
    t, v = holdout_rows(num_rows, 'train'), holdout_rows(num_rows, 'val')
    assert (len(t), len(v)) == (train, val)
    np.testing.assert_array_equal(np.sort(np.concatenate([t, v])), np.arange(num_rows))


def test_parts_follow_the_legacy_random_state_permutation():
    order = np.random.RandomState(1200).permutation(10)  # 2 val rows: the permutation's last two
    np.testing.assert_array_equal(holdout_rows(10, 'val'), np.sort(order[-2:]))
    np.testing.assert_array_equal(
        holdout_rows(10, 'train', seed=3), np.sort(np.random.RandomState(3).permutation(10)[:8])
    )


def test_cole_split_config_on_a_tiny_coco(tmp_path):
    root = tmp_path / 'coco'
    cats = [dict(id=i + 1, name=f'c{i:02d}') for i in range(80)]
    images = [dict(id=i, file_name=f'COCO_train2014_{i:012d}.jpg') for i in range(1, 11)]
    anns = [dict(id=i, image_id=i, category_id=1 + i % 3, bbox=[0, 0, 1, 1]) for i in range(1, 11)]
    anns += [dict(id=100 + i, image_id=i, category_id=5, bbox=[0, 0, 1, 1]) for i in range(1, 11)]
    write_coco(root, 'train', images, anns, cats)
    write_coco(root, 'val', images[:3], anns[:3], cats)
    # Cole's rows: image ids sorted as strings ('1', '10', '2', ...), names relative to data/coco.
    ids = sorted(str(i) for i in range(1, 11))
    np.save(
        root / 'formatted_train_images.npy',
        np.array([f'train2014/COCO_train2014_{int(i):012d}.jpg' for i in ids]),
    )
    obs = np.zeros((10, 80))
    obs[:, 4] = 1  # class id 5 -> index 4 in category_id order
    np.save(root / 'formatted_train_labels_obs.npy', obs)
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'coco2014_spml_cole_split.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        sets = {
            key: DATASETS.build(dict(cfg[key].dataset, data_root=str(root)))
            for key in ('train_dataloader', 'val_dataloader', 'test_dataloader')
        }
    coco_ids = {
        key: [ds.get_data_info(i)['coco_id'] for i in range(len(ds))] for key, ds in sets.items()
    }
    expected_val = sorted(int(ids[r]) for r in holdout_rows(10, 'val'))
    assert sorted(coco_ids['val_dataloader']) == expected_val
    assert sorted(coco_ids['train_dataloader'] + expected_val) == list(range(1, 11))
    assert coco_ids['test_dataloader'] == [1, 2, 3]
    train = sets['train_dataloader']
    assert all(train.get_data_info(i)['gt_label'] == [4] for i in range(len(train)))
    assert all(
        len(sets['val_dataloader'].get_data_info(i)['gt_label']) == 2
        for i in range(len(sets['val_dataloader']))
    )
