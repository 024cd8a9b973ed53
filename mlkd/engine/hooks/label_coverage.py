"""Warn at start-up about a run that cannot learn or measure some classes."""

from __future__ import annotations

import numpy as np
from mmengine.hooks import Hook
from mmengine.logging import print_log

from mlkd.datasets.dataset_wrappers import dataset_name
from mlkd.registry import HOOKS


def positives_per_class(dataset) -> np.ndarray | None:
    """``[C]`` int64: how many samples of ``dataset`` have each class as a positive label.

    ``None`` when the dataset has no class list or no ``get_cat_ids``. Reads the annotations only
    (no image is decoded).
    """
    classes = (getattr(dataset, 'metainfo', None) or {}).get('classes')
    if not classes or not hasattr(dataset, 'get_cat_ids'):
        return None
    labels = [
        np.asarray(dataset.get_cat_ids(i), dtype=np.int64).reshape(-1) for i in range(len(dataset))
    ]
    flat = np.concatenate(labels) if labels else np.zeros(0, np.int64)
    flat = flat[(flat >= 0) & (flat < len(classes))]
    # A sample lists a class once; bincount counts samples per class.
    return np.bincount(flat, minlength=len(classes))


@HOOKS.register_module()
class LabelCoverageHook(Hook):
    """Warn (never fail) before training when a run would learn or measure nothing for some classes:

    * ``train_cfg.max_epochs`` is 0: nothing is trained and no checkpoint is written;
    * no training sample has any positive label (every target is negative: the model learns to
      say "no" and every mAP is 0);
    * a class has no positive sample in the training split, or in the validation split (its AP is
      undefined: 0 or excluded, by the metric's ``empty_policy``).

    Each warning names the dataloader, the dataset's class and the classes concerned.
    """

    priority = 'LOW'

    def __init__(self, max_listed: int = 20) -> None:
        self.max_listed = max_listed

    def _warn(self, message: str) -> None:
        print_log(message, logger='current', level=30)  # logging.WARNING

    def _check(self, runner, loader_key: str) -> None:
        loader = getattr(runner, loader_key, None)
        dataset = getattr(loader, 'dataset', None)
        if dataset is None:
            return
        counts = positives_per_class(dataset)
        if counts is None or len(dataset) == 0:
            return
        name = f'{loader_key}.dataset ({dataset_name(dataset)}, {len(dataset)} samples)'
        if counts.sum() == 0:
            self._warn(
                f'{name}: no sample has a positive label; the model can only learn to '
                'predict "absent" and every AP will be 0. Check the annotation file and '
                'the class list.'
            )
            return
        classes = list(dataset.metainfo['classes'])
        empty = [classes[i] for i in np.flatnonzero(counts == 0)]
        if empty:
            shown = ', '.join(map(str, empty[: self.max_listed])) + (
                f' ... ({len(empty)} in all)' if len(empty) > self.max_listed else ''
            )
            self._warn(
                f'{name}: {len(empty)} of {len(classes)} classes have no positive sample: '
                f"{shown}. Their AP is undefined (0 or excluded, by the metric's "
                'empty_policy).'
            )

    def before_train(self, runner) -> None:
        max_epochs = getattr(runner.train_loop, 'max_epochs', None)
        max_iters = getattr(runner.train_loop, 'max_iters', None)
        if max_epochs == 0 or max_iters == 0:
            self._warn(
                'train_cfg.max_epochs is 0: nothing will be trained and no checkpoint written.'
            )
        self._check(runner, 'train_dataloader')
        self._check(runner, 'val_dataloader')
