"""NumClassesCheckHook: heads against the dataset's classes, and a model's class names."""

from types import SimpleNamespace

import pytest
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
