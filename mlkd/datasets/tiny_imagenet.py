"""Tiny ImageNet (200 classes, 64×64) read from its release layout, no re-arranging needed.

The release (``tiny-imagenet-200.zip`` of the Stanford CS231n course) unpacks to::

    <data_root>/wnids.txt                       the 200 class WordNet ids, one a line
    <data_root>/words.txt                       ``wnid<TAB>names`` for all ImageNet synsets
    <data_root>/train/<wnid>/images/*.JPEG      500 training images per class
    <data_root>/val/images/*.JPEG               10,000 validation images
    <data_root>/val/val_annotations.txt         ``file<TAB>wnid<TAB>x0<TAB>y0<TAB>x1<TAB>y1``

(``test/images`` has no labels and is not a split here; the bounding boxes are ignored.)

Class index ``i`` is the ``i``-th wnid in *sorted* order, the order of torchvision's
``ImageFolder`` over ``train/`` that mdistiller (and the checkpoints it produces) uses; the file
order of ``wnids.txt`` is not sorted. mdistiller reads ``val/`` through ``ImageFolder`` too, which
needs the validation images moved into per-class folders first; reading ``val_annotations.txt``
gives the same labels without that step.

Hidden entries (names starting with ``.``, such as macOS Finder's ``.DS_Store``) are refused in
both class lists, ``wnids.txt`` and the folders of ``train/``: a listing that counted one as a
class would shift every class index after it (torchvision's ``ImageFolder`` skips files but not
hidden folders), so the error names them and the folder to clean instead.
"""

from __future__ import annotations

import os
import os.path as osp
from collections import Counter

from mmpretrain.datasets import BaseDataset

from mlkd.registry import DATASETS

from .utils import require_data_root
from .validation import DataListChecksMixin

__all__ = ['TinyImageNet']

_SPLITS = ('train', 'val')
_IMAGE_SUFFIX = '.JPEG'


def _refuse_hidden(names, where: str) -> None:
    """Refuse hidden entries (``.DS_Store``, ``._*``...) in a class list read from ``where``."""
    hidden = sorted(n for n in names if n.startswith('.'))
    if hidden:
        raise ValueError(
            f'TinyImageNet: {where!r} lists hidden entries {hidden[:5]} where class '
            'wnids are expected (left by a file browser or an archiver?); remove '
            'them, e.g. find <data_root> -name .DS_Store -delete'
        )


def _read_lines(path: str) -> list[str]:
    if not osp.isfile(path):
        raise FileNotFoundError(f'TinyImageNet: {path!r} does not exist')
    with open(path, encoding='utf-8') as file:
        return [line.rstrip('\n') for line in file if line.strip()]


@DATASETS.register_module()
class TinyImageNet(DataListChecksMixin, BaseDataset):
    """Tiny ImageNet, single-label, from the release folder layout (module doc).

    Args:
        data_root: the ``tiny-imagenet-200`` folder.
        split: ``'train'`` or ``'val'``.
        **kwargs: :class:`mmpretrain.datasets.BaseDataset` arguments (``pipeline``, ...).

    Each sample is ``img_path`` (a JPEG; the pipeline starts with ``LoadImageFromFile``) and
    ``gt_label`` (int in ``[0, 200)``). Metainfo: ``classes`` (the sorted wnids) and
    ``class_words`` (their ``words.txt`` names).
    """

    def __init__(self, data_root: str, split: str = 'train', **kwargs) -> None:
        if split not in _SPLITS:
            raise ValueError(f'TinyImageNet: split must be one of {_SPLITS}, got {split!r}')
        self.split = split
        super().__init__(ann_file='', data_root=data_root, **kwargs)

    def _read_wnids(self, root: str) -> list[str]:
        path = osp.join(root, 'wnids.txt')
        wnids = [line.strip() for line in _read_lines(path)]
        _refuse_hidden(wnids, path)
        duplicates = sorted(w for w, count in Counter(wnids).items() if count > 1)
        if not wnids or duplicates:
            raise ValueError(
                f'{path}: needs distinct wnids, one a line; '
                f'{"empty" if not wnids else f"repeated: {duplicates}"}'
            )
        return sorted(wnids)

    def _read_words(self, root: str, wnids: list[str]) -> list[str]:
        path = osp.join(root, 'words.txt')
        words = dict(line.split('\t', 1) for line in _read_lines(path) if '\t' in line)
        missing = [w for w in wnids if w not in words]
        if missing:
            raise ValueError(f'{path}: no names for wnids {missing[:5]} ({len(missing)} missing)')
        return [words[w].strip() for w in wnids]

    def _train_samples(self, root: str, index: dict[str, int]) -> list[dict]:
        train = osp.join(root, 'train')
        if not osp.isdir(train):
            raise FileNotFoundError(f'TinyImageNet: {train!r} does not exist')
        entries = os.listdir(train)
        _refuse_hidden(entries, train)
        unknown = sorted(set(entries) - set(index))
        if unknown:
            raise ValueError(
                f'TinyImageNet: {train!r} has class folders {unknown[:5]} that are '
                f'not in {osp.join(root, "wnids.txt")!r}'
            )
        samples = []
        for wnid, label in index.items():
            folder = osp.join(train, wnid, 'images')
            names = (
                sorted(n for n in os.listdir(folder) if n.endswith(_IMAGE_SUFFIX))
                if osp.isdir(folder)
                else []
            )
            if not names:
                raise FileNotFoundError(
                    f'TinyImageNet: no {_IMAGE_SUFFIX} images in {folder!r} (class {wnid})'
                )
            samples += [{'img_path': osp.join(folder, n), 'gt_label': label} for n in names]
        return samples

    def _val_samples(self, root: str, index: dict[str, int]) -> list[dict]:
        path = osp.join(root, 'val', 'val_annotations.txt')
        folder = osp.join(root, 'val', 'images')
        present = set(os.listdir(folder)) if osp.isdir(folder) else set()
        samples = []
        for number, line in enumerate(_read_lines(path), 1):
            fields = line.split('\t')
            if len(fields) != 6:
                raise ValueError(
                    f'{path}:{number}: expected 6 tab-separated fields (file, wnid, '
                    f'x0, y0, x1, y1), got {line!r}'
                )
            name, wnid = fields[0].strip(), fields[1].strip()
            if wnid not in index:
                raise ValueError(
                    f'{path}:{number}: wnid {wnid!r} is not in {osp.join(root, "wnids.txt")!r}'
                )
            if name not in present:
                raise FileNotFoundError(
                    f'{path}:{number}: image {osp.join(folder, name)!r} does not exist'
                )
            samples.append({'img_path': osp.join(folder, name), 'gt_label': index[wnid]})
        return samples

    def load_data_list(self) -> list[dict]:
        """Samples of the split, sorted by path within a class (train) or in file order (val)."""
        root = require_data_root(
            'TinyImageNet', self.data_root, 'the tiny-imagenet-200 folder (wnids.txt, train/, val/)'
        )
        wnids = self._read_wnids(root)
        self._metainfo['classes'] = tuple(wnids)
        self._metainfo['class_words'] = tuple(self._read_words(root, wnids))
        index = {wnid: label for label, wnid in enumerate(wnids)}
        if self.split == 'train':
            return self._train_samples(root, index)
        return self._val_samples(root, index)
