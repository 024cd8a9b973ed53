"""A sampler whose indices carry the key of their augmentation randomness."""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sized

from mmengine.dataset import DefaultSampler

from mlkd.registry import DATA_SAMPLERS
from mlkd.utils.sample_seed import SampleKey

__all__ = ['EpochKeyedSampler']


@DATA_SAMPLERS.register_module()
class EpochKeyedSampler(DefaultSampler):
    """mmengine's ``DefaultSampler`` (same order, sharding and ``round_up``) yielding
    :class:`~mlkd.utils.sample_seed.SampleKey` indices keyed by (``seed``, current epoch).

    Its dataset must be a :class:`~mlkd.datasets.KeyedDataset`, which runs the pipeline of index
    ``i`` with ``random``, numpy and torch seeded from a hash of ``(seed, epoch, i)`` (see
    :mod:`mlkd.utils.sample_seed`): a sample's augmentation depends on nothing else, so it is the
    same with any number of workers, persistent or not, any number of processes (each rank keys
    the indices of its shard), and after resuming. :class:`~mlkd.engine.MLKDRunner` (the
    ``runner_type`` of ``configs/_base_/default_runtime.py``) wraps every data loader's dataset so;
    under mmengine's plain ``Runner`` the keys would be ignored, and this sampler refuses the
    dataset instead. The Runner passes the run's ``randomness.seed`` as ``seed`` (``None`` gives
    a seed shared by all ranks); ``DistSamplerSeedHook`` sets the epoch of the training sampler.
    Evaluation samplers stay at epoch 0, so evaluation pipelines draw the same numbers every time.

    Raises:
        TypeError: naming the dataset's class when it does not fetch keyed indices.
        ValueError: when the seed is not a non-negative int.
    """

    def __init__(
        self, dataset: Sized, shuffle: bool = True, seed: int | None = None, round_up: bool = True
    ) -> None:
        if not getattr(dataset, 'fetches_sample_keys', False):
            raise TypeError(
                f'EpochKeyedSampler: the dataset ({type(dataset).__name__}) does not fetch keyed '
                'indices, so augmentations would not be keyed by (seed, epoch, index). Build the '
                "data loader with MLKDRunner (runner_type = 'MLKDRunner', as "
                'configs/_base_/default_runtime.py sets; in code MLKDRunner.build_dataloader), '
                'or wrap the dataset in KeyedDataset'
            )
        super().__init__(dataset, shuffle=shuffle, seed=seed, round_up=round_up)
        if not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(
                f'EpochKeyedSampler: seed must be a non-negative int (config key '
                f'`randomness.seed`), got {self.seed!r}'
            )
        self.seed = int(self.seed)

    def __iter__(self) -> Iterator[SampleKey]:
        seed, epoch = self.seed, self.epoch
        return (SampleKey(index, seed, epoch) for index in super().__iter__())
