"""mlkd.models.distillers.teacher_settings: one config reading every teacher output of several."""

import pytest

from mlkd.models.distillers.teacher_settings import reading_every_output


def single(losses: dict, taps: dict | None = None, connectors: dict | None = None) -> dict:
    return dict(
        type='SingleTeacherDistiller',
        student='s.py',
        teacher='t.py',
        distill_losses=losses,
        teacher_taps=taps,
        connectors=connectors,
    )


def test_losses_are_renamed_per_config_and_taps_and_connectors_unite():
    a = single({'kd': dict(type='A')}, {'emb': 'head.emb'})
    b = single({'kd': dict(type='B')}, {'feats': 'neck'}, {'proj': dict(type='P')})
    merged = reading_every_output({'L2D': a, 'RKD': b}, 'teacher')
    assert merged['distill_losses'] == {'L2D_kd': dict(type='A'), 'RKD_kd': dict(type='B')}
    assert merged['teacher_taps'] == {'emb': 'head.emb', 'feats': 'neck'}
    assert merged['connectors'] == {'proj': dict(type='P')}
    assert a['distill_losses'] == {'kd': dict(type='A')}  # the inputs are left as they were


def test_one_tap_name_with_two_paths_is_refused_naming_both_configs():
    a = single({}, {'feats': 'neck'})
    b = single({}, {'feats': 'backbone.layer4'})
    with pytest.raises(ValueError, match=r"teacher_taps.feats is 'neck' in A but .* in B"):
        reading_every_output({'A': a, 'B': b}, 'teacher')


def test_a_multi_teacher_config_unites_the_named_teachers_entries_and_shared_student_taps():
    def multi(loss: str, tap: dict, student_tap: dict) -> dict:
        entry = dict(network='t.py', distill_losses={loss: dict(type=loss)}, teacher_taps=tap)
        other = dict(network='u.py', distill_losses={'x': dict(type='X')})
        return dict(
            type='MultiTeacherDistiller',
            student='s.py',
            teachers=dict(low=entry, high=other),
            student_taps=student_tap,
        )

    merged = reading_every_output(
        {'A': multi('a', {'e': 'head'}, {'s1': 'neck'}), 'B': multi('b', {'f': 'x'}, {'s2': 'y'})},
        'low',
    )
    assert merged['teachers']['low']['distill_losses'] == {
        'A_a': dict(type='a'),
        'B_b': dict(type='b'),
    }
    assert merged['teachers']['low']['teacher_taps'] == {'e': 'head', 'f': 'x'}
    assert merged['teachers']['high']['distill_losses'] == {'x': dict(type='X')}  # untouched
    assert merged['student_taps'] == {'s1': 'neck', 's2': 'y'}
    with pytest.raises(KeyError, match="no teacher 'mid'"):
        reading_every_output({'A': multi('a', {}, {})}, 'mid')
