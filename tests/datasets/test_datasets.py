"""Tests of the MultiDigits demo dataset and the MultiLabelImageList path-based dataset."""

from __future__ import annotations

import time

import numpy as np
import pytest

from mlkd.datasets import MultiDigits, MultiLabelImageList, export_image_folder
from mlkd.datasets.multidigits import load_digit_scans

# Small sizes keep the file fast; the defaults are exercised once in test_default_sizes.
SMALL = dict(num_samples=200)


def _images(ds: MultiDigits) -> np.ndarray:
    return np.stack([ds.get_data_info(i)['img'] for i in range(len(ds))])


def _labels(ds: MultiDigits, key: str = 'gt_label') -> list[list[int]]:
    return [ds.get_data_info(i)[key] for i in range(len(ds))]


def test_default_sizes_and_metainfo():
    start = time.perf_counter()
    train = MultiDigits(split='train')
    val = MultiDigits(split='val')
    print(f'default train+val materialisation: {time.perf_counter() - start:.2f} s')
    assert len(train) == 2000 and len(val) == 500
    assert train.metainfo['classes'] == tuple(str(i) for i in range(10))
    info = train.get_data_info(3)
    assert info['img'].shape == (32, 32, 3) and info['img'].dtype == np.uint8
    assert info['img_shape'] == info['ori_shape'] == (32, 32)
    assert info['sample_idx'] == 3
    # Every class must occur, otherwise per-class metrics on the demo are undefined.
    assert train.get_label_matrix().sum(0).min() > 0
    assert val.get_label_matrix().sum(0).min() > 0


def test_determinism():
    a = MultiDigits(seed=3, **SMALL)
    b = MultiDigits(seed=3, **SMALL)
    c = MultiDigits(seed=4, **SMALL)
    np.testing.assert_array_equal(_images(a), _images(b))
    assert _labels(a) == _labels(b)
    assert not np.array_equal(_images(a), _images(c))
    assert _labels(a) != _labels(c)


def test_train_val_disjoint_sources():
    # Different sampling seeds must not break the partition: it depends on split_seed only.
    train = MultiDigits(split='train', seed=0, **SMALL)
    val = MultiDigits(split='val', seed=1, **SMALL)
    assert len(np.intersect1d(train.source_indices, val.source_indices)) == 0
    assert len(train.source_indices) + len(val.source_indices) == len(load_digit_scans()[0])
    for ds in (train, val):
        used = {s for i in range(len(ds)) for s in ds.get_data_info(i)['source_ids'] if s >= 0}
        assert used <= set(ds.source_indices.tolist())


def test_test_split_is_disjoint_and_leaves_val_unchanged():
    fractions = dict(val_fraction=0.2, test_fraction=0.2)
    pools = {
        split: MultiDigits(split=split, seed=i, **fractions, **SMALL)
        for i, split in enumerate(('train', 'val', 'test'))
    }
    num_scans = len(load_digit_scans()[0])
    sets = {k: set(ds.source_indices.tolist()) for k, ds in pools.items()}
    assert not (
        sets['train'] & sets['val'] or sets['train'] & sets['test'] or sets['val'] & sets['test']
    )
    assert sum(map(len, sets.values())) == num_scans
    assert len(sets['test']) == round(0.2 * num_scans)
    for ds in pools.values():
        used = {s for i in range(len(ds)) for s in ds.get_data_info(i)['source_ids'] if s >= 0}
        assert used <= set(ds.source_indices.tolist())
    # The test pool is carved out of train: val is the same as without a test split, and the
    # default (no test pool) keeps the train pool of earlier versions.
    no_test = {
        s: set(MultiDigits(split=s, val_fraction=0.2, **SMALL).source_indices.tolist())
        for s in ('train', 'val')
    }
    assert no_test['val'] == sets['val']
    assert no_test['train'] == sets['train'] | sets['test']
    with pytest.raises(ValueError, match='test_fraction > 0'):
        MultiDigits(split='test', **SMALL)
    with pytest.raises(ValueError, match='no scans for train'):
        MultiDigits(split='train', val_fraction=0.6, test_fraction=0.4, **SMALL)


def test_labels_match_placed_digits_and_cells_are_drawn():
    ds = MultiDigits(max_digits=4, **SMALL)
    _, targets = load_digit_scans()
    cell = ds.cell_size
    counts = set()
    for i in range(len(ds)):
        info = ds.get_data_info(i)
        cells, sources = np.array(info['cell_labels']), np.array(info['source_ids'])
        occupied = cells >= 0
        np.testing.assert_array_equal(occupied, sources >= 0)
        # Cell identities come from the source scans' own targets.
        np.testing.assert_array_equal(cells[occupied], targets[sources[occupied]])
        assert info['gt_label'] == sorted(set(cells[occupied].tolist()))
        assert info['gt_label'] == info['gt_label_full']
        counts.add(int(occupied.sum()))
        # Independent check on the pixels: drawn cells have bright strokes, empty ones only noise.
        img = info['img'][:, :, 0]
        assert (info['img'] == img[:, :, None]).all()
        for k in range(ds.grid * ds.grid):
            r, q = divmod(k, ds.grid)
            peak = img[r * cell : (r + 1) * cell, q * cell : (q + 1) * cell].max()
            if occupied[k]:
                assert peak > 64, (i, k, peak)
            else:
                assert peak <= ds.noise, (i, k, peak)
    assert counts == {1, 2, 3, 4}


def test_single_label_variant():
    ds = MultiDigits(variant='single_label', **SMALL)
    for labels in _labels(ds):
        assert len(labels) == 1
    for info in (ds.get_data_info(i) for i in range(len(ds))):
        assert sum(v >= 0 for v in info['cell_labels']) == 1


def test_single_positive_variant():
    multi = MultiDigits(variant='multi_label', **SMALL)
    single = MultiDigits(variant='single_positive', **SMALL)
    # Same images and full labels as multi_label; only the training target differs.
    np.testing.assert_array_equal(_images(multi), _images(single))
    assert _labels(single, 'gt_label_full') == _labels(multi)
    for target, full in zip(_labels(single), _labels(single, 'gt_label_full')):
        assert len(target) == 1 and target[0] in full
    # The choice of positive is seeded, hence reproducible.
    assert _labels(single) == _labels(MultiDigits(variant='single_positive', **SMALL))
    # Some multi-positive image must actually lose labels, or the variant is a no-op.
    assert any(len(f) > 1 for f in _labels(single, 'gt_label_full'))

    val = MultiDigits(split='val', variant='single_positive', **SMALL)
    assert _labels(val) == _labels(val, 'gt_label_full')
    assert any(len(labels) > 1 for labels in _labels(val))


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(max_digits=5, grid=2), 'max_digits'),
        (dict(variant='partial'), 'variant'),
        (dict(image_size=30, grid=4), 'divisible'),
        (dict(split='test'), 'split'),
        (dict(num_samples=0), 'num_samples'),
    ],
)
def test_argument_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiDigits(**kwargs)


def test_other_geometry():
    ds = MultiDigits(image_size=48, grid=3, max_digits=6, num_samples=50)
    info = ds.get_data_info(0)
    assert info['img'].shape == (48, 48, 3)
    assert len(info['cell_labels']) == 9
    assert max(len(labels) for labels in _labels(ds)) <= 6


def test_build_through_registry():
    from mmengine.registry import init_default_scope
    from mmpretrain.structures import DataSample

    from mlkd.registry import DATASETS

    init_default_scope('mlkd')
    ds = DATASETS.build(
        dict(
            type='MultiDigits',
            split='val',
            num_samples=20,
            pipeline=[
                dict(type='RandomFlip', prob=0.5),
                dict(type='PackInputs', algorithm_keys=['gt_label_full']),
            ],
        )
    )
    assert isinstance(ds, MultiDigits)
    item = ds[5]
    sample = item['data_samples']
    assert isinstance(sample, DataSample)
    assert item['inputs'].shape == (3, 32, 32)
    assert sample.gt_label.tolist() == ds.get_data_info(5)['gt_label']
    assert sample.gt_label_full == ds.get_data_info(5)['gt_label_full']


def _write_list(tmp_path, lines: list[str], classes=('a', 'b', 'c')) -> dict:
    root = tmp_path / 'root'
    (root / 'imgs').mkdir(parents=True, exist_ok=True)
    (root / 'ann.txt').write_text('\n'.join(lines) + '\n')
    return dict(data_root=str(root), ann_file='ann.txt', classes=list(classes))


def test_image_list_missing_data_root(tmp_path):
    missing = tmp_path / 'nowhere'
    with pytest.raises(FileNotFoundError) as err:
        MultiLabelImageList(data_root=str(missing), ann_file='ann.txt', classes=['a'])
    assert str(missing) in str(err.value) and 'data_root' in str(err.value)


def test_image_list_missing_ann_file(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        MultiLabelImageList(data_root=str(tmp_path), ann_file='absent.txt', classes=['a'])
    assert 'absent.txt' in str(err.value) and 'ann_file' in str(err.value)


def test_image_list_bad_label(tmp_path):
    cfg = _write_list(tmp_path, ['# header', 'imgs/x.png 0 1', '', 'imgs/y.png 2 7'])
    with pytest.raises(ValueError) as err:
        MultiLabelImageList(check_files=False, **cfg)
    message = str(err.value)
    assert 'ann.txt:4' in message and '7' in message and '3 classes' in message


def test_image_list_non_integer_label(tmp_path):
    cfg = _write_list(tmp_path, ['imgs/x.png 0 b'])
    with pytest.raises(ValueError, match=r'ann\.txt:1'):
        MultiLabelImageList(check_files=False, **cfg)


def test_image_list_missing_image(tmp_path):
    cfg = _write_list(tmp_path, ['imgs/x.png 0', 'imgs/y.png 1'])
    (tmp_path / 'root' / 'imgs' / 'x.png').write_bytes(b'')
    with pytest.raises(FileNotFoundError) as err:
        MultiLabelImageList(**cfg)
    assert 'y.png' in str(err.value) and 'ann.txt:2' in str(err.value)
    assert 'x.png' not in str(err.value)
    # Deferred checking builds the dataset; the load then fails on the missing file.
    ds = MultiLabelImageList(check_files=False, pipeline=[dict(type='LoadImageFromFile')], **cfg)
    assert ds.get_data_info(1)['img_path'].endswith('imgs/y.png')
    with pytest.raises(FileNotFoundError, match='y.png'):
        ds[1]


def test_image_list_classes_file_relative_to_root(tmp_path):
    cfg = _write_list(tmp_path, ['imgs/x.png 1 1 0', 'imgs/y.png'])
    (tmp_path / 'root' / 'names.txt').write_text('a\nb\n')
    ds = MultiLabelImageList(check_files=False, **{**cfg, 'classes': 'names.txt'})
    assert ds.metainfo['classes'] == ('a', 'b')
    assert ds.get_cat_ids(0) == [0, 1] and ds.get_cat_ids(1) == []
    with pytest.raises(FileNotFoundError, match='classes'):
        MultiLabelImageList(check_files=False, **{**cfg, 'classes': 'other.txt'})


def test_export_round_trip(tmp_path):
    src = MultiDigits(split='val', num_samples=12, seed=5)
    paths = export_image_folder(src, str(tmp_path / 'export'))
    ds = MultiLabelImageList(pipeline=[dict(type='LoadImageFromFile')], **paths)
    assert len(ds) == len(src)
    assert ds.metainfo['classes'] == src.metainfo['classes']
    for i in range(len(src)):
        assert ds.get_cat_ids(i) == src.get_data_info(i)['gt_label']
        # PNG is lossless and both sides use OpenCV's channel order, so pixels match exactly.
        np.testing.assert_array_equal(ds[i]['img'], src.get_data_info(i)['img'])
    # The method form writes the same thing.
    again = src.export_image_folder(str(tmp_path / 'again'), label_key='gt_label_full')
    assert (tmp_path / 'again' / 'ann.txt').read_text() == (
        tmp_path / 'export' / 'ann.txt'
    ).read_text()
    assert again['ann_file'] == 'ann.txt'
