"""TinyImageNet on a tiny release in the real folder layout, and its dataset config."""

from __future__ import annotations

import os
import os.path as osp
import shutil

import mmcv
import pytest
import torch
from conftest import config_path, write_jpeg, write_tiny_imagenet
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import TinyImageNet
from mlkd.engine import MLKDRunner
from mlkd.registry import DATASETS, MODELS

mlkd.register_all_modules()
# File order of wnids.txt differs from the sorted order that defines the class indices.
WNIDS = ['n03000000', 'n01000000', 'n02000000']
SORTED = sorted(WNIDS)


@pytest.fixture
def root(tmp_path):
    path = tmp_path / 'tiny-imagenet-200'
    write_tiny_imagenet(path, WNIDS, train_per_class=2, val_per_class=2)
    return str(path)


def _grey(ds, i: int) -> float:
    return float(mmcv.imread(ds.get_data_info(i)['img_path']).mean())


def test_labels_are_sorted_wnid_indices(root):
    train = TinyImageNet(data_root=root, split='train')
    val = TinyImageNet(data_root=root, split='val')
    assert train.metainfo['classes'] == tuple(SORTED)
    assert train.metainfo['class_words'] == tuple(f'thing {w}, object' for w in SORTED)
    assert len(train) == 6 and len(val) == 6
    for ds in (train, val):
        for i in range(len(ds)):
            label = ds.get_data_info(i)['gt_label']
            # The fixture paints the images of the k-th wnid of the *file* order 40 * (k + 1).
            assert _grey(ds, i) == pytest.approx(40 * (WNIDS.index(SORTED[label]) + 1), abs=2)
    assert [val.get_data_info(i)['gt_label'] for i in range(6)] == [2, 2, 0, 0, 1, 1]
    assert sorted(train.get_gt_labels().tolist()) == [0, 0, 1, 1, 2, 2]


def test_samples_go_through_load_image(root):
    with DefaultScope.overwrite_default_scope('mlkd'):
        ds = DATASETS.build(
            dict(
                type='TinyImageNet',
                data_root=root,
                split='val',
                pipeline=[dict(type='LoadImageFromFile'), dict(type='PackInputs')],
            )
        )
    sample = ds[0]
    assert tuple(sample['inputs'].shape) == (3, 64, 64)
    assert sample['data_samples'].gt_label.tolist() == [2]


def _edit(path: str, old: str, new: str) -> None:
    with open(path) as file:
        text = file.read()
    assert old in text
    with open(path, 'w') as file:
        file.write(text.replace(old, new))


def test_a_val_wnid_not_in_wnids_is_named(root):
    path = osp.join(root, 'val', 'val_annotations.txt')
    _edit(path, 'val_3.JPEG\tn01000000', 'val_3.JPEG\tn04000000')
    with pytest.raises(
        ValueError, match=r"val_annotations.txt:4: wnid 'n04000000' is not in"
    ) as info:
        TinyImageNet(data_root=root, split='val')
    assert osp.join(root, 'wnids.txt') in str(info.value)
    TinyImageNet(data_root=root, split='train')  # the train split does not read val


def test_a_train_folder_not_in_wnids_is_named(root):
    write_jpeg(osp.join(root, 'train', 'n05000000', 'images', 'x.JPEG'), (64, 64))
    with pytest.raises(ValueError, match=r"class folders \['n05000000'\] that are not in"):
        TinyImageNet(data_root=root, split='train')


@pytest.mark.parametrize('split', ['train', 'val'])
def test_a_stray_ds_store_in_a_class_list_is_refused(root, split):
    """A ``.DS_Store`` among the class folders (macOS Finder) or listed in wnids.txt would sort
    first and shift every class index if counted: both are refused, naming the list."""
    with open(osp.join(root, 'train', '.DS_Store'), 'wb') as f:
        f.write(b'\0\0\0\1Bud1')
    if split == 'train':
        with pytest.raises(ValueError, match=r"train'? lists hidden entries \['\.DS_Store'\]"):
            TinyImageNet(data_root=root, split='train')
    os.remove(osp.join(root, 'train', '.DS_Store'))
    with open(osp.join(root, 'wnids.txt'), 'a') as f:
        f.write('.DS_Store\n')
    with pytest.raises(ValueError, match=r"wnids\.txt'? lists hidden entries \['\.DS_Store'\]"):
        TinyImageNet(data_root=root, split=split)


def test_a_missing_val_image_is_named(root):
    os.remove(osp.join(root, 'val', 'images', 'val_4.JPEG'))
    with pytest.raises(FileNotFoundError, match=r'val_annotations.txt:5: image .*val_4.JPEG'):
        TinyImageNet(data_root=root, split='val')


def test_a_class_without_training_images_is_named(root):
    shutil.rmtree(osp.join(root, 'train', 'n02000000', 'images'))
    with pytest.raises(FileNotFoundError, match=r'no .JPEG images in .*n02000000/images'):
        TinyImageNet(data_root=root, split='train')


@pytest.mark.parametrize(
    'file, old, new, error, match',
    [
        ('wnids.txt', 'n02000000', 'n01000000', ValueError, r"repeated: \['n01000000'\]"),
        (
            'words.txt',
            'n02000000\t',
            'n02999999\t',
            ValueError,
            r"no names for wnids \['n02000000'\]",
        ),
        (
            'val/val_annotations.txt',
            'val_0.JPEG\t',
            'val_0.JPEG ',
            ValueError,
            r'val_annotations.txt:1: expected 6 tab-separated fields',
        ),
    ],
)
def test_bad_index_files_are_named(root, file, old, new, error, match):
    _edit(osp.join(root, file), old, new)
    with pytest.raises(error, match=match):
        TinyImageNet(data_root=root, split='val')


def test_missing_root_files_and_bad_split(root, tmp_path):
    with pytest.raises(FileNotFoundError, match='data_root directory'):
        TinyImageNet(data_root=str(tmp_path / 'nowhere'))
    with pytest.raises(ValueError, match='split must be one of'):
        TinyImageNet(data_root=root, split='test')
    os.remove(osp.join(root, 'words.txt'))
    with pytest.raises(FileNotFoundError, match='words.txt'):
        TinyImageNet(data_root=root)


def test_config_builds_and_iterates(root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'tiny_imagenet.py'))
    assert [t['type'] for t in cfg.train_dataloader.dataset.pipeline] == [
        'LoadImageFromFile',
        'NumpyToPIL',
        'torchvision/RandomRotation',
        'torchvision/RandomHorizontalFlip',
        'PILToNumpy',
        'PackInputs',
    ]
    assert cfg.train_dataloader.dataset.pipeline[2].degrees == 20
    assert cfg.val_evaluator == dict(type='Accuracy', topk=(1, 5))
    with DefaultScope.overwrite_default_scope('mlkd'):
        preprocessor = MODELS.build(cfg.data_preprocessor)
        for key in ('train_dataloader', 'val_dataloader'):
            loader_cfg = cfg[key]
            loader_cfg.dataset.data_root = root
            loader_cfg.update(batch_size=3, num_workers=0, persistent_workers=False)
            loader = MLKDRunner.build_dataloader(loader_cfg)
            assert len(loader.dataset) == 6
            torch.manual_seed(0)  # torchvision's transforms draw from torch's generator
            batch = preprocessor(next(iter(loader)), training=key == 'train_dataloader')
            assert batch['inputs'].shape == (3, 3, 64, 64)
            assert all(s.gt_label.shape == (1,) for s in batch['data_samples'])
            # Rotating a flat image blackens its corners; the val pipeline leaves them alone.
            black = -torch.tensor(cfg.data_preprocessor.mean) / torch.tensor(
                cfg.data_preprocessor.std
            )
            corners_black = torch.isclose(batch['inputs'][:, :, 0, 0], black).all(1)
            assert corners_black.any() == (key == 'train_dataloader')
    # Unaugmented val input: the decoded image, BGR -> RGB, normalised per channel.
    img = mmcv.imread(loader.dataset.get_data_info(0)['img_path'])[..., ::-1].copy()
    img = torch.from_numpy(img).permute(2, 0, 1).float()
    mean = torch.tensor(cfg.data_preprocessor.mean).view(3, 1, 1)
    std = torch.tensor(cfg.data_preprocessor.std).view(3, 1, 1)
    torch.testing.assert_close(batch['inputs'][0], (img - mean) / std)
