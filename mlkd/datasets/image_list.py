"""A path-based multi-label dataset read from a plain-text image list.

Annotation format (one sample per line)::

    # comment lines and blank lines are ignored
    images/000000.png 3 7 9
    images/000001.png 0
    images/000002.png            <- no label: a valid all-negative sample

The first whitespace-separated token is the image path relative to ``data_prefix`` (itself
relative to ``data_root``); the remaining tokens are class indices (0-based, duplicates are
merged). Paths therefore must not contain whitespace. Class names come from ``classes``: a list,
or a text file with one name per line.

The checks run at construction so that a broken config fails before training starts, with the
offending config key, file and line in the message.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Sequence
from typing import Any

from mmengine.fileio import join_path
from mmpretrain.datasets import MultiLabelDataset

from mlkd.registry import DATASETS

from .observed_labels import ObservedLabelsMixin
from .utils import require_data_root
from .validation import DataListChecksMixin

__all__ = ['MultiLabelImageList']

# Beyond this many missing images the error message only reports the count.
_MAX_LISTED_MISSING = 5


@DATASETS.register_module()
class MultiLabelImageList(ObservedLabelsMixin, DataListChecksMixin, MultiLabelDataset):
    """Multi-label images listed in a text file (see the module docstring for the format).

    Each data_info holds ``img_path`` (str), ``gt_label`` (sorted list of class indices) and
    ``sample_idx``; the pipeline must therefore start with ``LoadImageFromFile``.

    Args:
        ann_file: annotation text file, relative to ``data_root`` unless absolute.
        data_root: root directory of the dataset; must exist when given.
        data_prefix: image directory relative to ``data_root`` (str or ``dict(img_path=...)``).
        classes: class names as a sequence, or a text file with one name per line (looked up
            as given, then relative to ``data_root``). Required unless ``metainfo`` provides
            ``classes``.
        pipeline: transforms; starts with ``dict(type='LoadImageFromFile')``.
        check_files: verify at construction that every listed image exists. Disable for very
            large lists on slow storage; a missing image then fails when it is loaded.
        test_mode: passed to :class:`mmengine.dataset.BaseDataset`.
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments (``metainfo``,
            ``indices``, ``serialize_data``, ``lazy_init``, ...).
    """

    def __init__(
        self,
        ann_file: str,
        data_root: str = '',
        data_prefix: str | dict = '',
        classes: str | Sequence[str] | None = None,
        pipeline: Sequence = (),
        check_files: bool = True,
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        if data_root:
            data_root = require_data_root(
                'MultiLabelImageList', data_root, 'the folder the annotation paths are relative to'
            )
        if not ann_file:
            raise ValueError(
                'MultiLabelImageList: `ann_file` is required (a text file with '
                'lines "relative/path.png 3 7 9")'
            )
        classes_file = None
        if isinstance(classes, str):
            classes_file = self._resolve_classes_file(classes, data_root)
            classes = self._read_classes_file(classes_file)
        elif classes is None and not (kwargs.get('metainfo') or {}).get('classes'):
            raise ValueError(
                'MultiLabelImageList: `classes` is required (a list of names or a '
                'file with one name per line) to know the number of classes'
            )
        self.check_files = check_files
        super().__init__(
            ann_file=ann_file,
            data_root=data_root,
            data_prefix=data_prefix,
            classes=classes,
            pipeline=pipeline,
            test_mode=test_mode,
            class_names_source=classes_file,
            **kwargs,
        )

    @staticmethod
    def _resolve_classes_file(classes: str, data_root: str) -> str:
        """Find a class-name file as given or relative to ``data_root``."""
        path = osp.expanduser(classes)
        if osp.isfile(path):
            return path
        if data_root and not osp.isabs(path) and osp.isfile(osp.join(data_root, path)):
            return osp.join(data_root, path)
        tried = [path] + ([osp.join(data_root, path)] if data_root and not osp.isabs(path) else [])
        raise FileNotFoundError(
            f'MultiLabelImageList: classes file not found (config key `classes`); tried {tried}'
        )

    @staticmethod
    def _read_classes_file(path: str) -> list[str]:
        """The class names of a file with one per line, stripped; trailing blank lines are not
        classes (mmengine's ``list_from_file`` kept them, and the padding: a phantom class).

        Raises:
            ValueError: a blank line between names, naming the file and the line.
        """
        with open(path, encoding='utf-8') as file:
            names = [line.strip() for line in file.read().splitlines()]
        while names and not names[-1]:
            names.pop()
        if '' in names:
            raise ValueError(
                f'MultiLabelImageList: {path!r} line {names.index("") + 1} is blank: the classes '
                'file holds one class name per line, its line number the class index + 1'
            )
        return names

    def load_data_list(self) -> list[dict]:
        """Parse ``ann_file``; called once by ``full_init``.

        Returns:
            list of ``dict(img_path=str, gt_label=list[int])``, in file order.
        """
        ann_file = self.ann_file
        if not osp.isfile(ann_file):
            where = f' (data_root={self.data_root!r})' if self.data_root else ''
            raise FileNotFoundError(
                f'MultiLabelImageList: ann_file {ann_file!r} not found '
                f'(config key `ann_file`{where})'
            )
        num_classes = len(self.metainfo['classes'])
        img_prefix = self.data_prefix.get('img_path', '')

        data_list: list[dict] = []
        missing: list[str] = []
        with open(ann_file, encoding='utf-8') as f:
            for line_no, raw in enumerate(f, start=1):
                line = raw.strip()
                if not line or line.startswith('#'):
                    continue
                rel_path, *tokens = line.split()
                labels = set()
                for token in tokens:
                    try:
                        value = int(token)
                    except ValueError:
                        raise ValueError(
                            f'{ann_file}:{line_no}: label {token!r} is not an '
                            f'integer class index (line: {line!r})'
                        ) from None
                    if not 0 <= value < num_classes:
                        raise ValueError(
                            f'{ann_file}:{line_no}: label {value} is out of range for '
                            f'{num_classes} classes (valid 0..{num_classes - 1})'
                        )
                    labels.add(value)
                img_path = join_path(img_prefix, rel_path) if img_prefix else rel_path
                if self.check_files and not osp.isfile(img_path):
                    missing.append(f'{img_path!r} ({ann_file}:{line_no})')
                data_list.append(dict(img_path=img_path, gt_label=sorted(labels)))

        if missing:
            listed = ', '.join(missing[:_MAX_LISTED_MISSING])
            more = (
                f' and {len(missing) - _MAX_LISTED_MISSING} more'
                if len(missing) > _MAX_LISTED_MISSING
                else ''
            )
            raise FileNotFoundError(
                f'MultiLabelImageList: {len(missing)} image(s) listed in {ann_file} do not '
                f'exist: {listed}{more}. Check `data_root`/`data_prefix`, or pass '
                f'check_files=False to defer the check to loading.'
            )
        if not data_list:
            raise ValueError(f'MultiLabelImageList: ann_file {ann_file!r} lists no images')
        return data_list
