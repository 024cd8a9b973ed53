"""SampleKey and the keyed random state (the keyed fetch: tests/datasets/test_dataset_wrappers.py)."""

import pickle
import random

import numpy as np
import pytest
import torch
from conftest import draw_all

from mlkd.utils.sample_seed import SampleKey, sample_random_state


def test_sample_key_is_an_int_that_pickles_with_its_key():
    key = SampleKey(7, seed=3, epoch=2)
    assert key == 7 and [10, 11, 12, 13, 14, 15, 16, 17][key] == 17
    assert type(key + 1) is int and type(int(key)) is int
    again = pickle.loads(pickle.dumps(key))
    assert type(again) is SampleKey
    assert (int(again), again.seed, again.epoch) == (7, 3, 2)
    assert repr(key) == 'SampleKey(index=7, seed=3, epoch=2)'


def test_the_key_alone_decides_the_draws():
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    with sample_random_state(0, 1, 5):
        first = draw_all()
    random.seed(2), np.random.seed(2), torch.manual_seed(2)  # other global states ...
    with sample_random_state(0, 1, 5):
        assert draw_all() == first  # ... same draws
    for other in ((1, 1, 5), (0, 2, 5), (0, 1, 6)):  # seed, epoch or index changed
        with sample_random_state(*other):
            draws = draw_all()
        assert all(a != b for a, b in zip(draws, first)), other


def test_the_three_generators_get_independent_streams():
    with sample_random_state(0, 0, 0):
        draws = random.random(), float(np.random.rand()), float(torch.rand((), dtype=torch.float64))
    assert len(set(draws)) == 3


def test_global_states_are_put_back():
    random.seed(4), np.random.seed(4), torch.manual_seed(4)
    expected = draw_all()
    random.seed(4), np.random.seed(4), torch.manual_seed(4)
    with sample_random_state(9, 9, 9):
        draw_all()
    assert draw_all() == expected


def test_global_states_are_put_back_when_the_fetch_fails():
    torch.manual_seed(4)
    expected = torch.rand(3)
    torch.manual_seed(4)
    with pytest.raises(KeyError):
        with sample_random_state(0, 0, 0):
            raise KeyError('broken sample')
    assert torch.equal(torch.rand(3), expected)


def test_negative_key_parts_are_rejected():
    with pytest.raises(ValueError, match=r'seed=-1.*randomness\.seed'):
        with sample_random_state(-1, 0, 0):
            pass
