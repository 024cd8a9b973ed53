"""A multi-label dataset seen through a subset of its classes (a teacher of a partial label set)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from torch.utils.data import Dataset

from mlkd.registry import DATASETS

__all__ = ['LabelSubset']

#: data_info keys that hold class indices (lists of ints) of the wrapped dataset.
LABEL_KEYS = ('gt_label', 'gt_label_full', 'gt_label_ignored', 'gt_label_difficult')


@DATASETS.register_module()
class LabelSubset(Dataset):
    """The samples of a multi-label dataset, labelled with some of its classes only.

    ``classes`` (names of the wrapped dataset's classes, in the order the new label set takes)
    become the dataset's classes: in every sample the class indices of ``gt_label``,
    ``gt_label_full``, ``gt_label_ignored`` and ``gt_label_difficult`` are renumbered into that
    order and classes outside the subset are dropped (a sample left without a positive stays, as
    an all-negative sample). Images, order and ``sample_idx`` are the wrapped dataset's. This is how
    a teacher of a partial label set is trained on the same images (``docs/multi_teacher.md``)::

        dataset=dict(type='LabelSubset', classes=['0', '1', '2'], dataset=dict(type='MultiDigits'))

    Args:
        dataset: the wrapped dataset, or its config.
        classes: the kept class names (a non-empty subset of the wrapped dataset's, no repeats).

    Raises:
        ValueError: naming the classes the wrapped dataset lacks (with close names), an empty or
            repeated list, or a sample holding a per-class ``gt_score`` (not remapped here).
    """

    def __init__(self, dataset: Any | Mapping, classes: Sequence[str]) -> None:
        if isinstance(dataset, Mapping):
            dataset = DATASETS.build(dataset)
        self.dataset = dataset
        full = [str(c) for c in (getattr(dataset, 'metainfo', None) or {}).get('classes') or []]
        if not full:
            raise ValueError(
                f'LabelSubset: the wrapped dataset {type(dataset).__name__} names no classes '
                "(metainfo['classes'])"
            )
        if isinstance(classes, str) or not classes:
            raise ValueError(f'LabelSubset: classes must be a non-empty list, got {classes!r}')
        classes = [str(c) for c in classes]
        twice = sorted({c for c in classes if classes.count(c) > 1})
        if twice:
            raise ValueError(f'LabelSubset: classes names {twice} more than once')
        unknown = [c for c in classes if c not in full]
        if unknown:
            close = {c: difflib.get_close_matches(c, full, n=3) for c in unknown}
            raise ValueError(
                f'LabelSubset: classes {unknown} are not classes of {type(dataset).__name__} '
                f'({full}); close names: {close}'
            )
        self.classes = tuple(classes)
        #: New index of each wrapped class (-1: dropped).
        self.new_index = np.full(len(full), -1, dtype=np.int64)
        for new, name in enumerate(classes):
            self.new_index[full.index(name)] = new

    @property
    def metainfo(self) -> dict:
        return dict(self.dataset.metainfo, classes=self.classes)

    def full_init(self) -> None:
        if hasattr(self.dataset, 'full_init'):
            self.dataset.full_init()

    def __len__(self) -> int:
        return len(self.dataset)

    def _remap(self, indices: Sequence[int]) -> list[int]:
        mapped = self.new_index[np.asarray(indices, dtype=np.int64).reshape(-1)]
        return sorted(int(i) for i in mapped[mapped >= 0])

    def get_data_info(self, idx: int) -> dict:
        """The wrapped sample's data info with its labels in the subset's numbering."""
        info = self.dataset.get_data_info(idx)
        if info.get('gt_score') is not None:
            raise ValueError(
                f'LabelSubset: sample {idx} of {type(self.dataset).__name__} has a per-class '
                'gt_score, which LabelSubset does not remap; give hard labels (gt_label)'
            )
        for key in LABEL_KEYS:
            if info.get(key) is not None:
                info[key] = self._remap(info[key])
        return info

    def get_cat_ids(self, idx: int) -> list[int]:
        return self._remap(self.dataset.get_cat_ids(idx))

    def __getitem__(self, idx: int) -> Any:
        return self.dataset.pipeline(self.get_data_info(idx))
