"""VOCMultiLabel on VOC 2012 with the single-positive config (Cole et al.'s splits, as used by
Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from Single-Label
Annotations", WACV 2023)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import config_path, write_voc
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.registry import DATASETS

mlkd.register_all_modules()
OBJECTS = {
    '2008_000001': [('dog', 0), ('person', 0), ('cat', 1)],
    '2008_000002': [('car', 0)],
    '2008_000003': [('bus', 1)],  # difficult only: no positive under 'negative'
    '2008_000004': [('sheep', 0), ('cow', 0)],
}


@pytest.fixture
def root(tmp_path):
    path = tmp_path / 'VOCdevkit' / 'VOC2012'
    write_voc(
        path,
        OBJECTS,
        {
            'train': ['2008_000001', '2008_000002', '2008_000003'],
            'val': ['2008_000004', '2008_000001'],
        },
    )
    return str(path)


def _build(cfg_dataset, root):
    with DefaultScope.overwrite_default_scope('mlkd'):
        return DATASETS.build(dict(cfg_dataset, data_root=root))


def test_voc2012_config_single_positive_train_full_val(root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'voc2012_spml.py'))
    train = _build(cfg.train_dataloader.dataset, root)
    classes = train.metainfo['classes']
    infos = [train.get_data_info(i) for i in range(len(train))]
    full = [[classes[c] for c in i['gt_label_full']] for i in infos]
    assert full == [['dog', 'person'], ['car'], []]  # difficult cat / bus are negatives
    assert [len(i['gt_label']) for i in infos] == [1, 1, 0]
    assert set(infos[0]['gt_label']) <= set(infos[0]['gt_label_full'])
    assert infos[2]['gt_label_ignored'] == list(range(20))  # nothing observed
    val = _build(cfg.val_dataloader.dataset, root)
    assert [sorted(classes[c] for c in val.get_data_info(i)['gt_label']) for i in range(2)] == [
        ['cow', 'sheep'],
        ['dog', 'person'],
    ]
    assert 'gt_label_ignored' not in val.get_data_info(0)
    sample = train[0]
    assert tuple(sample['inputs'].shape) == (3, 448, 448)
    assert sample['data_samples'].gt_label_full == infos[0]['gt_label_full']


def test_a_corrupt_image_error_names_the_file(root):
    with open(f'{root}/JPEGImages/2008_000002.jpg', 'wb') as f:
        f.write(b'not a jpeg')
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'voc2012_spml.py'))
    val = _build(dict(cfg.val_dataloader.dataset, split='train'), root)
    with pytest.raises(Exception, match=r'2008_000002\.jpg'):
        val[1]
    np.testing.assert_array_equal(val[0]['inputs'].shape, (3, 448, 448))
