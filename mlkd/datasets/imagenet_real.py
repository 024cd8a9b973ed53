"""The ImageNet-1K validation set with the multi-label ReaL labels (Beyer et al., 2020).

Expected layout under ``data_root``::

    data/imagenet
    ├── real.json                        50,000 lists of class indices, image 1 first
    └── val/ILSVRC2012_val_00000001.JPEG ...   (flat, as mmpretrain's ImageNet val)

``real.json`` is the file released with ReaL: entry ``i`` holds the labels of
``ILSVRC2012_val_{i + 1:08d}.JPEG`` as indices of the standard 1000-class order (mmpretrain's
``IMAGENET_CATEGORIES``). 3,163 images have an empty list (no ReaL label); they are dropped by
default, leaving the 46,837 images of Table K.1 of T. Verelst et al., "Spatial Consistency Loss
for Training Multi-Label Classifiers from Single-Label Annotations", WACV 2023
(``keep_empty=True`` keeps them as all-negative samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmengine.fileio import join_path
from mmpretrain.datasets import MultiLabelDataset
from mmpretrain.datasets.categories import IMAGENET_CATEGORIES

from mlkd.registry import DATASETS

from .utils import check_missing_images, read_annotation_json, require_data_root
from .validation import DataListChecksMixin

__all__ = ['ImageNetReaL']


@DATASETS.register_module()
class ImageNetReaL(DataListChecksMixin, MultiLabelDataset):
    """ImageNet-1K val with ReaL multi-labels (see the module docstring).

    Each data_info holds ``img_path``, ``gt_label`` (sorted class indices) and ``image_number``
    (1-based, as in the file name), in file-number order.

    Args:
        data_root: ImageNet folder; must exist.
        real_file: the ReaL json, relative to ``data_root`` unless absolute.
        data_prefix: the val image folder relative to ``data_root``.
        keep_empty: keep images without any ReaL label.
        missing_images: ``'error'`` (default) or ``'skip'`` (logged).
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments.
    """

    METAINFO = {'classes': IMAGENET_CATEGORIES}

    def __init__(
        self,
        data_root: str,
        real_file: str = 'real.json',
        data_prefix: str | dict = 'val',
        keep_empty: bool = False,
        missing_images: str = 'error',
        pipeline: Sequence = (),
        test_mode: bool = True,
        **kwargs: Any,
    ) -> None:
        data_root = require_data_root(
            'ImageNetReaL', data_root, 'the ImageNet folder holding real.json and val/'
        )
        self.keep_empty, self.missing_images = bool(keep_empty), missing_images
        super().__init__(
            ann_file=real_file,
            data_root=data_root,
            data_prefix=data_prefix,
            pipeline=pipeline,
            test_mode=test_mode,
            **kwargs,
        )

    def load_data_list(self) -> list[dict]:
        """Parse ``real.json``.

        Returns:
            list of ``dict(img_path, gt_label, image_number)``.
        """
        path = self.ann_file
        real = read_annotation_json(
            'ImageNetReaL', path, f'ReaL labels {path!r} not found (config key `real_file`)'
        )
        num_classes = len(self.metainfo['classes'])
        if not isinstance(real, list):
            raise ValueError(f'ImageNetReaL: {path} must hold a list of label lists')
        prefix = self.data_prefix.get('img_path', '')
        data_list = []
        for number, labels in enumerate(real, start=1):
            if not isinstance(labels, list) or not all(
                isinstance(v, int) and 0 <= v < num_classes for v in labels
            ):
                raise ValueError(
                    f'ImageNetReaL: {path}: entry {number - 1} ({labels!r}) must be '
                    f'a list of class indices in [0, {num_classes})'
                )
            if not labels and not self.keep_empty:
                continue
            name = f'ILSVRC2012_val_{number:08d}.JPEG'
            data_list.append(
                dict(
                    img_path=join_path(prefix, name) if prefix else name,
                    gt_label=sorted(set(labels)),
                    image_number=number,
                )
            )
        return check_missing_images(data_list, self.missing_images, 'ImageNetReaL', path)
