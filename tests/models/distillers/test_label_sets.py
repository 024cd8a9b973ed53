"""Teachers' label sets mapped onto the student's by name, and the best-AP choice per label."""

import math

import pytest

from mlkd.models.distillers.label_sets import best_teacher_per_label, map_label_sets

STUDENT = ['cat', 'dog', 'car', 'bus']


def test_each_teacher_keeps_the_shared_classes_in_the_students_order():
    labels = map_label_sets(
        STUDENT, {'a': ['bus', 'cat', 'tree', 'car'], 'b': ['dog', 'car', 'cat', 'bus']}
    )
    a = labels['a']
    # Shared: cat (student 0, teacher 1), car (2, 3), bus (3, 0); 'tree' is dropped, 'dog' absent.
    assert a.student_index == (0, 2, 3) and a.teacher_index == (1, 3, 0)
    assert a.dropped == ('tree',)
    assert labels['b'].student_index == (0, 1, 2, 3)
    assert labels['b'].teacher_index == (2, 0, 1, 3)


@pytest.mark.parametrize(
    'teachers, message',
    [
        (
            {'a': ['Cat', 'dogs'], 'b': STUDENT},
            r'model.teachers.a.classes shares no class with model.classes.*close names: '
            r"\{'Cat': 'cat', 'dogs': 'dog'\}",
        ),
        (
            {'a': ['cat', 'dog'], 'b': ['car', 'bus']},
            r"model.teachers.a: its classes \['cat', 'dog'\] share nothing with the other "
            r"teachers' \['car', 'bus'\].*allow_disjoint_teachers=True",
        ),
        (
            {'a': ['cat', 'dog', 'car'], 'b': ['dog', 'car']},
            r"model.classes \['bus'\] are in no teacher.*allow_uncovered_classes=True",
        ),
        ({'a': ['cat', 'cat', 'dog']}, r"model.teachers.a.classes names \['cat'\] more than once"),
        ({'a': []}, 'model.teachers.a.classes must be a non-empty list'),
    ],
)
def test_label_sets_that_cannot_be_meant_are_refused_naming_the_key(teachers, message):
    with pytest.raises(ValueError, match=message):
        map_label_sets(STUDENT, teachers)


def test_the_refusals_of_partial_sets_can_be_lifted():
    labels = map_label_sets(
        STUDENT,
        {'a': ['cat', 'dog'], 'b': ['car']},
        allow_disjoint_teachers=True,
        allow_uncovered_classes=True,
    )
    assert labels['a'].student_index == (0, 1) and labels['b'].student_index == (2,)
    with pytest.raises(ValueError, match=r"model.classes names \['dog'\] more than once"):
        map_label_sets(['cat', 'dog', 'dog'], {'a': ['cat']})


def test_each_class_goes_to_the_teacher_with_the_best_ap_ties_and_gaps_to_the_first():
    labels = map_label_sets(STUDENT, {'a': ['cat', 'dog', 'car'], 'b': ['dog', 'car', 'bus']})
    nan = math.nan
    ap = {
        'a': [0.9, 0.5, 0.7, nan],  # no AP where it lacks the class
        'b': [nan, 0.6, 0.7, nan],  # car: a tie; bus: no positive on val
    }
    assert best_teacher_per_label(ap, labels, 4) == ['a', 'b', 'a', 'b']
    # A class without any AP among two teachers that have it goes to the first (config order).
    ap['a'][2] = ap['b'][2] = nan
    assert best_teacher_per_label(ap, labels, 4)[2] == 'a'
    uncovered = map_label_sets(STUDENT, {'a': ['cat', 'dog']}, allow_uncovered_classes=True)
    assert best_teacher_per_label({'a': [0.1, 0.2, nan, nan]}, uncovered, 4) == [
        'a',
        'a',
        None,
        None,
    ]
