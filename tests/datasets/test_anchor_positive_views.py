"""AnchorPositiveViews and the two-view teacher dataset bases: two independent augmentations of the
same image, keyed by (seed, epoch, sample index), batched as [anchor, positive]."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import config_path, write_cifar_release, write_tiny_imagenet
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import KeyedDataset
from mlkd.datasets.transforms import AnchorPositiveViews
from mlkd.engine import MLKDRunner
from mlkd.registry import DATASETS, MODELS, TRANSFORMS
from mlkd.utils.sample_seed import SampleKey

mlkd.register_all_modules()

CROP_FLIP = [
    dict(type='RandomCrop', crop_size=32, padding=4, padding_mode='constant', pad_val=0),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]


def _crops_and_flips(img: np.ndarray, padding: int) -> np.ndarray:
    """Every output of crop(size of ``img``, zero ``padding``) + optional horizontal flip:
    ``[2 * (2p + 1)^2, H, W, C]``."""
    h, w = img.shape[:2]
    padded = np.pad(img, ((padding, padding), (padding, padding), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (h, w), axis=(0, 1))
    windows = windows.transpose(0, 1, 3, 4, 2).reshape(-1, h, w, img.shape[2])
    return np.concatenate([windows, windows[:, :, ::-1]])


def _is_a_crop_flip_of(view: np.ndarray, img: np.ndarray, padding: int) -> bool:
    return bool((_crops_and_flips(img, padding) == view).all(axis=(1, 2, 3)).any())


@pytest.fixture(scope='module')
def cifar_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('cifar')
    write_cifar_release(root, 'CIFAR100', per_file=8)
    write_cifar_release(root, 'CIFAR10', per_file=2)
    return str(root)


def _dataset(cfg: Config, root: str):
    dataset = dict(cfg.train_dataloader.dataset, data_root=root)
    with DefaultScope.overwrite_default_scope('mlkd'):
        return KeyedDataset(DATASETS.build(dataset))  # fetched as MLKDRunner's loaders fetch


def test_views_are_two_different_augmentations_of_the_same_image(cifar_root):
    cfg = Config.fromfile(config_path('_base_', 'datasets', 'cifar100_anchor_positive.py'))
    ds = _dataset(cfg, cifar_root)
    differ = []
    for index in range(len(ds)):
        sample = ds[SampleKey(index, seed=3, epoch=0)]
        anchor, positive = (view.permute(1, 2, 0).numpy() for view in sample['inputs'])
        original = ds.get_data_info(index)['img']
        assert anchor.shape == positive.shape == (32, 32, 3)
        assert _is_a_crop_flip_of(anchor, original, 4) and _is_a_crop_flip_of(positive, original, 4)
        differ.append(not np.array_equal(anchor, positive))
        assert sample['data_samples'].gt_label.tolist() == [ds.get_data_info(index)['gt_label']]
    # 162 crop/flip outcomes per view: a coincidence is possible but rare.
    assert sum(differ) >= len(differ) - 1


def test_views_keep_the_keyed_randomness_and_the_anchor_is_the_single_view_sample(cifar_root):
    two = _dataset(
        Config.fromfile(config_path('_base_', 'datasets', 'cifar100_anchor_positive.py')),
        cifar_root,
    )
    one = _dataset(Config.fromfile(config_path('_base_', 'datasets', 'cifar100.py')), cifar_root)
    for index in (0, 5):
        key = SampleKey(index, seed=7, epoch=2)
        first, again = two[key], two[SampleKey(index, seed=7, epoch=2)]
        assert all(torch.equal(a, b) for a, b in zip(first['inputs'], again['inputs']))
        # The anchor is what the single-view pipeline gives under the same key.
        assert torch.equal(first['inputs'][0], one[key]['inputs'])
    # Other epochs (or seeds) draw other views, for some sample at least.
    changed = [
        not all(
            torch.equal(a, b)
            for a, b in zip(
                two[SampleKey(i, seed=7, epoch=2)]['inputs'],
                two[SampleKey(i, seed=7, epoch=e)]['inputs'],
            )
        )
        for i in range(len(two))
        for e in (3, 4)
    ]
    assert sum(changed) >= len(changed) - 1


@pytest.mark.parametrize(
    'name, dataset, size',
    [
        ('cifar100_anchor_positive.py', 'CIFAR100', 32),
        ('cifar10_anchor_positive.py', 'CIFAR10', 32),
        ('tiny_imagenet_anchor_positive.py', 'TinyImageNet', 64),
    ],
)
def test_config_batches_anchor_and_positive_for_the_multi_view_preprocessor(
    name, dataset, size, cifar_root, tmp_path
):
    cfg = Config.fromfile(config_path('_base_', 'datasets', name))
    root = cifar_root
    if dataset == 'TinyImageNet':
        root = str(tmp_path / 'tiny')
        write_tiny_imagenet(root, ['n01000000', 'n02000000'], train_per_class=2)
    assert cfg.train_dataloader.batch_size == 256  # the paper's teacher batch
    assert cfg.train_dataloader.dataset.type == dataset
    views = cfg.train_dataloader.dataset.pipeline[-2]
    assert views.type == 'AnchorPositiveViews'
    crop, flip = views.transforms
    assert (crop.type, crop.crop_size, crop.padding, crop.pad_val) == (
        'RandomCrop',
        size,
        size // 8,
        0,
    )
    assert (flip.type, flip.prob, flip.direction) == ('RandomFlip', 0.5, 'horizontal')
    assert cfg.data_preprocessor.type == 'MultiViewClsDataPreprocessor'
    with DefaultScope.overwrite_default_scope('mlkd'):
        preprocessor = MODELS.build(cfg.data_preprocessor)
        loader_cfg = cfg.train_dataloader
        loader_cfg.dataset.data_root = root
        loader_cfg.update(batch_size=4, num_workers=0, persistent_workers=False)
        loader = MLKDRunner.build_dataloader(loader_cfg, seed=11)
        raw = next(iter(loader))  # collated: raw["inputs"][view][sample]
        batch = preprocessor(raw, training=True)
    anchor, positive = batch['inputs']
    assert anchor.shape == positive.shape == (4, 3, size, size)
    assert not torch.equal(anchor, positive)
    # Single-label: integer labels, no one-hot score.
    assert all(s.gt_label.shape == (1,) and 'gt_score' not in s for s in batch['data_samples'])
    # Each view is normalised on its own (BGR -> RGB for the image files).
    mean = torch.tensor(cfg.data_preprocessor.mean).view(3, 1, 1)
    std = torch.tensor(cfg.data_preprocessor.std).view(3, 1, 1)
    order = [2, 1, 0] if cfg.data_preprocessor.to_rgb else [0, 1, 2]
    for v, view in enumerate((anchor, positive)):
        expected = (raw['inputs'][v][0][order].float() - mean) / std
        torch.testing.assert_close(view[0], expected)


def test_registered_and_validated():
    with DefaultScope.overwrite_default_scope('mlkd'):
        views = TRANSFORMS.build(dict(type='AnchorPositiveViews', transforms=CROP_FLIP))
    assert isinstance(views, AnchorPositiveViews)
    assert 'RandomCrop' in repr(views)
    for bad in ([], None, dict(type='RandomFlip', prob=0.5)):
        with pytest.raises(ValueError, match='non-empty list of augmentation'):
            AnchorPositiveViews(bad)
    sizes = iter([(32, 32, 3), (28, 28, 3)])

    def random_size(results: dict) -> dict:
        results['img'] = np.zeros(next(sizes), np.uint8)
        return results

    with pytest.raises(ValueError, match=r'\(32, 32, 3\) but the positive \(28, 28, 3\)'):
        AnchorPositiveViews([random_size])(dict(img=np.zeros((32, 32, 3), np.uint8), sample_idx=4))


def test_other_keys_are_the_samples_own():
    img = np.arange(32 * 32 * 3, dtype=np.uint8).reshape(32, 32, 3)
    results = AnchorPositiveViews(CROP_FLIP)(dict(img=img.copy(), gt_label=3, sample_idx=9))
    assert len(results['img']) == 2 and results['gt_label'] == 3 and results['sample_idx'] == 9
    assert np.array_equal(img, np.arange(32 * 32 * 3, dtype=np.uint8).reshape(32, 32, 3))
