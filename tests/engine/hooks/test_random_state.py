"""RandomStateHook: data loaders draw their worker seeds from generators of their own."""

from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest
import torch
from mmengine.dataset import DefaultSampler
from torch.utils.data import DataLoader

from mlkd.datasets import EpochKeyedSampler, KeyedDataset, MultiDigits
from mlkd.engine.hooks import RandomStateHook


def _runner(sampler_class):
    dataset = KeyedDataset(MultiDigits(num_samples=4))
    loader = DataLoader(
        dataset, sampler=sampler_class(dataset, seed=0), batch_size=2, collate_fn=list
    )
    return SimpleNamespace(
        train_dataloader=loader, val_dataloader=loader, seed=0, logger=MagicMock()
    )


@pytest.mark.parametrize('stage', ['before_train_epoch', 'before_val_epoch', 'before_test_epoch'])
def test_starting_an_iterator_leaves_the_global_stream_alone(stage):
    runner = _runner(EpochKeyedSampler)
    runner.test_dataloader = runner.train_dataloader
    loader = runner.train_dataloader
    torch.manual_seed(0)
    iter(loader)  # draws the workers' base seed ...
    shifted = torch.rand(1)
    torch.manual_seed(0)
    expected = torch.rand(1)
    assert shifted != expected  # ... from the global generator
    getattr(RandomStateHook(), stage)(runner)
    generator = loader.generator
    assert generator is not None
    torch.manual_seed(0)
    iter(loader)
    assert torch.rand(1) == expected
    getattr(RandomStateHook(), stage)(runner)
    assert loader.generator is generator  # set once, then left alone


def test_unkeyed_training_sampler_is_warned_about_once():
    runner = _runner(DefaultSampler)
    hook = RandomStateHook()
    hook.before_train_epoch(runner)
    hook.before_train_epoch(runner)
    runner.logger.warning.assert_called_once()
    assert 'DefaultSampler' in runner.logger.warning.call_args.args[0]
    keyed = _runner(EpochKeyedSampler)
    hook.before_train_epoch(keyed)
    keyed.logger.warning.assert_not_called()
