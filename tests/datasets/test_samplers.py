"""EpochKeyedSampler: a sample's augmentation depends only on (seed, epoch, index)."""

import mmengine.dataset.sampler as mmengine_sampler
import numpy as np
import pytest
from conftest import record_draws
from mmengine.dataset import DefaultSampler
from mmengine.registry import DefaultScope

from mlkd.datasets import EpochKeyedSampler, KeyedDataset, MultiDigits
from mlkd.engine import MLKDRunner

NUM_SAMPLES = 13  # odd: a 2-process split pads one index (round_up)
EPOCHS = 3
#: The shipped MultiDigits augmentation, then one draw from each of random, numpy and torch.
PIPELINE = [dict(type='RandomCrop', crop_size=32, padding=2, padding_mode='constant'), record_draws]


def _loader(num_workers=0, persistent=False, sampler='EpochKeyedSampler', shuffle=True):
    """A loader built as MLKDRunner builds it (seed 0 handed to the sampler)."""
    with DefaultScope.overwrite_default_scope('mlkd'):
        return MLKDRunner.build_dataloader(
            dict(
                dataset=dict(type='MultiDigits', num_samples=NUM_SAMPLES, pipeline=PIPELINE),
                sampler=dict(type=sampler, shuffle=shuffle),
                batch_size=4,
                num_workers=num_workers,
                persistent_workers=persistent,
                collate_fn=dict(type=list),
            ),
            seed=0,
        )


def _augmented(loader, epochs=range(EPOCHS)):
    """{epoch: {sample index: (cropped image, draws)}} over ``epochs``; one entry per index."""
    out = {}
    for epoch in epochs:
        loader.sampler.set_epoch(epoch)
        out[epoch] = {}
        for batch in loader:
            for sample in batch:
                seen = (sample['img'].copy(), sample['draws'])
                previous = out[epoch].setdefault(sample['sample_idx'], seen)
                _assert_same(previous, seen)  # a padded duplicate agrees too
    return out


def _assert_same(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]


def _assert_same_epochs(result, reference):
    assert result.keys() == reference.keys()
    for epoch in result:
        assert result[epoch].keys() == reference[epoch].keys() == set(range(NUM_SAMPLES))
        for index in result[epoch]:
            _assert_same(result[epoch][index], reference[epoch][index])


@pytest.fixture(scope='module')
def reference():
    return _augmented(_loader())


@pytest.mark.parametrize('num_workers,persistent', [(1, False), (2, False), (1, True), (2, True)])
def test_same_augmentation_with_any_number_of_workers(reference, num_workers, persistent):
    _assert_same_epochs(_augmented(_loader(num_workers, persistent)), reference)


def test_a_resumed_loader_continues_the_augmentations(reference):
    """Fresh persistent workers started at epoch 2, as after --resume from epoch_2.pth."""
    resumed = _augmented(_loader(2, True), epochs=[2])
    _assert_same_epochs(resumed, {2: reference[2]})


def test_epochs_and_samples_get_different_augmentations(reference):
    for epoch in range(EPOCHS):
        draws = [reference[epoch][i][1] for i in range(NUM_SAMPLES)]
        for generator in range(3):
            assert len({d[generator] for d in draws}) == NUM_SAMPLES
    for index in range(NUM_SAMPLES):
        for generator in range(3):
            assert len({reference[e][index][1][generator] for e in range(EPOCHS)}) == EPOCHS
    # The crop offsets (25 possible) change between epochs for most samples.
    moved = sum(
        not np.array_equal(reference[0][i][0], reference[1][i][0]) for i in range(NUM_SAMPLES)
    )
    assert moved >= NUM_SAMPLES // 2


def test_two_processes_give_each_sample_the_augmentation_of_one_process(reference, monkeypatch):
    """Each rank's loader (persistent workers, as shipped) runs every epoch, as in training;
    fresh workers at a later epoch are the resumed-loader test's subject."""
    shards = {}
    for rank in (0, 1):
        monkeypatch.setattr(mmengine_sampler, 'get_dist_info', lambda rank=rank: (rank, 2))
        shards[rank] = _augmented(_loader(2, True))
    for epoch in range(EPOCHS):
        merged = {}
        for rank in (0, 1):
            shard = shards[rank][epoch]
            assert len(shard) == (NUM_SAMPLES + 1) // 2  # rank 1 repeats one index
            for index, seen in shard.items():
                _assert_same(merged.setdefault(index, seen), seen)
        _assert_same_epochs({epoch: merged}, {epoch: reference[epoch]})


def test_evaluation_loaders_repeat_their_draws():
    """A persistent worker's generators move on; keyed evaluation draws do not."""
    loader = _loader(2, True, shuffle=False)
    first = _augmented(loader, epochs=[0])
    _assert_same_epochs(_augmented(loader, epochs=[0]), first)


def test_mmengine_default_sampler_depends_on_the_worker_set_up(reference):
    """The failure EpochKeyedSampler fixes: resumed persistent workers repeat epoch 0."""
    whole = _augmented(_loader(2, True, sampler='DefaultSampler'))
    resumed = _augmented(_loader(2, True, sampler='DefaultSampler'), epochs=[2])
    assert any(whole[2][i][1] != resumed[2][i][1] for i in range(NUM_SAMPLES))


def test_same_order_as_default_sampler():
    dataset = KeyedDataset(MultiDigits(num_samples=NUM_SAMPLES))
    keyed, default = EpochKeyedSampler(dataset, seed=5), DefaultSampler(dataset, seed=5)
    keyed.set_epoch(3), default.set_epoch(3)
    keys = list(keyed)
    assert keys == list(default)
    assert {(k.seed, k.epoch) for k in keys} == {(5, 3)}


def test_negative_seed_names_the_config_key():
    with pytest.raises(ValueError, match=r'randomness\.seed.*-2'):
        EpochKeyedSampler(KeyedDataset(MultiDigits(num_samples=4)), seed=-2)
