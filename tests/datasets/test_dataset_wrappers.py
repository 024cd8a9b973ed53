"""KeyedDataset: a SampleKey is fetched under its key, a plain index as before, a failure names
the sample."""

import random

import numpy as np
import pytest
import torch
from conftest import draw_all, record_draws
from mmengine.dataset import ClassBalancedDataset, ConcatDataset, RepeatDataset

from mlkd.datasets import KeyedDataset, MultiDigits
from mlkd.utils.sample_seed import SampleKey, sample_random_state


class _Recorder:
    """A dataset whose items are what the fetch saw: the index type and the draws."""

    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return type(idx), draw_all()

    def get_data_info(self, idx):
        return {'img_path': f'/data/{idx}.jpg'}


def test_keys_are_fetched_under_their_state_and_ints_as_before():
    keyed = KeyedDataset(_Recorder())
    index_type, draws = keyed[SampleKey(5, seed=0, epoch=1)]
    assert index_type is int  # the dataset sees a plain index
    with sample_random_state(0, 1, 5):
        assert draws == draw_all()
    torch.manual_seed(0), np.random.seed(0), random.seed(0)
    expected = draw_all()
    torch.manual_seed(0), np.random.seed(0), random.seed(0)
    assert keyed[5] == (int, expected)  # plain index: global generators
    assert len(keyed) == 8 and keyed.get_data_info(3) == {'img_path': '/data/3.jpg'}


def test_mmengine_datasets_and_wrappers_inside_are_fetched_under_the_key():
    """The whole fetch of the outermost dataset runs under the key, whatever it wraps."""
    dataset = MultiDigits(num_samples=4, pipeline=[record_draws])
    for inner in (
        dataset,
        ConcatDataset([dataset, dataset]),
        RepeatDataset(dataset, 2),
        ClassBalancedDataset(dataset, oversample_thr=0.0),
    ):
        outer = KeyedDataset(inner)
        assert outer.metainfo == inner.metainfo
        index = len(outer) - 1
        with sample_random_state(3, 1, index):
            expected = draw_all()
        assert outer[SampleKey(index, seed=3, epoch=1)]['draws'] == expected, type(inner)
        assert outer[index]['draws'] != expected  # a plain index is not keyed


def test_a_failing_sample_is_named_and_its_error_kept():
    class Broken(_Recorder):
        def __getitem__(self, idx):
            raise OSError('image file is truncated')

    with pytest.raises(OSError, match='image file is truncated') as error:
        KeyedDataset(Broken())[SampleKey(2, seed=0, epoch=0)]
    assert error.value.__notes__ == ['while loading sample 2 of Broken: /data/2.jpg']


def test_built_from_a_config_and_pickled_for_spawned_workers():
    import pickle

    from mmengine.registry import DefaultScope

    with DefaultScope.overwrite_default_scope('mlkd'):
        keyed = KeyedDataset(dict(type='MultiDigits', num_samples=3))
    again = pickle.loads(pickle.dumps(keyed))
    assert type(again.dataset) is MultiDigits and len(again) == 3
    half_built = KeyedDataset.__new__(KeyedDataset)  # as unpickling meets it: no recursion
    with pytest.raises(AttributeError):
        half_built.full_init_done  # noqa: B018 - the attribute access is the test
