"""NumClassesCheckHook: heads against the dataset's classes, and a model's class names."""

from types import SimpleNamespace

import pytest
from conftest import MULTIDIGITS_3D, small_run_cfg
from torch import nn

from mlkd.engine.hooks import NumClassesCheckHook


def _head(count: int) -> nn.Module:
    head = nn.Linear(1, count)
    head.num_classes = count
    return head


class _Distiller(nn.Module):
    """A multi-teacher distiller's layout: a student, teachers of their own label sets."""

    networks_with_own_classes = ('teachers',)

    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.student = nn.Module()
        self.student.head = _head(3)
        self.teachers = nn.ModuleDict({'a': nn.Module()})
        self.teachers['a'].head = _head(2)  # its own label set: not the dataset's


def _runner(model, classes=('cat', 'dog', 'car')):
    dataset = SimpleNamespace(metainfo={'classes': classes})
    return SimpleNamespace(model=model, train_dataloader=SimpleNamespace(dataset=dataset))


def test_teachers_of_their_own_label_sets_are_left_to_the_model():
    NumClassesCheckHook().before_train(_runner(_Distiller(('cat', 'dog', 'car'))))
    NumClassesCheckHook().before_train(_runner(_Distiller(None)))  # unnamed: counts only
    model = _Distiller(None)
    model.networks_with_own_classes = ()
    with pytest.raises(ValueError, match=r'model.teachers.a.head.num_classes = 2, but'):
        NumClassesCheckHook().before_train(_runner(model))


def test_class_names_of_the_model_must_be_the_datasets_in_order():
    with pytest.raises(
        ValueError,
        match=r"model.classes is \['cat', 'car', 'dog'\], but train_dataloader.dataset "
        r"\(SimpleNamespace\) has the classes \['cat', 'dog', 'car'\]",
    ):
        NumClassesCheckHook().before_train(_runner(_Distiller(('cat', 'car', 'dog'))))


def test_a_teacher_read_by_index_must_be_trained_on_the_datasets_classes_in_order():
    model = _Distiller(None)
    model.teacher_checkpoint_classes = {'a': ('dog', 'cat', 'car'), 'b': None}  # b: unrecorded
    with pytest.raises(
        ValueError,
        match=r"teacher 'a' was trained on the classes \['dog', 'cat', 'car'\] \(its checkpoint "
        r"records them\), but train_dataloader.dataset \(SimpleNamespace\) has \['cat', 'dog'",
    ):
        NumClassesCheckHook().before_train(_runner(model))
    model.teacher_checkpoint_classes['a'] = ('cat', 'dog', 'car')
    NumClassesCheckHook().before_train(_runner(model))
    named = _Distiller(('cat', 'dog', 'car'))  # teachers mapped by name: their own order is fine
    named.teacher_checkpoint_classes = {'a': ('dog', 'cat')}
    NumClassesCheckHook().before_train(_runner(named))


def test_a_distillation_from_a_teacher_of_another_class_order_stops_before_training(
    multidigits_teacher_ckpt, tmp_path
):
    """The checkpoint's record (meta.dataset_meta.classes) is read by the distiller; a teacher
    whose outputs mean other classes is refused, naming them, before the first step."""
    import torch

    from mlkd.engine import build_runner
    from mlkd.utils.checkpoint import load_local_checkpoint

    checkpoint = load_local_checkpoint(multidigits_teacher_ckpt, 'cpu')
    classes = list(checkpoint['meta']['dataset_meta']['classes'])
    checkpoint['meta']['dataset_meta']['classes'] = classes[::-1]
    path = str(tmp_path / 'teacher_reversed.pth')
    torch.save(checkpoint, path)
    cfg = small_run_cfg(
        MULTIDIGITS_3D, str(tmp_path / 'w'), epochs=1, train_samples=16, val_samples=16
    )
    cfg.model.teacher_ckpt = path
    runner = build_runner(cfg)
    with pytest.raises(
        ValueError, match=rf"teacher 'teacher' was trained on the classes \['{classes[-1]}'"
    ):
        runner.train()
    assert runner.iter == 0
