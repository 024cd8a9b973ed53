"""NUS-WIDE (81 concepts) as a multi-label dataset, under the three protocols papers use.

Expected layout under ``data_root`` (the official release plus the Flickr images)::

    data/nuswide
    ├── Concepts81.txt                          81 concept names, one per line (class order)
    ├── ImageList/TrainImagelist.txt            "actor\\0001_2124494179.jpg" per line
    ├── ImageList/TestImagelist.txt
    ├── TrainTestLabels/Labels_<concept>_Train.txt   one 0/1 per line, aligned with the list
    ├── TrainTestLabels/Labels_<concept>_Test.txt
    ├── Flickr/<folder>/<file>.jpg              the images
    └── formatted_{train,val}_{images,labels}.npy    only for protocol='cole'

``protocol``:

* ``'official'``: the official lists (161,789 train / 107,859 test), images without any of the
  81 concepts kept as all-negative samples;
* ``'official_labeled'``: the same lists without the images that have no concept (the variant
  of ASL and of T. Kobayashi, "Two-way Multi-Label Loss", CVPR 2023);
* ``'cole'``: Cole et al.'s re-crawled subset (the splits of T. Verelst et al., "Spatial
  Consistency Loss for Training Multi-Label Classifiers from Single-Label Annotations",
  WACV 2023, supplement Table K.1), read from their
  ``formatted_{train,val}_images.npy`` (paths relative to ``Flickr/``) and
  ``formatted_{train,val}_labels.npy`` (``[N, 81]`` 0/1); ``split='test'`` reads their ``val``
  files, which hold the official test images.

List paths may use Windows separators; the last two components (``<folder>/<file>``) are kept.

Skip policy: many Flickr images of the official lists can no longer be downloaded, so by default
(``missing_images='skip'``) images that are not on disk are dropped and their count is logged
as a warning (with the first paths); ``missing_images='error'`` raises naming them instead.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Sequence
from typing import Any

import numpy as np
from mmengine.fileio import join_path
from mmengine.logging import MMLogger
from mmpretrain.datasets import MultiLabelDataset

from mlkd.registry import DATASETS

from .holdout import HoldOutMixin
from .observed_labels import ObservedLabelsMixin, matrix_to_label_lists
from .utils import check_config_choice, check_missing_images, require_data_root
from .validation import DataListChecksMixin

__all__ = ['NUSWIDE']

PROTOCOLS = ('official', 'official_labeled', 'cole')
_SPLITS = ('train', 'test')
_OFFICIAL_SPLIT = {'train': 'Train', 'test': 'Test'}
_COLE_SPLIT = {'train': 'train', 'test': 'val'}
#: Images of the official lists with at least one concept, as T. Kobayashi, "Two-way Multi-Label
#: Loss", CVPR 2023, supplement Table C counts them (``protocol='official_labeled'``).
TWO_WAY_SIZES = {'train': 125_448, 'test': 83_898}


@DATASETS.register_module()
class NUSWIDE(HoldOutMixin, ObservedLabelsMixin, DataListChecksMixin, MultiLabelDataset):
    """NUS-WIDE, 81 concepts (see the module docstring for the layout and protocols).

    Each data_info holds ``img_path`` (``data_root/Flickr/<folder>/<file>``) and ``gt_label``
    (sorted concept indices in ``Concepts81.txt`` order), in list order.

    Args:
        data_root: dataset root; must exist.
        split: ``'train'`` or ``'test'``.
        protocol: ``'official'``, ``'official_labeled'`` or ``'cole'``.
        data_prefix: image folder relative to ``data_root``; default ``Flickr``.
        missing_images: ``'skip'`` (default, logged) or ``'error'``.
        observed_labels: see :mod:`mlkd.datasets.observed_labels`.
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments.
    """

    METAINFO: dict = {}

    def __init__(
        self,
        data_root: str,
        split: str = 'train',
        protocol: str = 'official_labeled',
        data_prefix: str | dict = 'Flickr',
        missing_images: str = 'skip',
        pipeline: Sequence = (),
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        if split not in _SPLITS:
            raise ValueError(f'NUSWIDE: split must be one of {_SPLITS}, got {split!r}')
        check_config_choice('NUSWIDE', 'protocol', protocol, PROTOCOLS)
        data_root = require_data_root(
            'NUSWIDE',
            data_root,
            'the NUS-WIDE folder holding Concepts81.txt, ImageList/, TrainTestLabels/ and Flickr/',
        )
        self.split, self.protocol, self.missing_images = split, protocol, missing_images
        concepts = osp.join(data_root, 'Concepts81.txt')
        if not osp.isfile(concepts):
            raise FileNotFoundError(f'NUSWIDE: concept list {concepts!r} not found')
        with open(concepts, encoding='utf-8') as f:
            classes = [line.strip() for line in f if line.strip()]
        if len(classes) != 81:
            raise ValueError(f'NUSWIDE: {concepts} lists {len(classes)} concepts; expected 81')
        super().__init__(
            ann_file='',
            data_root=data_root,
            data_prefix=data_prefix,
            classes=classes,
            pipeline=pipeline,
            test_mode=test_mode,
            **kwargs,
        )

    def _official(self) -> tuple[list[str], np.ndarray, str]:
        """Relative image paths, ``[N, 81]`` bool labels and the list file."""
        tag = _OFFICIAL_SPLIT[self.split]
        list_file = osp.join(self.data_root, 'ImageList', f'{tag}Imagelist.txt')
        if not osp.isfile(list_file):
            raise FileNotFoundError(f'NUSWIDE: image list {list_file!r} not found')
        with open(list_file, encoding='utf-8') as f:
            paths = [
                '/'.join(line.strip().replace('\\', '/').split('/')[-2:])
                for line in f
                if line.strip()
            ]
        labels = np.zeros((len(paths), len(self.metainfo['classes'])), dtype=bool)
        for col, concept in enumerate(self.metainfo['classes']):
            label_file = osp.join(self.data_root, 'TrainTestLabels', f'Labels_{concept}_{tag}.txt')
            if not osp.isfile(label_file):
                raise FileNotFoundError(f'NUSWIDE: label file {label_file!r} not found')
            with open(label_file, encoding='utf-8') as f:
                tokens = f.read().split()
            if len(tokens) != len(paths) or not set(tokens) <= {'0', '1'}:
                raise ValueError(
                    f'NUSWIDE: {label_file} must hold one 0/1 per image of '
                    f'{list_file} ({len(paths)}); got {len(tokens)} entries with '
                    f'values {sorted(set(tokens))[:5]}'
                )
            labels[:, col] = np.array(tokens) == '1'
        return paths, labels, list_file

    def _cole(self) -> tuple[list[str], np.ndarray, str]:
        tag = _COLE_SPLIT[self.split]
        files = [
            osp.join(self.data_root, f'formatted_{tag}_{kind}.npy') for kind in ('images', 'labels')
        ]
        for file in files:
            if not osp.isfile(file):
                raise FileNotFoundError(
                    f'NUSWIDE: {file!r} not found (protocol="cole" reads '
                    f"Cole et al.'s formatted files)"
                )
        paths = np.load(files[0], allow_pickle=False).astype(str).tolist()
        labels = np.load(files[1], allow_pickle=False)
        if (
            labels.shape != (len(paths), len(self.metainfo['classes']))
            or not np.isin(labels, (0, 1)).all()
        ):
            raise ValueError(
                f'NUSWIDE: {files[1]} must be a 0/1 array of shape '
                f'({len(paths)}, 81) matching {files[0]}; got {labels.shape}'
            )
        return paths, labels.astype(bool), files[0]

    def load_data_list(self) -> list[dict]:
        """Read the lists of the protocol, then apply ``missing_images``.

        Returns:
            list of ``dict(img_path=str, gt_label=list[int])`` in list order.
        """
        paths, labels, source = self._cole() if self.protocol == 'cole' else self._official()
        if self.protocol == 'official_labeled':
            keep = labels.any(axis=1)
            paths = [p for p, k in zip(paths, keep) if k]
            labels = labels[keep]
            # Logged so that a run can be compared with the paper's split before images
            # missing on disk are dropped.
            MMLogger.get_current_instance().info(
                f'NUSWIDE: protocol official_labeled keeps {len(paths)} of {len(keep)} images of '
                f'{source} (those with at least one concept; the Two-way paper counts '
                f'{TWO_WAY_SIZES[self.split]:,} for the {self.split} split)'
            )
        prefix = self.data_prefix.get('img_path', '')
        data_list = [
            dict(img_path=join_path(prefix, p) if prefix else p, gt_label=gt)
            for p, gt in zip(paths, matrix_to_label_lists(labels))
        ]
        data_list = check_missing_images(data_list, self.missing_images, 'NUSWIDE', source)
        if not data_list:
            raise ValueError(f'NUSWIDE: no image of {source} is on disk under {prefix!r}')
        return data_list

    def extra_repr(self) -> list[str]:
        return [
            f'Split: \t{self.split}',
            f'Protocol: \t{self.protocol}',
            f'Missing images: \t{self.missing_images}',
        ]
