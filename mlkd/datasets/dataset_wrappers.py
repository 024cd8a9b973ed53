"""The dataset wrapper through which :class:`~mlkd.engine.MLKDRunner`'s data loaders fetch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch.utils.data import Dataset

from mlkd.registry import DATASETS
from mlkd.utils.sample_seed import SampleKey, sample_random_state

__all__ = ['KeyedDataset', 'dataset_name', 'unwrap_dataset']


@DATASETS.register_module()
class KeyedDataset(Dataset):
    """Fetches a :class:`~mlkd.utils.sample_seed.SampleKey` index under its random state, and
    names the sample whose loading fails.

    :class:`~mlkd.datasets.EpochKeyedSampler` yields indices that carry (seed, epoch); this
    wrapper runs the whole fetch of such an index (the wrapped dataset's pipeline, and its
    refetches) inside :func:`~mlkd.utils.sample_seed.sample_random_state`, so a sample's
    augmentation depends on (seed, epoch, index) alone. The wrapped dataset receives the plain
    ``int`` index; a plain ``int`` index is fetched as the dataset alone would fetch it.

    An exception while fetching (a truncated JPEG read by Pillow: ``OSError: image file is
    truncated``) gets a note naming the dataset, the index and the sample's ``img_path``; its
    type and message are unchanged, and DataLoader workers re-raise it with the note in the text.

    :class:`~mlkd.engine.MLKDRunner` puts this wrapper around the dataset of every data loader it
    builds (a config may also write ``dataset=dict(type='KeyedDataset', dataset=...)`` itself).
    Everything else (``metainfo``, ``get_data_info``, ``get_cat_ids``, ...) is the wrapped
    dataset's.

    Args:
        dataset: the dataset, or its config (built with mmengine's ``DATASETS``, as mmengine's own
            dataset wrappers build theirs).
    """

    #: What :class:`~mlkd.datasets.EpochKeyedSampler` checks its dataset for.
    fetches_sample_keys = True

    def __init__(self, dataset: Any | Mapping) -> None:
        if isinstance(dataset, Mapping):
            from mmengine.registry import DATASETS as MMENGINE_DATASETS

            dataset = MMENGINE_DATASETS.build(dataset)
        self.dataset = dataset

    def full_init(self) -> None:
        """Fully initialise the wrapped dataset (mmengine's lazy initialisation)."""
        if hasattr(self.dataset, 'full_init'):
            self.dataset.full_init()

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, idx):
        try:
            if type(idx) is not SampleKey:
                return self.dataset[idx]
            with sample_random_state(idx.seed, idx.epoch, int(idx)):
                return self.dataset[int(idx)]
        except Exception as error:
            error.add_note(self._describe(int(idx) if isinstance(idx, int) else idx))
            raise

    def _describe(self, idx) -> str:
        try:
            path = self.dataset.get_data_info(idx).get('img_path')
        except Exception:  # noqa: BLE001 - the note must not hide the original error
            path = None
        return f'while loading sample {idx} of {dataset_name(self.dataset)}' + (
            f': {path}' if path else ''
        )

    def __getattr__(self, name: str):
        # Only reached for names the wrapper lacks. Dunder names and a half-built instance
        # (unpickling in a spawned worker, before ``dataset`` is set) are not delegated.
        dataset = self.__dict__.get('dataset')
        if dataset is None or name.startswith('__'):
            raise AttributeError(name)
        return getattr(dataset, name)

    def __repr__(self) -> str:
        return f'KeyedDataset({self.dataset!r})'


def unwrap_dataset(dataset: Any) -> Any:
    """The dataset the config built: ``dataset`` without the :class:`KeyedDataset` that
    :class:`~mlkd.engine.MLKDRunner` puts around every data loader's dataset (the wrappers a
    config writes itself, such as mmengine's ``ConcatDataset``, are kept)."""
    while isinstance(dataset, KeyedDataset):
        dataset = dataset.dataset
    return dataset


def dataset_name(dataset: Any) -> str:
    """The class name of the config's dataset (:func:`unwrap_dataset`), for messages."""
    return type(unwrap_dataset(dataset)).__name__
