"""Checks every dataset's sample list passes when the dataset is built (not at the first batch).

* An image listed twice (the same ``img_path``) is an error naming both entries; with
  ``duplicate_images='skip'`` the later entries are dropped and their count is logged.
* Every label (``gt_label``, ``gt_label_difficult``, ``gt_label_ignored``, ``gt_label_full``) is a
  class index in ``[0, num_classes)``; an error names the sample, its image and the range.
* A class name given twice in the ``classes`` a dataset is given (a file, or a list) is an error
  naming the file, the name and both lines: two outputs would stand for one class.
* Images smaller than a crop that sees them as loaded (:func:`plain_crop_size`: no resize
  before it, no padding to size) are counted once, when the dataset is built, and a warning gives
  their number: such a crop cuts them to their own size, so they train smaller than the others.
  Their sizes come from the sample list where it has them, else from the image headers (read
  only when the pipeline has such a crop; nothing is added to loading a sample).
* On request (``tools/train.py --validate-data``), :func:`validate_images` decodes every image
  once: unreadable or truncated files, and images smaller than a crop that does not resize, are
  named with their index. Without it a bad image fails when loaded, naming its path and index.

:class:`DataListChecksMixin` runs them in ``filter_data``, which ``full_init`` calls right after
``load_data_list``; put it after ``ObservedLabelsMixin`` / ``HoldOutMixin`` in the bases, so the
checks see the list as read from disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mmengine.logging import MMLogger

from .utils import check_config_choice

__all__ = [
    'DUPLICATE_IMAGE_POLICIES',
    'DataListChecksMixin',
    'check_class_names',
    'check_data_list',
    'images_smaller_than',
    'plain_crop_size',
    'validate_images',
]

#: What a dataset does with an image listed more than once.
DUPLICATE_IMAGE_POLICIES = ('error', 'skip')
_LABEL_KEYS = ('gt_label', 'gt_label_difficult', 'gt_label_ignored', 'gt_label_full')
_LISTED = 3


def _drop_duplicates(data_list: list[dict], policy: str, dataset: str, source: str) -> list[dict]:
    first_index: dict[str, int] = {}
    repeated: list[tuple[int, int, str]] = []
    for index, info in enumerate(data_list):
        path = info.get('img_path')
        if path is None:
            continue
        if path in first_index:
            repeated.append((first_index[path], index, path))
        else:
            first_index[path] = index
    if not repeated:
        return data_list
    shown = '; '.join(f'{p!r} at samples {a} and {b}' for a, b, p in repeated[:_LISTED])
    more = f' and {len(repeated) - _LISTED} more' if len(repeated) > _LISTED else ''
    if policy == 'error':
        raise ValueError(
            f'{dataset}: {len(repeated)} image(s) listed more than once in '
            f'{source}: {shown}{more}; each image must be listed once (set '
            'duplicate_images="skip" to keep only the first entry)'
        )
    MMLogger.get_current_instance().warning(
        f'{dataset}: skipped {len(repeated)} repeated entries of {len(data_list)} in {source} '
        f'(duplicate_images="skip"; the first entry of each image is kept): {shown}{more}'
    )
    dropped = {index for _, index, _ in repeated}
    return [info for index, info in enumerate(data_list) if index not in dropped]


def _check_label_range(data_list: list[dict], num_classes: int, dataset: str, source: str) -> None:
    for key in _LABEL_KEYS:
        rows = [
            (index, info[key]) for index, info in enumerate(data_list) if info.get(key) is not None
        ]
        if not rows:
            continue
        lengths = [np.size(labels) for _, labels in rows]
        values = (
            np.concatenate([np.asarray(labels, dtype=np.float64).reshape(-1) for _, labels in rows])
            if sum(lengths)
            else np.zeros(0)
        )
        bad = (values < 0) | (values >= num_classes) | (values != np.round(values))
        if bad.any():
            position = int(
                np.searchsorted(np.cumsum(lengths), np.flatnonzero(bad)[0], side='right')
            )
            index, labels = rows[position]
            image = data_list[index].get('img_path', '(generated)')
            raise ValueError(
                f'{dataset}: sample {index} ({image}) of {source} has {key} '
                f'{np.asarray(labels).tolist()}; expected class indices in '
                f'0..{num_classes - 1} ({num_classes} classes)'
            )


def check_class_names(classes: Sequence[str], dataset: str, source: str) -> None:
    """Refuse a class named twice, naming ``source`` (the classes file: positions are its line
    numbers), the name and where it occurs."""
    first: dict[str, int] = {}
    for index, name in enumerate(classes):
        if name in first:
            raise ValueError(
                f'{dataset}: the class name {name!r} is given twice in {source} (lines '
                f'{first[name] + 1} and {index + 1}); each class needs its own name, else two '
                'outputs, labels and AP columns stand for what reads as one class'
            )
        first[name] = index


def check_data_list(
    data_list: list[dict],
    num_classes: int | None,
    dataset: str,
    source: str,
    duplicate_images: str = 'error',
) -> list[dict]:
    """Run the checks of the module docstring on ``data_list``; returns it (duplicates dropped
    under ``duplicate_images='skip'``). ``source`` names the annotation read."""
    check_config_choice(dataset, 'duplicate_images', duplicate_images, DUPLICATE_IMAGE_POLICIES)
    data_list = _drop_duplicates(data_list, duplicate_images, dataset, source)
    if num_classes:
        _check_label_range(data_list, num_classes, dataset, source)
    return data_list


class DataListChecksMixin:
    """Adds :func:`check_data_list` (and the ``duplicate_images`` switch), the class-name check
    and the count of images smaller than the pipeline's crop to a dataset."""

    def __init__(
        self,
        *args: Any,
        duplicate_images: str = 'error',
        class_names_source: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.duplicate_images = duplicate_images
        # Class names the dataset is given (a file, or a list; ``class_names_source``: the file a
        # list was read from): a dataset's own fixed names are left alone (ImageNet's, which name
        # two classes 'crane', among them).
        classes = kwargs.get('classes')
        self._class_names_source = (
            None
            if classes is None
            else repr(class_names_source or classes)
            if isinstance(classes, str) or class_names_source
            else 'the `classes` of the config'
        )
        self._pipeline_config = kwargs.get('pipeline')
        super().__init__(*args, **kwargs)

    def data_source(self) -> str:
        """What the sample list was read from, for messages (the annotation file by default)."""
        return str(
            getattr(self, 'ann_file', '') or getattr(self, 'data_root', '') or type(self).__name__
        )

    def filter_data(self) -> list[dict]:
        data_list = super().filter_data()
        name = type(self).__name__
        classes = (self.metainfo or {}).get('classes')
        if classes and self._class_names_source:
            check_class_names(classes, name, self._class_names_source)
        data_list = check_data_list(
            data_list,
            len(classes) if classes else None,
            name,
            self.data_source(),
            self.duplicate_images,
        )
        self._warn_about_images_smaller_than_the_crop(data_list)
        return data_list

    def _warn_about_images_smaller_than_the_crop(self, data_list: list[dict]) -> None:
        crop = plain_crop_size(self._pipeline_config)
        if crop is None:
            return
        small = images_smaller_than(data_list, crop)
        if not small:
            return
        shown = '; '.join(f'{path!r} {h}x{w}' for _, path, h, w in small[:_LISTED])
        more = f' and {len(small) - _LISTED} more' if len(small) > _LISTED else ''
        MMLogger.get_current_instance().warning(
            f'{type(self).__name__}: {len(small)} of {len(data_list)} images of '
            f'{self.data_source()} are smaller than the {crop[0]}x{crop[1]} (height x width) '
            f'crop of the pipeline, which cannot cut that size from them: {shown}{more}. Resize '
            'them, let the crop pad them (pad_if_needed=True), or refuse them with '
            '`tools/train.py --validate-data`.'
        )


#: Transforms that cut a window of ``crop_size`` out of the image as it is (no resizing).
_PLAIN_CROPS = ('RandomCrop', 'CenterCrop')
#: Transforms that change the image size before a later crop.
_RESIZES = (
    'Resize',
    'RandomResize',
    'ResizeEdge',
    'RandomResizedCrop',
    'RandomResizedCropWithBox',
    'Pad',
    'EfficientNetRandomCrop',
    'EfficientNetCenterCrop',
)


def plain_crop_size(pipeline: Sequence[dict] | None) -> tuple[int, int] | None:
    """``(height, width)`` an image needs for the first ``RandomCrop`` / ``CenterCrop`` of
    ``pipeline`` (configs) that sees the image as loaded (no resize before it, no padding to
    size), or ``None``. An image smaller than that is not cropped but trained on as it is: the
    dataset warns with their count, :func:`validate_images` refuses them.

    mmpretrain's ``RandomCrop`` takes ``crop_size`` as ``(h, w)``, mmcv's ``CenterCrop`` as
    ``(w, h)``; ``RandomCrop``'s ``padding`` is added on each side before cropping."""
    for transform in pipeline or []:
        if not isinstance(transform, dict):  # a built transform: its kind is not read
            return None
        kind = str(transform.get('type', '')).split('.')[-1]
        if kind in _RESIZES:
            return None
        if kind in _PLAIN_CROPS:
            if transform.get('pad_if_needed') or transform.get('auto_pad'):
                return None
            size, padding = transform.get('crop_size'), transform.get('padding') or 0
            if size is None or not isinstance(padding, int):
                return None
            if isinstance(size, int):
                height, width = size, size
            else:
                height, width = size if kind == 'RandomCrop' else (size[1], size[0])
            return int(height) - 2 * padding, int(width) - 2 * padding
    return None


def _image_size(info: dict) -> tuple[int, int] | None:
    """``(height, width)`` of a sample from its info (an image in memory, a recorded shape) or,
    failing that, its image file's header (nothing decoded)."""
    if info.get('img') is not None:
        return tuple(np.shape(info['img'])[:2])
    for key in ('ori_shape', 'img_shape'):
        if info.get(key) is not None:
            return tuple(info[key][:2])
    if info.get('height') and info.get('width'):
        return int(info['height']), int(info['width'])
    path = info.get('img_path')
    if path is None:
        return None
    from PIL import Image

    try:
        with Image.open(path) as image:
            width, height = image.size
    except Exception:  # unreadable: loading the sample names it (or --validate-data does)
        return None
    return height, width


def images_smaller_than(
    data_list: list[dict], min_size: tuple[int, int]
) -> list[tuple[int, str, int, int]]:
    """``(index, image, height, width)`` of every sample smaller than ``min_size`` (h, w)."""
    small = []
    for index, info in enumerate(data_list):
        size = _image_size(info)
        if size is not None and (size[0] < min_size[0] or size[1] < min_size[1]):
            small.append((index, str(info.get('img_path', '(in memory)')), *size))
    return small


def validate_images(
    dataset, min_size: tuple[int, int] | None = None, where: str = 'dataset'
) -> int:
    """Decode every image of ``dataset`` once (``--validate-data`` of tools/train.py).

    Args:
        dataset: a built dataset whose ``get_data_info(i)`` holds ``img_path``.
        min_size: ``(height, width)`` every image must reach (:func:`plain_crop_size`).
        where: the config key of the dataset, for messages.

    Returns:
        the number of images checked.

    Raises:
        ValueError: naming the first unreadable or truncated images, or images smaller than
            ``min_size``, with their sample index and path, and how many there are.
    """
    from PIL import Image

    problems: list[str] = []
    checked = 0
    for index in range(len(dataset)):
        path = dataset.get_data_info(index).get('img_path')
        if path is None:
            continue
        checked += 1
        try:
            with Image.open(path) as image:
                image.load()  # a full decode: truncated files fail here
                width, height = image.size
        except Exception as error:  # PIL raises OSError, SyntaxError, ValueError...
            problems.append(
                f'sample {index} {path!r}: unreadable ({type(error).__name__}: {error})'
            )
            continue
        if min_size and (height < min_size[0] or width < min_size[1]):
            problems.append(
                f'sample {index} {path!r}: {height}x{width} (height x width) is '
                f'smaller than the crop {min_size[0]}x{min_size[1]}'
            )
    if problems:
        more = f' (and {len(problems) - _LISTED} more)' if len(problems) > _LISTED else ''
        raise ValueError(
            f'{where} ({type(dataset).__name__}): {len(problems)} of {checked} '
            f'images are not usable: ' + '; '.join(problems[:_LISTED]) + more
        )
    return checked
