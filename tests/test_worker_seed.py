"""Random augmentations differ from epoch to epoch with non-persistent workers."""
import numpy as np
import pytest
from mmengine.dataset import worker_init_fn as mmengine_worker_init_fn
from mmengine.logging import MessageHub
from mmengine.runner import Runner
from torch.utils.data import Dataset

import mmengine.runner.runner as runner_module
from mlkd.utils.worker_seed import epoch_seeded_worker_init_fn


class NumpyRandomDataset(Dataset):
    """Each item is a numpy random draw, as mmpretrain's random transforms make."""

    def __len__(self):
        return 8

    def __getitem__(self, index):
        return np.random.rand()


def _epoch_values(epoch):
    MessageHub.get_current_instance().update_info('epoch', epoch)
    loader = Runner.build_dataloader(
        dict(dataset=NumpyRandomDataset(), batch_size=4, num_workers=2,
             persistent_workers=False, sampler=dict(type='DefaultSampler', shuffle=False)),
        seed=0)
    return np.concatenate([np.asarray(batch, dtype=float) for batch in loader])


def test_runner_uses_epoch_seeded_worker_init():
    assert runner_module.default_worker_init_fn is epoch_seeded_worker_init_fn


def test_augmentations_change_between_epochs_and_repeat_for_the_same_epoch():
    first, second, first_again = _epoch_values(0), _epoch_values(1), _epoch_values(0)
    assert not np.allclose(first, second)
    np.testing.assert_array_equal(first, first_again)   # reproducible for a seed and epoch


def test_mmengine_default_would_repeat_every_epoch(monkeypatch):
    """The failure the shim fixes: without it the two epochs draw identical numbers."""
    monkeypatch.setattr(runner_module, 'default_worker_init_fn', mmengine_worker_init_fn)
    np.testing.assert_array_equal(_epoch_values(0), _epoch_values(1))
