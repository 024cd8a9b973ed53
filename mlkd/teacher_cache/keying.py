"""Whether a run's augmentations are keyed by (seed, epoch, sample index), which makes a
teacher's outputs cacheable exactly (see :mod:`mlkd.utils.sample_seed`)."""

from __future__ import annotations

from typing import Any

from mmengine.dataset import ClassBalancedDataset, ConcatDataset, RepeatDataset

from .format import TeacherCacheError


def train_sampler(loader: Any) -> Any:
    """The sampler of a data loader (inside its batch sampler where it has one)."""
    return getattr(getattr(loader, 'batch_sampler', None), 'sampler', None) or loader.sampler


def keyed_sampling_seed(loader: Any) -> int:
    """The seed of ``loader``'s augmentations, after checking that they are keyed by
    (seed, epoch, index): an :class:`~mlkd.datasets.EpochKeyedSampler`, a dataset whose fetch is
    keyed (:class:`~mlkd.datasets.KeyedDataset`, which MLKDRunner's loaders have), and no batch
    augmentation in the data preprocessor (those draw from the training's own stream, per batch).

    Raises:
        TeacherCacheError: naming what breaks the condition.
    """
    from mlkd.datasets.dataset_wrappers import dataset_name
    from mlkd.datasets.samplers import EpochKeyedSampler

    sampler = train_sampler(loader)
    if not isinstance(sampler, EpochKeyedSampler):
        raise TeacherCacheError(
            f'teacher cache: train_dataloader.sampler is {type(sampler).__name__}; a cache is '
            'exact only when each augmentation is a function of (seed, epoch, sample index): add '
            '--cfg-options train_dataloader.sampler.type=EpochKeyedSampler'
        )
    if not getattr(loader.dataset, 'fetches_sample_keys', False):
        raise TeacherCacheError(
            f'teacher cache: the training dataset {dataset_name(loader.dataset)} does not fetch '
            'samples under their (seed, epoch, index) random state (it is not wrapped in '
            'KeyedDataset: build the data loader with MLKDRunner); its augmentations cannot be '
            'cached exactly'
        )
    inner = getattr(loader.dataset, 'dataset', loader.dataset)
    if isinstance(inner, (RepeatDataset, ConcatDataset, ClassBalancedDataset)):
        # The cache stores and serves rows by each sample's `sample_idx`, the inner dataset's
        # index: under these wrappers two loader indices share one (a repeated image augmented
        # twice, or two images of two datasets), so one row would serve both.
        raise TeacherCacheError(
            f'teacher cache: the training dataset is a {type(inner).__name__}, whose samples do '
            "not each have their own sample_idx (the cache's key): cache a plain dataset (repeat "
            'it with more epochs, join the data in one annotation file)'
        )
    return int(sampler.seed)


def check_no_batch_augments(preprocessor: Any) -> None:
    """Refuse a data preprocessor with batch augmentations (Mixup, CutMix): they mix samples with
    numbers drawn per batch, so the teacher's outputs of a sample are not a function of its key."""
    if getattr(preprocessor, 'batch_augments', None):
        raise TeacherCacheError(
            'teacher cache: the data preprocessor has batch_augments; they mix samples per batch, '
            "so a sample's teacher outputs are not a function of (seed, epoch, index). Remove "
            'them or train without a cache'
        )
