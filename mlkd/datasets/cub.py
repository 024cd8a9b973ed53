"""CUB-200-2011 attributes as a 312-way multi-label dataset.

Expected layout (the official archive; ``data_root`` is the folder holding ``images.txt``)::

    CUB_200_2011
    ├── images.txt                          "<image id> <relative path>"
    ├── train_test_split.txt                "<image id> <1 train | 0 test>"
    ├── attributes/image_attribute_labels.txt
    │       "<image id> <attribute id> <is_present> <certainty id> <time>"
    ├── images/<class folder>/<file>.jpg
    └── attributes.txt  (or ../attributes.txt, as the archive ships it: "<id> <name>")

Label rule: attribute ``a`` is a positive of an image when its line has ``is_present = 1`` and a
certainty id of at least ``min_certainty`` (1 not visible, 2 guessing, 3 probably, 4 definitely).
The default ``min_certainty=1`` uses ``is_present`` alone, as Cole et al. do (whose splits the SCL
paper, Verelst et al., WACV 2023, uses). With ``min_certainty > 1`` a present attribute of lower
certainty is neither positive nor negative: it is listed in ``gt_label_ignored`` (-1 in the
target). A line's fields after the fourth are not read (a few lines of the released file carry an
extra field). Absent lines leave the attribute negative.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Sequence
from typing import Any

import numpy as np
from mmengine.fileio import join_path
from mmpretrain.datasets import MultiLabelDataset

from mlkd.registry import DATASETS

from .holdout import HoldOutMixin
from .observed_labels import ObservedLabelsMixin, matrix_to_label_lists
from .utils import check_missing_images, require_data_root
from .validation import DataListChecksMixin

__all__ = ['CUBAttributes']

NUM_ATTRIBUTES = 312
_SPLITS = ('train', 'test')


def _read_table(path: str, columns: int, what: str) -> list[list[str]]:
    """The first ``columns`` fields of every non-empty line; error naming file and line."""
    if not osp.isfile(path):
        raise FileNotFoundError(f'CUBAttributes: {what} {path!r} not found')
    rows = []
    with open(path, encoding='utf-8') as f:
        for line_no, line in enumerate(f, start=1):
            fields = line.split(None, columns)
            if not fields:
                continue
            if len(fields) < columns:
                raise ValueError(
                    f'CUBAttributes: {path}:{line_no}: expected {columns} fields, '
                    f'got {line.strip()!r}'
                )
            rows.append(fields[:columns])
    return rows


def _ints(rows: list[list[str]], path: str) -> np.ndarray:
    try:
        return np.array(rows, dtype=np.int64)
    except ValueError:
        raise ValueError(f'CUBAttributes: {path} holds a non-integer field') from None


@DATASETS.register_module()
class CUBAttributes(HoldOutMixin, ObservedLabelsMixin, DataListChecksMixin, MultiLabelDataset):
    """CUB-200-2011, 312 binary attributes per image (rule in the module docstring).

    Each data_info holds ``img_path`` (``data_root/images/...``), ``gt_label`` (sorted attribute
    indices, attribute id - 1) and, with ``min_certainty > 1``, ``gt_label_ignored``; samples keep
    the order of ``images.txt``.

    Args:
        data_root: the ``CUB_200_2011`` folder; must exist.
        split: ``'train'`` (5,994 images) or ``'test'`` (5,794), from ``train_test_split.txt``.
        min_certainty: 1..4; see the module docstring.
        missing_images: ``'error'`` (default) or ``'skip'`` (logged).
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments.
    """

    METAINFO: dict = {}

    def __init__(
        self,
        data_root: str,
        split: str = 'train',
        min_certainty: int = 1,
        data_prefix: str | dict = 'images',
        missing_images: str = 'error',
        pipeline: Sequence = (),
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        if split not in _SPLITS:
            raise ValueError(f'CUBAttributes: split must be one of {_SPLITS}, got {split!r}')
        if min_certainty not in (1, 2, 3, 4):
            raise ValueError(f'CUBAttributes: min_certainty must be 1..4, got {min_certainty!r}')
        data_root = require_data_root(
            'CUBAttributes', data_root, 'the CUB_200_2011 folder holding images.txt'
        )
        self.split, self.min_certainty, self.missing_images = split, min_certainty, missing_images
        super().__init__(
            ann_file='',
            data_root=data_root,
            data_prefix=data_prefix,
            classes=self._attribute_names(data_root),
            pipeline=pipeline,
            test_mode=test_mode,
            **kwargs,
        )

    @staticmethod
    def _attribute_names(data_root: str) -> list[str]:
        tried = [
            osp.join(data_root, 'attributes.txt'),
            osp.join(data_root, 'attributes', 'attributes.txt'),
            osp.join(osp.dirname(osp.abspath(data_root)), 'attributes.txt'),
        ]
        path = next((p for p in tried if osp.isfile(p)), None)
        if path is None:
            raise FileNotFoundError(f'CUBAttributes: attribute names not found; tried {tried}')
        names = [row[1] for row in _read_table(path, 2, 'attribute list')]
        if len(names) != NUM_ATTRIBUTES:
            raise ValueError(
                f'CUBAttributes: {path} lists {len(names)} attributes; expected {NUM_ATTRIBUTES}'
            )
        return names

    def load_data_list(self) -> list[dict]:
        """Read images, split and attribute labels (one scatter into an ``[N, 312]`` matrix).

        Returns:
            list of ``dict(img_path, gt_label[, gt_label_ignored])`` in ``images.txt`` order.
        """
        root = self.data_root
        images_file = osp.join(root, 'images.txt')
        images = _read_table(images_file, 2, 'image list')
        image_ids = _ints([[row[0]] for row in images], images_file)[:, 0]
        split_file = osp.join(root, 'train_test_split.txt')
        split = _ints(_read_table(split_file, 2, 'split file'), split_file)
        is_train = dict(zip(split[:, 0].tolist(), split[:, 1].tolist()))
        missing = [i for i in image_ids.tolist() if i not in is_train]
        if missing:
            raise ValueError(
                f'CUBAttributes: {split_file} has no entry for image ids '
                f'{missing[:5]} of {images_file}'
            )

        label_file = osp.join(root, 'attributes', 'image_attribute_labels.txt')
        table = _ints(_read_table(label_file, 4, 'attribute labels'), label_file)
        row_of_id = {image_id: row for row, image_id in enumerate(image_ids.tolist())}
        rows = np.array([row_of_id.get(i, -1) for i in table[:, 0].tolist()], dtype=np.int64)
        cols = table[:, 1] - 1
        bad = (rows < 0) | (cols < 0) | (cols >= NUM_ATTRIBUTES) | ~np.isin(table[:, 2], (0, 1))
        if bad.any():
            line = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f'CUBAttributes: {label_file}: entry {line + 1} '
                f'{table[line].tolist()} names an unknown image or attribute id, '
                f'or is_present is not 0/1'
            )
        present = table[:, 2] == 1
        certain = table[:, 3] >= self.min_certainty
        positive = np.zeros((len(image_ids), NUM_ATTRIBUTES), dtype=bool)
        uncertain = np.zeros_like(positive)
        positive[rows[present & certain], cols[present & certain]] = True
        uncertain[rows[present & ~certain], cols[present & ~certain]] = True

        want = 1 if self.split == 'train' else 0
        selected = np.array([is_train[i] == want for i in image_ids.tolist()])
        prefix = self.data_prefix.get('img_path', '')
        data_list = []
        for row in np.flatnonzero(selected).tolist():
            rel = images[row][1]
            info = dict(img_path=join_path(prefix, rel) if prefix else rel)
            data_list.append(info)
        for info, pos, unsure in zip(
            data_list,
            matrix_to_label_lists(positive[selected]),
            matrix_to_label_lists(uncertain[selected]),
        ):
            info['gt_label'] = pos
            if self.min_certainty > 1:
                info['gt_label_ignored'] = unsure
        return check_missing_images(data_list, self.missing_images, 'CUBAttributes', images_file)

    def extra_repr(self) -> list[str]:
        return [f'Split: \t{self.split}', f'Min certainty: \t{self.min_certainty}']
