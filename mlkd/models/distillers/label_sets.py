"""Teachers' label sets mapped onto the student's by class name, and label-wise teacher choice.

A teacher predicts its own classes, in its own order; the student predicts ``classes``. A teacher
distils exactly the classes it shares with the student (matched by name): its tensors are
restricted to those columns and the student's to the same classes in the same order, so a class
the teacher lacks gives it **no target** (it is absent from every loss of that teacher: no term,
no gradient), never a target of zero. Teacher classes the student lacks are dropped.

:func:`map_label_sets` checks the sets before anything is trained; :func:`best_teacher_per_label`
picks, for each student class, the teacher with the best validation AP on it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ['TeacherLabels', 'best_teacher_per_label', 'map_label_sets']


@dataclass(frozen=True)
class TeacherLabels:
    """Which columns of one teacher feed which columns of the student.

    Attributes:
        name: the teacher's name.
        classes: the teacher's classes, in its output order.
        student_index: the student column of each shared class (in the student's order).
        teacher_index: the teacher column of the same classes (aligned with ``student_index``).
        dropped: teacher classes the student does not predict.
    """

    name: str
    classes: tuple[str, ...]
    student_index: tuple[int, ...]
    teacher_index: tuple[int, ...]
    dropped: tuple[str, ...]


def _checked_names(classes: Sequence[str], key: str) -> tuple[str, ...]:
    if isinstance(classes, str) or not isinstance(classes, Sequence) or not classes:
        raise ValueError(f'{key} must be a non-empty list of class names, got {classes!r}')
    names = tuple(str(c) for c in classes)
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise ValueError(f'{key} names {twice} more than once')
    return names


def map_label_sets(
    student: Sequence[str],
    teachers: Mapping[str, Sequence[str]],
    allow_disjoint_teachers: bool = False,
    allow_uncovered_classes: bool = False,
) -> dict[str, TeacherLabels]:
    """Map each teacher's classes onto the student's by name, refusing sets that cannot be meant.

    Args:
        student: the student's classes (``model.classes``), in its output order.
        teachers: teacher name -> its classes in output order (``model.teachers.<name>.classes``).
        allow_disjoint_teachers: accept teachers that share no class with any other teacher
            (specialists of disjoint label sets); refused by default because class names that
            were meant to match but differ in spelling look exactly like that.
        allow_uncovered_classes: accept student classes that no teacher predicts (they learn
            from the labels alone); refused by default.

    Raises:
        ValueError: naming the config key at fault: an empty or repeated class list, a teacher
            that shares no class with the student, a teacher that shares no class with the other
            teachers, or a student class in no teacher.
    """
    student = _checked_names(student, 'model.classes')
    position = {name: i for i, name in enumerate(student)}
    mapped = {}
    for name, classes in teachers.items():
        key = f'model.teachers.{name}.classes'
        classes = _checked_names(classes, key)
        shared = sorted((position[c], i) for i, c in enumerate(classes) if c in position)
        if not shared:
            close = {
                c: difflib.get_close_matches(c, student, n=1)[0]
                for c in classes
                if difflib.get_close_matches(c, student, n=1)
            }
            raise ValueError(
                f'{key} shares no class with model.classes (classes are matched by name, '
                f'exactly): teacher {name!r} has {list(classes)}, the student {list(student)}'
                + (f'; close names: {close}' if close else '')
            )
        mapped[name] = TeacherLabels(
            name=name,
            classes=classes,
            student_index=tuple(s for s, _ in shared),
            teacher_index=tuple(t for _, t in shared),
            dropped=tuple(c for c in classes if c not in position),
        )
    if len(mapped) > 1 and not allow_disjoint_teachers:
        for name, labels in mapped.items():
            others = {i for other, o in mapped.items() if other != name for i in o.student_index}
            if not others & set(labels.student_index):
                raise ValueError(
                    f'model.teachers.{name}: its classes {[student[i] for i in labels.student_index]}'
                    f" share nothing with the other teachers' "
                    f'{[student[i] for i in sorted(others)]}. If the teachers are specialists of '
                    'disjoint label sets, set model.allow_disjoint_teachers=True; otherwise check '
                    'the class names (they are matched by name, exactly)'
                )
    covered = {i for labels in mapped.values() for i in labels.student_index}
    uncovered = [c for i, c in enumerate(student) if i not in covered]
    if uncovered and not allow_uncovered_classes:
        raise ValueError(
            f'model.classes {uncovered} are in no teacher (model.teachers.*.classes), so no '
            'teacher gives them a target. Add a teacher that predicts them, or set '
            'model.allow_uncovered_classes=True to let them learn from the labels alone'
        )
    return mapped


def best_teacher_per_label(
    ap: Mapping[str, Sequence[float]], labels: Mapping[str, TeacherLabels], num_classes: int
) -> list[str | None]:
    """The teacher each student class takes its target from: the one with the best AP on it.

    Args:
        ap: teacher name -> AP per student class (``[num_classes]``; NaN where the teacher lacks
            the class or the class has no positive in the evaluation set).
        labels: the teachers' label maps (:func:`map_label_sets`), in config order.
        num_classes: the student's class count.

    Returns:
        per student class, the name of the teacher with the highest AP among those that predict
        it; ties, and classes without any valid AP, go to the first such teacher in config
        order; ``None`` for a class no teacher predicts.
    """
    chosen: list[str | None] = [None] * num_classes
    best = [-math.inf] * num_classes
    for name, teacher in labels.items():
        for column in teacher.student_index:
            value = float(ap[name][column])
            value = -math.inf if math.isnan(value) else value
            if chosen[column] is None or value > best[column]:
                chosen[column], best[column] = name, value
    return chosen
