"""Fail at start-up when a head's ``num_classes`` disagrees with the dataset's class list."""

from __future__ import annotations

from mmengine.hooks import Hook

from mlkd.datasets.dataset_wrappers import dataset_name
from mlkd.models.utils import unwrap_model
from mlkd.registry import HOOKS


def class_count_mismatches(model, num_dataset_classes: int) -> list[str]:
    """Module paths (``head``, ``student.head``, ...) whose ``num_classes`` differs.

    ``num_classes = 0`` marks a network without a classifier (timm's convention: the timm model
    inside a ``TimmBackbone``), which predicts no classes to check."""
    model = unwrap_model(model)
    wrong = []
    for path, module in model.named_modules():
        count = getattr(module, 'num_classes', None)
        if isinstance(count, int) and count != 0 and count != num_dataset_classes:
            wrong.append(f'model.{path}.num_classes = {count}')
    return wrong


@HOOKS.register_module()
class NumClassesCheckHook(Hook):
    """Check every module with a ``num_classes`` attribute against the dataset before each phase.

    mmpretrain's ``ClassNumCheckHook`` does the same with ``assert`` (gone under ``python -O``) and
    a message that names neither the config key nor the dataloader; this one raises ``ValueError``
    naming both.
    """

    priority = 'VERY_HIGH'

    def _check(self, runner, loader_key: str) -> None:
        loader = getattr(runner, loader_key, None)
        dataset = getattr(loader, 'dataset', None)
        classes = (getattr(dataset, 'metainfo', None) or {}).get('classes')
        if not classes:
            return
        wrong = class_count_mismatches(runner.model, len(classes))
        if wrong:
            raise ValueError(
                f'{", ".join(wrong)}, but {loader_key}.dataset ({dataset_name(dataset)}) has '
                f"{len(classes)} classes. Set the head's num_classes to {len(classes)} "
                f'(e.g. --cfg-options model.head.num_classes={len(classes)}).'
            )

    def before_train(self, runner) -> None:
        self._check(runner, 'train_dataloader')

    def before_val(self, runner) -> None:
        self._check(runner, 'val_dataloader')

    def before_test(self, runner) -> None:
        self._check(runner, 'test_dataloader')
