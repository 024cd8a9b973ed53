"""CIFAR10 / CIFAR100 on tiny releases in the real pickle format; unsafe pickles are refused."""

from __future__ import annotations

import os
import os.path as osp
import pickle

import numpy as np
import pytest
import torch
from conftest import CIFAR_LAYOUTS, config_path, write_cifar_release
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.datasets import CIFAR10, CIFAR100
from mlkd.datasets.cifar import ForbiddenPickleGlobal, load_cifar_pickle
from mlkd.engine import MLKDRunner
from mlkd.registry import DATASETS, MODELS

mlkd.register_all_modules()
CLASSES = {'CIFAR10': CIFAR10, 'CIFAR100': CIFAR100}


def _path(root, dataset: str, name: str) -> str:
    return osp.join(str(root), CIFAR_LAYOUTS[dataset][0], name)


@pytest.mark.parametrize('protocol', [2, 5])
@pytest.mark.parametrize('dataset', sorted(CLASSES))
def test_images_and_labels_follow_the_files(tmp_path, dataset, protocol):
    written = write_cifar_release(tmp_path, dataset, per_file=3, protocol=protocol)
    _, train_files, test_files, *_ = CIFAR_LAYOUTS[dataset]
    for split, files in (('train', train_files), ('test', test_files)):
        ds = CLASSES[dataset](data_root=str(tmp_path), split=split)
        data = np.concatenate([written[name][0] for name in files])
        labels = sum((written[name][1] for name in files), [])
        assert len(ds) == len(labels)
        for i in range(len(ds)):
            info = ds.get_data_info(i)
            assert info['gt_label'] == labels[i]
            # Row layout: 1024 red, 1024 green, 1024 blue values, each row-major 32x32.
            planes = data[i].reshape(3, 32, 32)
            assert info['img'].shape == (32, 32, 3) and info['img'].dtype == np.uint8
            assert np.array_equal(info['img'][..., 0], planes[0])
            assert np.array_equal(info['img'][5, 7], planes[:, 5, 7])
    assert len(ds.metainfo['classes']) == (10 if dataset == 'CIFAR10' else 100)


def test_mmpretrain_class_rejects_a_copy_that_is_not_the_release(tmp_path):
    """Why mlkd subclasses: mmpretrain checks the release MD5 sums (and, by default, downloads)."""
    from mmpretrain.datasets import CIFAR10 as MMPretrainCIFAR10

    write_cifar_release(tmp_path, 'CIFAR10')
    with pytest.raises(RuntimeError, match='Cannot find CIFAR10'):
        MMPretrainCIFAR10(data_root=str(tmp_path), download=False)


class _SystemPayload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f'touch {self.marker}',)


class _ExecPayload(_SystemPayload):
    def __reduce__(self):
        return exec, (f'open({self.marker!r}, "w").close()',)


@pytest.mark.parametrize('payload', [_SystemPayload, _ExecPayload])
def test_a_pickle_payload_is_refused_and_does_not_run(tmp_path, payload):
    write_cifar_release(tmp_path, 'CIFAR10')
    marker = str(tmp_path / 'payload_ran')
    path = _path(tmp_path, 'CIFAR10', 'data_batch_2')
    with open(path, 'wb') as file:
        pickle.dump({'data': payload(marker), 'labels': [0]}, file, protocol=2)
    with pytest.raises(ForbiddenPickleGlobal, match='refusing to unpickle global') as info:
        CIFAR10(data_root=str(tmp_path))
    assert path in str(info.value)
    assert ('.system' if payload is _SystemPayload else '.exec') in str(info.value)
    assert not osp.exists(marker)
    # The same file does run the payload under plain pickle: the test exercises a real payload.
    with open(path, 'rb') as file:
        pickle.load(file)
    assert osp.exists(marker)


def test_bytes_keys_are_read(tmp_path):
    path = str(tmp_path / 'batch')
    with open(path, 'wb') as file:
        pickle.dump({b'data': np.zeros((1, 3072), np.uint8), b'labels': [3]}, file)
    entry = load_cifar_pickle(path)
    assert entry['labels'] == [3] and entry['data'].shape == (1, 3072)


def test_numpy_1_module_names_are_read(tmp_path):
    """The released files (numpy 1, Python 2) name ``numpy.core.multiarray._reconstruct``."""
    data = np.arange(2 * 3072).astype(np.uint8).reshape(2, 3072)
    raw = pickle.dumps({'data': data, 'labels': [1, 2]}, protocol=2)
    if b'numpy._core.multiarray' in raw:  # written by numpy 2: respell as numpy 1 did
        raw = raw.replace(b'cnumpy._core.multiarray\n', b'cnumpy.core.multiarray\n')
    assert b'cnumpy.core.multiarray\n_reconstruct' in raw
    path = tmp_path / 'batch'
    path.write_bytes(raw)
    entry = load_cifar_pickle(str(path))
    assert np.array_equal(entry['data'], data) and entry['labels'] == [1, 2]


def _damage(path: str, how: str) -> None:
    entry = load_cifar_pickle(path)
    if how == 'truncated':
        with open(path, 'rb') as file:
            raw = file.read()
        with open(path, 'wb') as file:
            file.write(raw[: len(raw) // 2])
        return
    if how == 'label_out_of_range':
        entry['labels'][1] = 10
    elif how == 'negative_label':
        entry['labels'][0] = -1
    elif how == 'wrong_row_length':
        entry['data'] = entry['data'][:, :3000]
    elif how == 'float_data':
        entry['data'] = entry['data'].astype(np.float32)
    elif how == 'missing_labels':
        del entry['labels']
    elif how == 'label_count':
        entry['labels'] = entry['labels'][:-1]
    elif how == 'not_a_dict':
        entry = [entry['data']]
    with open(path, 'wb') as file:
        pickle.dump(entry, file, protocol=2)


@pytest.mark.parametrize(
    'how, error, match',
    [
        ('truncated', ValueError, 'truncated or corrupt CIFAR pickle'),
        ('label_out_of_range', ValueError, r'labels\[1\] = 10 is outside \[0, 10\)'),
        ('negative_label', ValueError, r'labels\[0\] = -1 is outside'),
        ('wrong_row_length', ValueError, r"'data' must be a uint8 array \[N, 3072\]"),
        ('float_data', ValueError, "'data' must be a uint8 array"),
        ('missing_labels', KeyError, "no key 'labels'"),
        ('label_count', ValueError, "'labels' must hold 4 integers"),
        ('not_a_dict', ValueError, 'expected a pickled dict, got list'),
    ],
)
def test_a_bad_batch_is_named(tmp_path, how, error, match):
    write_cifar_release(tmp_path, 'CIFAR10')
    path = _path(tmp_path, 'CIFAR10', 'data_batch_3')
    _damage(path, how)
    with pytest.raises(error, match=match) as info:
        CIFAR10(data_root=str(tmp_path))
    assert path in str(info.value)


def test_missing_files_meta_and_download(tmp_path):
    with pytest.raises(FileNotFoundError, match='data_root directory'):
        CIFAR100(data_root=str(tmp_path / 'nowhere'))
    write_cifar_release(tmp_path, 'CIFAR100')
    os.remove(_path(tmp_path, 'CIFAR100', 'test'))
    with pytest.raises(FileNotFoundError, match='cifar-100-python/test') as info:
        CIFAR100(data_root=str(tmp_path), split='train')
    assert 'cifar-100-python.tar.gz' in str(info.value)
    write_cifar_release(tmp_path, 'CIFAR100')
    meta = _path(tmp_path, 'CIFAR100', 'meta')
    with open(meta, 'wb') as file:
        pickle.dump({'fine_label_names': ['apple'] * 100}, file, protocol=2)
    with pytest.raises(ValueError, match='differ from the dataset classes') as info:
        CIFAR100(data_root=str(tmp_path))
    assert meta in str(info.value)
    with pytest.raises(ValueError, match='never downloads'):
        CIFAR100(data_root=str(tmp_path), download=True)


def test_registered_in_the_mlkd_scope(tmp_path):
    write_cifar_release(tmp_path, 'CIFAR10')
    with DefaultScope.overwrite_default_scope('mlkd'):
        ds = DATASETS.build(dict(type='CIFAR10', data_root=str(tmp_path), split='test'))
    assert isinstance(ds, CIFAR10)


@pytest.mark.parametrize(
    'name, dataset, mean',
    [
        ('cifar100.py', 'CIFAR100', (0.5071, 0.4867, 0.4408)),
        ('cifar10.py', 'CIFAR10', (0.4914, 0.4822, 0.4465)),
    ],
)
def test_config_builds_and_iterates(tmp_path, name, dataset, mean):
    write_cifar_release(tmp_path, dataset, per_file=6)
    cfg = Config.fromfile(config_path('_base_', 'datasets', name))
    assert [t['type'] for t in cfg.train_dataloader.dataset.pipeline] == [
        'RandomCrop',
        'RandomFlip',
        'PackInputs',
    ]
    crop = cfg.train_dataloader.dataset.pipeline[0]
    assert (crop.crop_size, crop.padding, crop.pad_val) == (32, 4, 0)
    assert cfg.data_preprocessor.mean == pytest.approx([m * 255 for m in mean])
    assert cfg.val_evaluator == dict(type='Accuracy', topk=(1, 5))
    with DefaultScope.overwrite_default_scope('mlkd'):
        preprocessor = MODELS.build(cfg.data_preprocessor)
        _, train_files, test_files, *_ = CIFAR_LAYOUTS[dataset]
        for key, split, files in (
            ('train_dataloader', 'train', train_files),
            ('val_dataloader', 'test', test_files),
        ):
            loader_cfg = cfg[key]
            loader_cfg.dataset.data_root = str(tmp_path)
            loader_cfg.update(batch_size=4, num_workers=0, persistent_workers=False)
            loader = MLKDRunner.build_dataloader(loader_cfg)
            assert loader.dataset.split == split and len(loader.dataset) == 6 * len(files)
            batch = preprocessor(next(iter(loader)), training=key == 'train_dataloader')
            assert batch['inputs'].shape == (4, 3, 32, 32)
            assert batch['inputs'].dtype == torch.float32
            assert all(s.gt_label.shape == (1,) for s in batch['data_samples'])
    # The test batch is unaugmented: the first input is the first test image, normalised.
    img = torch.from_numpy(loader.dataset.get_data_info(0)['img']).permute(2, 0, 1).float()
    std = torch.tensor(cfg.data_preprocessor.std).view(3, 1, 1)
    expected = (img - torch.tensor(cfg.data_preprocessor.mean).view(3, 1, 1)) / std
    torch.testing.assert_close(batch['inputs'][0], expected)
