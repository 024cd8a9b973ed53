"""ImageNetReaL on a tiny real.json and flat val folder, and its config."""

from __future__ import annotations

import json
import os.path as osp

import pytest
from conftest import config_path, write_jpeg
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import ImageNetReaL
from mlkd.registry import DATASETS

mlkd.register_all_modules()
REAL = [[7], [], [999, 3, 3], [0]]


@pytest.fixture
def root(tmp_path):
    (tmp_path / 'real.json').write_text(json.dumps(REAL))
    for number in range(1, len(REAL) + 1):
        write_jpeg(tmp_path / 'val' / f'ILSVRC2012_val_{number:08d}.JPEG', (40, 30))
    return str(tmp_path)


def test_labels_follow_file_numbers_and_empty_lists_are_dropped(root):
    ds = ImageNetReaL(data_root=root)
    infos = [ds.get_data_info(i) for i in range(len(ds))]
    assert [(osp.basename(i['img_path']), i['gt_label']) for i in infos] == [
        ('ILSVRC2012_val_00000001.JPEG', [7]),
        ('ILSVRC2012_val_00000003.JPEG', [3, 999]),
        ('ILSVRC2012_val_00000004.JPEG', [0]),
    ]
    assert len(ds.metainfo['classes']) == 1000
    with_empty = ImageNetReaL(data_root=root, keep_empty=True)
    assert [with_empty.get_data_info(i)['gt_label'] for i in range(4)] == [[7], [], [3, 999], [0]]


def test_bad_entries_and_missing_images_are_named(root):
    with open(osp.join(root, 'real.json'), 'w') as f:
        json.dump([[7], [1000]], f)
    with pytest.raises(ValueError, match=r'real\.json: entry 1 \(\[1000\]\)'):
        ImageNetReaL(data_root=root)
    with open(osp.join(root, 'real.json'), 'w') as f:
        json.dump(REAL + [[5]], f)
    with pytest.raises(FileNotFoundError, match=r'ILSVRC2012_val_00000005\.JPEG'):
        ImageNetReaL(data_root=root)


def test_config_pipeline(root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'imagenet_real.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        ds = DATASETS.build(dict(cfg.test_dataloader.dataset, data_root=root))
    out = ds[1]
    assert tuple(out['inputs'].shape) == (3, 224, 224)
    assert out['data_samples'].gt_label.tolist() == [3, 999]
