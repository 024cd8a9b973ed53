"""Every config of the 3D paper's comparison trains with its augmentation: a random horizontal
flip (supplement §A, the weak view), before the strong augmentation of the single-view pipeline
or in every view of a two-view pipeline."""
import glob
import os.path as osp

import pytest
from mmengine.config import Config

from conftest import REPO

#: The method folders of the comparison (3D and its baselines) and the networks they train.
FOLDERS = ('3d', 'l2d', 'mdkd', 'mld', 'mse', 'ps', 'rkd', 'pkt', 'reviewkd', 'kd', 'teachers',
           'students')
DATASETS = ('coco', 'voc', 'nuswide')


def comparison_configs() -> list[str]:
    paths = []
    for folder in FOLDERS:
        for path in sorted(glob.glob(osp.join(REPO, 'configs', folder, '*.py'))):
            if any(f'_{d}_' in osp.basename(path) or osp.basename(path).startswith(f'{d}_')
                   for d in DATASETS):
                paths.append(osp.relpath(path, osp.join(REPO, 'configs')))
    return paths


def _flips(transforms) -> list[list[dict]]:
    """The flips each view gets: one list per view (one view without MultiView)."""
    for t in transforms:
        if t['type'] == 'MultiView':
            return [[u for u in view if u['type'] == 'RandomFlip'] for view in t['transforms']]
    return [[t for t in transforms if t['type'] == 'RandomFlip']]


def test_the_comparison_has_configs_on_each_dataset():
    names = comparison_configs()
    assert len(names) >= 90
    assert any('voc' in n for n in names) and any('coco' in n for n in names)


@pytest.mark.parametrize('name', comparison_configs())
def test_trains_with_a_random_horizontal_flip(name):
    cfg = Config.fromfile(osp.join(REPO, 'configs', name))
    for flips in _flips(cfg.train_dataloader.dataset.pipeline):
        assert len(flips) == 1, f'{name}: a view without exactly one flip: {flips}'
        assert flips[0]['direction'] == 'horizontal' and flips[0]['prob'] == 0.5
    test_types = [t['type'] for t in cfg.test_dataloader.dataset.pipeline]
    assert 'RandomFlip' not in test_types


def voc2007_configs() -> list[str]:
    """The comparison's Pascal VOC 2007 configs (L2D protocol)."""
    return [name for name in comparison_configs() if 'voc' in osp.basename(name)]


def test_the_comparison_has_45_voc2007_configs():
    assert len(voc2007_configs()) == 45


@pytest.mark.parametrize('name', voc2007_configs())
def test_voc2007_counts_difficult_objects_as_positives(name):
    """L2D's protocol, which the 3D paper evaluates in: every annotated object is a positive,
    "difficult" ones included, at test and validation time as in training."""
    cfg = Config.fromfile(osp.join(REPO, 'configs', name))
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset = cfg[loader].dataset
        assert dataset.type == 'VOCMultiLabel' and dataset.data_root.endswith('VOC2007'), loader
        assert dataset.difficult_policy == 'positive', f'{name}: {loader}'
