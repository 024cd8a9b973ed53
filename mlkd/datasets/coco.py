"""MS-COCO 2014 as a multi-label classification dataset, read from the official instance json.

Expected layout (the official archives, unpacked under ``data_root``)::

    data/coco
    ├── annotations
    │   ├── instances_train2014.json
    │   └── instances_val2014.json
    ├── train2014
    │   └── COCO_train2014_000000000009.jpg ...
    └── val2014
        └── COCO_val2014_000000000042.jpg ...

An image's labels are the categories of all its instance annotations, crowd regions included
(as pycocotools' ``getAnnIds(imgIds=...)`` returns them to the ASL / L2D loaders). Images without
any annotation are dropped by default: that gives the 82,081 train / 40,137 val images of the L2D
protocol (methods.md section 7).

Class order is part of the label format and must match the checkpoint's:

* ``'alphabetical'`` (L2D): index = position of the category *name* in the sorted list of the
  80 names (0 airplane ... 49 person ... 79 zebra);
* ``'category_id'``: ascending COCO category id, the pycocotools / mmdet order (0 person, 1
  bicycle, ... 79 toothbrush).

The json is parsed with the standard ``json`` module (no pycocotools dependency); the label
assignment is vectorised with numpy and costs O(#annotations + #images).
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
from .observed_labels import ObservedLabelsMixin
from .utils import check_config_choice, read_annotation_json, require_data_root
from .validation import DataListChecksMixin

__all__ = ['COCOMultiLabel', 'ordered_categories']

_SPLITS = ('train', 'val')
_CLASS_ORDERS = ('alphabetical', 'category_id')
_REQUIRED_KEYS = ('categories', 'images', 'annotations')


@DATASETS.register_module()
class COCOMultiLabel(HoldOutMixin, ObservedLabelsMixin, DataListChecksMixin, MultiLabelDataset):
    """MS-COCO 2014 multi-label classification (80 classes).

    Each data_info holds ``img_path`` (str, ``data_root/data_prefix/file_name``), ``gt_label``
    (sorted list of unique class indices, possibly empty when ``keep_unlabeled``) and
    ``coco_id`` (the COCO image id, to trace a sample back to the annotation file). Samples keep
    the order of the json's ``images`` array. The class names (``metainfo['classes']``) are taken
    from the annotation file in the chosen order, so they are known only after the annotations
    are loaded (i.e. not before ``full_init`` with ``lazy_init=True``).

    Args:
        data_root: dataset root; must exist (``FileNotFoundError`` naming ``data_root``).
        split: ``'train'`` or ``'val'``; selects the default ``ann_file`` and ``data_prefix``.
        ann_file: instance json relative to ``data_root`` (or absolute). Default
            ``annotations/instances_{split}2014.json``.
        data_prefix: image folder relative to ``data_root`` (str or ``dict(img_path=...)``).
            Default ``{split}2014``. It must exist when the annotations are loaded.
        class_order: ``'alphabetical'`` (L2D) or ``'category_id'`` (pycocotools); see the module
            docstring.
        keep_unlabeled: keep images with no annotation (all-negative samples). ``False`` follows
            L2D and most papers.
        classes: optional expected class names (or a file with one per line). Not needed; when
            given (here or in ``metainfo``) it must equal the annotation file's names in
            ``class_order``, which catches a checkpoint / config trained with another order.
        pipeline: transforms, starting with ``LoadImageFromFile``.
        test_mode: passed to :class:`mmengine.dataset.BaseDataset`.
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments (``metainfo``,
            ``indices``, ``serialize_data``, ``lazy_init``, ...).
    """

    # Filled from the annotation file by load_data_list.
    METAINFO: dict = {}

    def __init__(
        self,
        data_root: str,
        split: str = 'train',
        ann_file: str = '',
        data_prefix: str | dict = '',
        class_order: str = 'alphabetical',
        keep_unlabeled: bool = False,
        classes: str | Sequence[str] | None = None,
        pipeline: Sequence = (),
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        check_config_choice('COCOMultiLabel', 'split', split, _SPLITS)
        check_config_choice('COCOMultiLabel', 'class_order', class_order, _CLASS_ORDERS)
        data_root = require_data_root(
            'COCOMultiLabel', data_root, 'the folder holding annotations/ and {train,val}2014/'
        )
        self.split = split
        self.class_order = class_order
        self.keep_unlabeled = bool(keep_unlabeled)
        ann_file = ann_file or join_path('annotations', f'instances_{split}2014.json')
        data_prefix = data_prefix or f'{split}2014'
        # The class list comes from the annotation file; an explicit one is kept aside and only
        # compared (see load_data_list) rather than trusted.
        self._expected_classes = self._expected_class_names(classes, kwargs.get('metainfo'))
        if kwargs.get('metainfo') and 'classes' in kwargs['metainfo']:
            kwargs['metainfo'] = {k: v for k, v in kwargs['metainfo'].items() if k != 'classes'}
        super().__init__(
            ann_file=ann_file,
            data_root=data_root,
            data_prefix=data_prefix,
            pipeline=pipeline,
            test_mode=test_mode,
            **kwargs,
        )

    @staticmethod
    def _expected_class_names(
        classes: str | Sequence[str] | None, metainfo: dict | None
    ) -> tuple[str, ...] | None:
        if isinstance(classes, str):
            path = osp.expanduser(classes)
            if not osp.isfile(path):
                raise FileNotFoundError(
                    f'COCOMultiLabel: classes file {path!r} not found (config key `classes`)'
                )
            with open(path, encoding='utf-8') as f:
                return tuple(line.strip() for line in f if line.strip())
        if classes is not None:
            return tuple(classes)
        if metainfo and metainfo.get('classes') is not None:
            return tuple(metainfo['classes'])
        return None

    def _read_annotations(self) -> dict:
        """Load the json and check its top-level keys."""
        ann_file = self.ann_file
        content = read_annotation_json(
            'COCOMultiLabel',
            ann_file,
            f'annotation file {ann_file!r} not found (config key `ann_file`, relative to '
            f'data_root={self.data_root!r}); expected the official '
            f'instances_{self.split}2014.json',
        )
        if not isinstance(content, dict):
            raise ValueError(
                f'COCOMultiLabel: {ann_file} must hold a json object with keys '
                f'{list(_REQUIRED_KEYS)}, got {type(content).__name__}'
            )
        for key in _REQUIRED_KEYS:
            if key not in content:
                raise ValueError(
                    f'COCOMultiLabel: {ann_file} has no {key!r} key (an instances '
                    f'json needs {list(_REQUIRED_KEYS)})'
                )
        return content

    def load_data_list(self) -> list[dict]:
        """Parse the instance json; called once by ``full_init``.

        Returns:
            list of ``dict(img_path=str, gt_label=list[int], coco_id=int)`` in the order of the
            json's ``images`` array (unlabeled images removed unless ``keep_unlabeled``).
        """
        ann_file = self.ann_file
        content = self._read_annotations()
        cat_ids, names = ordered_categories(content['categories'], self.class_order, ann_file)
        if self._expected_classes is not None and tuple(names) != self._expected_classes:
            raise ValueError(
                f'COCOMultiLabel: the classes given in the config ({len(self._expected_classes)}'
                f' names) differ from those of {ann_file} in class_order='
                f'{self.class_order!r} ({len(names)} names); first differences: '
                f'{_first_differences(self._expected_classes, names)}'
            )
        self._metainfo['classes'] = tuple(names)

        images = content['images']
        try:
            image_ids = np.array([int(img['id']) for img in images], dtype=np.int64)
            file_names = [img['file_name'] for img in images]
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f'COCOMultiLabel: {ann_file}: every entry of "images" needs an '
                f'integer "id" and a "file_name"'
            ) from None
        annotations = content['annotations']
        try:
            ann_image_ids = np.array([int(a['image_id']) for a in annotations], dtype=np.int64)
            ann_cat_ids = np.array([int(a['category_id']) for a in annotations], dtype=np.int64)
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f'COCOMultiLabel: {ann_file}: every entry of "annotations" needs '
                f'integer "image_id" and "category_id"'
            ) from None
        del content, annotations  # the raw json of train2014 is large; free it early

        if len(np.unique(image_ids)) != len(image_ids):
            ids, counts = np.unique(image_ids, return_counts=True)
            raise ValueError(
                f'COCOMultiLabel: {ann_file}: duplicate image ids {ids[counts > 1][:5].tolist()}'
            )

        # id -> index lookups through sorted arrays (vectorised, O(n log n) in numpy).
        label_of_cat = _lookup(
            np.array(cat_ids, dtype=np.int64), np.arange(len(cat_ids), dtype=np.int64), ann_cat_ids
        )
        if (label_of_cat < 0).any():
            bad = ann_cat_ids[label_of_cat < 0][0]
            raise ValueError(
                f'COCOMultiLabel: {ann_file}: an annotation refers to category id '
                f'{int(bad)}, which is not in "categories" (known ids: '
                f'{sorted(cat_ids)})'
            )
        row_of_ann = _lookup(image_ids, np.arange(len(image_ids), dtype=np.int64), ann_image_ids)
        if (row_of_ann < 0).any():
            bad = ann_image_ids[row_of_ann < 0][0]
            raise ValueError(
                f'COCOMultiLabel: {ann_file}: an annotation refers to image id '
                f'{int(bad)}, which is not in "images"'
            )

        # Unique (image, label) pairs sorted by image then label, then cut per image.
        num_classes = len(cat_ids)
        pairs = np.unique(row_of_ann * num_classes + label_of_cat)
        rows, labels = pairs // num_classes, pairs % num_classes
        bounds = np.searchsorted(rows, np.arange(len(image_ids) + 1))

        img_prefix = self.data_prefix.get('img_path', '')
        if img_prefix and not osp.isdir(img_prefix):
            raise FileNotFoundError(
                f'COCOMultiLabel: image folder {img_prefix!r} does not exist (config key '
                f'`data_prefix`, relative to data_root={self.data_root!r})'
            )
        data_list: list[dict] = []
        for row, (file_name, coco_id) in enumerate(zip(file_names, image_ids.tolist())):
            gt_label = labels[bounds[row] : bounds[row + 1]].tolist()
            if not gt_label and not self.keep_unlabeled:
                continue
            img_path = join_path(img_prefix, file_name) if img_prefix else file_name
            data_list.append(dict(img_path=img_path, gt_label=gt_label, coco_id=coco_id))
        if not data_list:
            raise ValueError(
                f'COCOMultiLabel: {ann_file} yields no images (keep_unlabeled='
                f'{self.keep_unlabeled})'
            )
        return data_list

    def extra_repr(self) -> list[str]:
        return [
            f'Annotation file: \t{self.ann_file}',
            f'Prefix of images: \t{self.img_prefix}',
            f'Class order: \t{self.class_order}',
            f'Keep unlabeled: \t{self.keep_unlabeled}',
        ]


def ordered_categories(
    categories: list[dict], class_order: str, ann_file: str
) -> tuple[list[int], list[str]]:
    """Category ids and names of an instances json in ``class_order`` (module docstring).

    Raises:
        ValueError naming ``ann_file`` for a malformed entry or a duplicate id or name.
    """
    if class_order not in _CLASS_ORDERS:
        raise ValueError(f'class_order must be one of {_CLASS_ORDERS}, got {class_order!r}')
    try:
        pairs = [(int(cat['id']), str(cat['name'])) for cat in categories]
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f'COCOMultiLabel: {ann_file}: every entry of "categories" needs an '
            f'integer "id" and a "name"'
        ) from None
    ids = [cid for cid, _ in pairs]
    names = [name for _, name in pairs]
    if len(set(ids)) != len(ids):
        dup = sorted({cid for cid in ids if ids.count(cid) > 1})
        raise ValueError(f'COCOMultiLabel: {ann_file}: duplicate category ids {dup}')
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f'COCOMultiLabel: {ann_file}: duplicate category names {dup}')
    # Names are unique, so sorting by name (or by id) is a total order.
    pairs.sort(key=(lambda p: p[1]) if class_order == 'alphabetical' else (lambda p: p[0]))
    return [cid for cid, _ in pairs], [name for _, name in pairs]


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Map ``queries`` through the table ``keys -> values`` (unique keys); -1 where absent.

    Shapes: ``keys``, ``values``: ``[K]``; ``queries``: ``[Q]``; returns ``[Q]`` int64.
    """
    if len(keys) == 0:
        return np.full(len(queries), -1, dtype=np.int64)
    order = np.argsort(keys, kind='stable')
    sorted_keys = keys[order]
    pos = np.clip(np.searchsorted(sorted_keys, queries), 0, len(keys) - 1)
    found = sorted_keys[pos] == queries
    return np.where(found, values[order][pos], -1)


def _first_differences(expected: Sequence[str], actual: Sequence[str], limit: int = 3) -> str:
    diffs = [
        f'index {i}: config {e!r} vs file {a!r}'
        for i, (e, a) in enumerate(zip(expected, actual))
        if e != a
    ][:limit]
    if len(expected) != len(actual):
        diffs.append(f'lengths {len(expected)} vs {len(actual)}')
    return '; '.join(diffs)
