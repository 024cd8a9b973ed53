"""Observed labels of a weakly labelled training set: single positive and partial positives.

A config switch on any mlkd multi-label dataset turns its clean labels into *observed* ones::

    dataset=dict(type='COCOMultiLabel', ..., observed_labels=dict(mode='single_positive',
                                                                  seed=1200))

Modes (``observed_labels=dict(mode=..., ...)``):

=================== ==========================================================================
``single_positive`` one positive per image, chosen uniformly among its positives (``seed``).
``fraction``        ``max(1, floor(fraction * k + 0.5))`` of an image's ``k`` positives, chosen
                    uniformly (``fraction`` in (0, 1], ``seed``): the 75 % / 40 % partial-positive
                    settings of Table B.1 of the SCL paper (cited below). The rounding
                    rule is ours (round half up, at least one); Zhang et al.'s generator was
                    not available to compare with.
``file``            read Cole et al.'s ``formatted_{train,val}_labels_obs.npy`` (``file``):
                    ``[N, C]``, 1 observed positive, 0 unobserved, -1 observed negative. Rows
                    follow ``images_file`` (their ``formatted_*_images.npy``, image paths
                    relative to the image root) when given, else the dataset order.
=================== ==========================================================================

SCL paper: T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023.

Every sample then holds ``gt_label`` (the observed positives), ``gt_label_ignored`` (every
unobserved class, which the data preprocessor turns into -1; observed negatives of a ``file``
stay 0) and ``gt_label_full`` (the clean labels, for evaluation and analysis). Images without any
positive keep no observed positive. Treating the unobserved labels as negatives ("assume
negative") is a choice of the loss, not of the data.

The draw is vectorised (one uniform key per image x class, the smallest keys win) and depends only
on ``seed`` and the clean label matrix in dataset order: it runs once when the dataset is built,
before ``indices`` subsetting, so the worker count or a subset never changes which labels are seen.
Training pipelines must pass the two extra keys on:
``PackInputs(algorithm_keys=('gt_label_ignored', 'gt_label_full'))``.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Sequence
from typing import Any

import numpy as np
from mmengine.logging import MMLogger

__all__ = [
    'MODES',
    'ObservedLabelsMixin',
    'check_observed_cfg',
    'draw_observed_positives',
    'label_lists_to_matrix',
    'matrix_to_label_lists',
    'read_observed_file',
    'rows_in_image_file',
]

MODES = ('single_positive', 'fraction', 'file')
_KEYS = {
    'single_positive': {'seed'},
    'fraction': {'seed', 'fraction'},
    'file': {'file', 'images_file'},
}


def check_observed_cfg(cfg: dict | None) -> dict | None:
    """Validate an ``observed_labels`` config; returns a copy with defaults, or ``None``."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict) or cfg.get('mode') not in MODES:
        raise ValueError(
            f'observed_labels must be dict(mode=...) with mode in {MODES}, '
            f'got {cfg!r} (config key `observed_labels`)'
        )
    cfg = dict(cfg)
    mode = cfg['mode']
    unknown = set(cfg) - _KEYS[mode] - {'mode'}
    if unknown:
        raise ValueError(
            f'observed_labels: unknown keys {sorted(unknown)} for mode={mode!r}; '
            f'allowed {sorted(_KEYS[mode])}'
        )
    if mode in ('single_positive', 'fraction'):
        seed = cfg.setdefault('seed', 0)
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f'observed_labels.seed must be a non-negative int, got {seed!r}')
    if mode == 'fraction':
        fraction = cfg.get('fraction')
        if not isinstance(fraction, (int, float)) or not 0.0 < fraction <= 1.0:
            raise ValueError(f'observed_labels.fraction must be in (0, 1], got {fraction!r}')
    if mode == 'file' and not cfg.get('file'):
        raise ValueError("observed_labels: mode='file' needs `file` (a *_labels_obs.npy)")
    return cfg


def label_lists_to_matrix(label_lists: Sequence[Sequence[int]], num_classes: int) -> np.ndarray:
    """``[N, C]`` bool multi-hot matrix of per-sample class lists (one scatter)."""
    lengths = np.fromiter(
        (len(labels) for labels in label_lists), dtype=np.int64, count=len(label_lists)
    )
    matrix = np.zeros((len(label_lists), num_classes), dtype=bool)
    if lengths.sum():
        cols = np.concatenate([np.asarray(labels, dtype=np.int64) for labels in label_lists])
        matrix[np.repeat(np.arange(len(label_lists)), lengths), cols] = True
    return matrix


def matrix_to_label_lists(matrix: np.ndarray) -> list[list[int]]:
    """Sorted class lists of the true entries of each row of a ``[N, C]`` matrix."""
    if len(matrix) == 0:
        return []
    rows, cols = np.nonzero(matrix)
    bounds = np.searchsorted(rows, np.arange(1, len(matrix)))
    return [part.tolist() for part in np.split(cols, bounds)]


def draw_observed_positives(
    labels: np.ndarray, seed: int, fraction: float | None = None
) -> np.ndarray:
    """Keep a uniformly chosen subset of each row's positives.

    Args:
        labels: ``[N, C]`` bool clean labels.
        seed: seed of the draw (numpy ``default_rng``).
        fraction: ``None`` keeps one positive per row; otherwise
            ``max(1, floor(fraction * k + 0.5))`` of the ``k`` positives of a row.

    Returns:
        ``[N, C]`` bool observed positives, a subset of ``labels``; rows without positives stay
        empty.
    """
    labels = np.asarray(labels, dtype=bool)
    keys = np.random.default_rng(seed).random(labels.shape)
    # Positives get keys in [0, 1), the rest sort after them; the rank of a key among its row is
    # then a uniformly random order of the row's positives.
    keys[~labels] = 2.0
    rank = keys.argsort(axis=1, kind='stable').argsort(axis=1, kind='stable')
    num_pos = labels.sum(axis=1)
    if fraction is None:
        keep = np.minimum(num_pos, 1)
    else:
        keep = np.where(
            num_pos > 0, np.maximum(1, np.floor(fraction * num_pos + 0.5).astype(np.int64)), 0
        )
    return labels & (rank < keep[:, None])


def _path_tail(path: str, depth: int) -> str:
    return '/'.join(path.replace('\\', '/').split('/')[-depth:])


def rows_in_image_file(
    img_paths: Sequence[str], images_file: str, switch: str
) -> tuple[np.ndarray, int]:
    """Row of each dataset image in a Cole-style ``formatted_*_images.npy``.

    Entries are image paths relative to the image root; a dataset image matches the entry equal
    to its last path components (as many as the entries have), so ``train2014/COCO_..jpg``
    matches ``data/coco/train2014/COCO_..jpg``.

    Returns:
        ``[N]`` int64 rows and the number of entries of ``images_file``.

    Raises:
        FileNotFoundError / ValueError naming ``images_file`` (``switch`` names the config key).
    """
    if not osp.isfile(images_file):
        raise FileNotFoundError(f'{switch}: {images_file!r} not found')
    names = np.load(images_file, allow_pickle=False).astype(str)
    if names.ndim != 1:
        raise ValueError(
            f'{switch}: {images_file} must hold a 1-d array of image paths, got shape {names.shape}'
        )
    depth = len(names[0].replace('\\', '/').split('/')) if len(names) else 1
    row_of = {_path_tail(name, depth): row for row, name in enumerate(names)}
    rows = np.array([row_of.get(_path_tail(p, depth), -1) for p in img_paths], dtype=np.int64)
    if (rows < 0).any():
        missing = [img_paths[i] for i in np.flatnonzero(rows < 0)[:3]]
        raise ValueError(
            f'{switch}: {int((rows < 0).sum())} dataset images are not in '
            f'{images_file}, e.g. {missing}'
        )
    return rows, len(names)


def read_observed_file(
    file: str,
    num_classes: int,
    img_paths: Sequence[str] | None = None,
    images_file: str | None = None,
) -> np.ndarray:
    """Observed labels of Cole et al.'s ``formatted_*_labels_obs.npy``, aligned with a dataset.

    Args:
        file: ``[M, C]`` array, 1 observed positive, 0 unobserved, -1 observed negative.
        num_classes: ``C`` expected.
        img_paths: the dataset's image paths (``[N]``); needed with ``images_file``.
        images_file: ``[M]`` array of image paths relative to the image root (their
            ``formatted_*_images.npy``), matched as in :func:`rows_in_image_file`. Without it,
            the file's rows are the dataset's.

    Returns:
        ``[N, C]`` int8 array in dataset order.

    Raises:
        FileNotFoundError / ValueError naming the file and the row or image at fault.
    """
    for path in (file, images_file):
        if path is not None and not osp.isfile(path):
            raise FileNotFoundError(f'observed_labels: {path!r} not found')
    # allow_pickle=False: a .npy of numbers (or fixed-width strings) needs no unpickling.
    obs = np.load(file, allow_pickle=False)
    if obs.ndim != 2 or obs.shape[1] != num_classes:
        raise ValueError(
            f'observed_labels: {file} has shape {obs.shape}; expected [N, '
            f'{num_classes}] (one column per class)'
        )
    bad = ~np.isin(obs, (-1, 0, 1))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f'observed_labels: {file} row {row} class {col} holds '
            f'{obs[row, col].item()!r}; entries must be 1 (observed positive), 0 '
            f'or -1'
        )
    obs = obs.astype(np.int8)
    if images_file is None:
        if img_paths is not None and len(obs) != len(img_paths):
            raise ValueError(
                f'observed_labels: {file} has {len(obs)} rows but the dataset has '
                f'{len(img_paths)} images; give `images_file` to match them by path'
            )
        return obs
    rows, num_names = rows_in_image_file(img_paths, images_file, 'observed_labels')
    if num_names != len(obs):
        raise ValueError(
            f'observed_labels: {images_file} holds {num_names} names for the '
            f'{len(obs)} rows of {file}'
        )
    return obs[rows]


class ObservedLabelsMixin:
    """Adds the ``observed_labels`` switch to a multi-label dataset (put it first in the bases).

    It acts in ``filter_data``, which ``full_init`` calls right after ``load_data_list``, so it
    composes with any dataset that defines its own ``load_data_list``. See the module docstring.
    """

    def __init__(self, *args: Any, observed_labels: dict | None = None, **kwargs: Any) -> None:
        self.observed_labels = check_observed_cfg(observed_labels)
        super().__init__(*args, **kwargs)

    def filter_data(self) -> list[dict]:
        data_list = super().filter_data()
        if self.observed_labels is None:
            return data_list
        return self._observe(data_list)

    def _resolve(self, path: str | None) -> str | None:
        if path is None or osp.isabs(path) or not self.data_root:
            return path
        return osp.join(self.data_root, path)

    def _observe(self, data_list: list[dict]) -> list[dict]:
        cfg = self.observed_labels
        name = type(self).__name__
        num_classes = len(self.metainfo['classes'])
        full = label_lists_to_matrix([info['gt_label'] for info in data_list], num_classes)
        if cfg['mode'] == 'file':
            obs = read_observed_file(
                self._resolve(cfg['file']),
                num_classes,
                [info.get('img_path', '') for info in data_list],
                self._resolve(cfg.get('images_file')),
            )
            wrong = (obs == 1) & ~full
            if wrong.any():
                row, col = np.argwhere(wrong)[0]
                raise ValueError(
                    f'{name}: observed_labels file {cfg["file"]!r} marks class '
                    f'{col} of sample {row} ({data_list[row].get("img_path")}) '
                    f'positive, but it is not among its clean labels'
                )
            observed, unobserved = obs == 1, obs == 0
        else:
            observed = draw_observed_positives(full, cfg['seed'], cfg.get('fraction'))
            unobserved = ~observed
        # A dataset's own ignored labels (e.g. uncertain CUB attributes) stay ignored.
        ignored_before = [
            [] if info.get('gt_label_ignored') is None else info['gt_label_ignored']
            for info in data_list
        ]
        ignored = unobserved | label_lists_to_matrix(ignored_before, num_classes)
        for info, positives, unseen, clean in zip(
            data_list,
            matrix_to_label_lists(observed),
            matrix_to_label_lists(ignored),
            matrix_to_label_lists(full),
        ):
            info['gt_label'] = positives
            info['gt_label_ignored'] = unseen
            info['gt_label_full'] = clean
        MMLogger.get_current_instance().info(
            f'{name}: observed labels ({cfg["mode"]}): {int(observed.sum())} of '
            f'{int(full.sum())} positives observed in {len(data_list)} images'
        )
        return data_list
