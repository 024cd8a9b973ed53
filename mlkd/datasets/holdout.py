"""Cole et al.'s train / val hold-out of an official training split.

These are the splits of T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label
Classifiers from Single-Label Annotations", WACV 2023 (supplement, Table K.1).

Cole et al. split the rows of their ``formatted_train_images.npy`` once: a permutation of the
``M`` rows by numpy's legacy ``RandomState(seed)`` (``seed`` = ``split_seed`` = 1200), the last
``round(fraction * M)`` permuted rows (``fraction`` = ``val_frac`` = 0.2) form the validation part
and the first ``M - round(fraction * M)`` the training part. For COCO 2014 that gives 65,665 /
16,416 images. The switch::

    dataset=dict(type='COCOMultiLabel', split='train', ...,
                 holdout=dict(part='val', images_file='formatted_train_images.npy'))

keeps the dataset images of that part (matched to the file's rows by path, see
:func:`mlkd.datasets.observed_labels.rows_in_image_file`; ``images_file`` relative to
``data_root`` unless absolute) in dataset order. It acts after the observed labels, which are
drawn over the whole split, as Cole et al. draw them over the whole formatted file.
"""

from __future__ import annotations

import os.path as osp
from typing import Any

import numpy as np
from mmengine.logging import MMLogger

from .observed_labels import rows_in_image_file

__all__ = ['HoldOutMixin', 'holdout_rows']

PARTS = ('train', 'val')


def holdout_rows(num_rows: int, part: str, fraction: float = 0.2, seed: int = 1200) -> np.ndarray:
    """Sorted rows of ``part`` (``'train'`` or ``'val'``) of a ``num_rows`` hold-out split."""
    if part not in PARTS:
        raise ValueError(f'holdout.part must be one of {PARTS}, got {part!r}')
    if not 0.0 < fraction < 1.0:
        raise ValueError(f'holdout.fraction must be in (0, 1), got {fraction!r}')
    num_val = int(np.round(fraction * num_rows))
    order = np.random.RandomState(seed).permutation(num_rows)
    return np.sort(order[num_rows - num_val :] if part == 'val' else order[: num_rows - num_val])


class HoldOutMixin:
    """Adds the ``holdout`` switch (module docstring); list it before the other bases."""

    def __init__(self, *args: Any, holdout: dict | None = None, **kwargs: Any) -> None:
        if holdout is not None:
            unknown = set(holdout) - {'part', 'images_file', 'fraction', 'seed'}
            if unknown or not holdout.get('images_file') or holdout.get('part') not in PARTS:
                raise ValueError(
                    f'holdout must be dict(part=train|val, images_file=..., '
                    f'fraction=0.2, seed=1200), got {holdout!r} (config key '
                    f'`holdout`)'
                )
        self.holdout = holdout
        super().__init__(*args, **kwargs)

    def filter_data(self) -> list[dict]:
        data_list = super().filter_data()
        if self.holdout is None:
            return data_list
        images_file = self.holdout['images_file']
        if self.data_root and not osp.isabs(images_file):
            images_file = osp.join(self.data_root, images_file)
        rows, num_rows = rows_in_image_file(
            [info['img_path'] for info in data_list], images_file, 'holdout'
        )
        part = holdout_rows(
            num_rows,
            self.holdout['part'],
            self.holdout.get('fraction', 0.2),
            self.holdout.get('seed', 1200),
        )
        keep = np.isin(rows, part)
        MMLogger.get_current_instance().info(
            f'{type(self).__name__}: hold-out part {self.holdout["part"]!r} keeps '
            f'{int(keep.sum())} of {len(data_list)} images ({images_file})'
        )
        return [info for info, k in zip(data_list, keep) if k]
