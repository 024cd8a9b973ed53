"""Fail at start-up when a head's ``num_classes`` disagrees with the dataset's class list."""

from __future__ import annotations

from mmengine.hooks import Hook

from mlkd.datasets.dataset_wrappers import dataset_name
from mlkd.models.utils import unwrap_model
from mlkd.models.weights import show_keys
from mlkd.registry import HOOKS


def class_count_mismatches(model, num_dataset_classes: int) -> list[str]:
    """Module paths (``head``, ``student.head``, ...) whose ``num_classes`` differs.

    ``num_classes = 0`` marks a network without a classifier (timm's convention: the timm model
    inside a ``TimmBackbone``), which predicts no classes to check. Networks under the paths a
    model lists in ``networks_with_own_classes`` predict label sets of their own, which the model
    maps onto the dataset's itself (a :class:`~mlkd.models.distillers.MultiTeacherDistiller`'s
    teachers), and are skipped."""
    model = unwrap_model(model)
    own = tuple(getattr(model, 'networks_with_own_classes', ()))
    wrong = []
    for path, module in model.named_modules():
        if any(path == p or path.startswith(f'{p}.') for p in own):
            continue
        count = getattr(module, 'num_classes', None)
        if isinstance(count, int) and count != 0 and count != num_dataset_classes:
            wrong.append(f'model.{path}.num_classes = {count}')
    return wrong


@HOOKS.register_module()
class NumClassesCheckHook(Hook):
    """Check every module with a ``num_classes`` attribute against the dataset before each phase.

    mmpretrain's ``ClassNumCheckHook`` does the same with ``assert`` (gone under ``python -O``) and
    a message that names neither the config key nor the dataloader; this one raises ``ValueError``
    naming both. A model that names its classes (``model.classes``, a multi-teacher distiller's,
    which maps its teachers' classes onto them by name) must name the dataset's, in order; a
    distiller that reads its teachers by index must have teachers trained on the dataset's
    classes, in order, where their checkpoints record them.
    """

    priority = 'VERY_HIGH'

    def _check(self, runner, loader_key: str) -> None:
        loader = getattr(runner, loader_key, None)
        dataset = getattr(loader, 'dataset', None)
        classes = (getattr(dataset, 'metainfo', None) or {}).get('classes')
        if not classes:
            return
        named = getattr(unwrap_model(runner.model), 'classes', None)
        if named is not None and tuple(map(str, named)) != tuple(map(str, classes)):
            raise ValueError(
                f'model.classes is {list(named)}, but {loader_key}.dataset '
                f"({type(dataset).__name__}) has the classes {list(classes)}; the teachers' "
                "classes are mapped onto model.classes by name, so list the dataset's, in order"
            )
        if named is None:  # a teacher's outputs are read by index: its classes are the dataset's
            recorded = getattr(unwrap_model(runner.model), 'teacher_checkpoint_classes', {})
            for teacher, own in recorded.items():
                if own is not None and tuple(map(str, own)) != tuple(map(str, classes)):
                    raise ValueError(
                        f'teacher {teacher!r} was trained on the classes {show_keys(own, 6)} (its '
                        f'checkpoint records them), but {loader_key}.dataset '
                        f'({dataset_name(dataset)}) has {show_keys(classes, 6)}; its outputs '
                        'are read by index: use a teacher of these classes, in this order (a '
                        'multi-teacher distiller maps teachers by name with model.classes)'
                    )
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
