"""mlkd.apis.paired: paired differences with a baseline of the same seed, their t-intervals, and
claims read off them."""

import math

import pytest

from mlkd.apis.paired import claim_rows, paired_rows, paired_table, verdict

#: t_{0.975, 4}, from a printed table of Student's t distribution.
T_975_4 = 2.7764451051977987


def runs(scores: dict[int, float], fidelity: dict[int, float] | None = None) -> list[dict]:
    return [
        dict(
            seed=s,
            test={'mAP': v, 'CF1_thr0.5': v / 2},
            fidelity={'test': {'fidelity/mAP_vs_teacher': (fidelity or {}).get(s, 0.0)}},
        )
        for s, v in scores.items()
    ]


def test_paired_difference_and_its_t_interval_match_a_hand_computation():
    student = {0: 80.0, 1: 70.0, 2: 75.0, 3: 90.0, 4: 60.0}
    # Differences 1..5 (seed order scrambled in the file): mean 3, sample std sqrt(2.5).
    kd = {4: 65.0, 0: 81.0, 2: 78.0, 1: 72.0, 3: 94.0}
    rows = paired_rows(dict(teacher=runs({0: 99.0}), student=runs(student), KD=runs(kd)))
    assert [row['stage'] for row in rows] == ['KD']
    row = rows[0]
    assert row['seeds'] == [0, 1, 2, 3, 4] and row['diff_mean'] == pytest.approx(3.0)
    half = T_975_4 * 2.5**0.5 / 5**0.5
    assert (row['diff_low'], row['diff_high']) == pytest.approx((3.0 - half, 3.0 + half))
    assert row['mean'] == pytest.approx(78.0)
    # Another metric of the split: the differences halve.
    cf1 = paired_rows(dict(student=runs(student), KD=runs(kd)), metric='CF1_thr0.5')[0]
    assert cf1['diff_mean'] == pytest.approx(1.5) and cf1['metric'] == 'CF1_thr0.5'


def test_only_shared_seeds_are_paired_and_a_missing_student_is_refused():
    rows = paired_rows(dict(student=runs({0: 80.0, 1: 70.0}), MLD=runs({1: 71.0, 7: 99.0})))
    assert rows[0]['seeds'] == [1] and rows[0]['diff_mean'] == pytest.approx(1.0)
    assert math.isnan(rows[0]['diff_low'])  # one pair: no interval
    with pytest.raises(ValueError, match='no plain student'):
        paired_rows(dict(MLD=runs({0: 1.0})))
    with pytest.raises(KeyError, match="seed 0: no 'OF1_thr0.5' on test"):
        paired_rows(dict(student=runs({0: 1.0}), KD=runs({0: 2.0})), metric='OF1_thr0.5')


def test_fidelity_keys_are_read_from_the_runs_fidelity():
    results = dict(
        student=runs({0: 80.0, 1: 70.0}, {0: 90.0, 1: 91.0}),
        KD=runs({0: 81.0, 1: 72.0}, {0: 95.0, 1: 94.0}),
    )
    row = paired_rows(results, metric='fidelity/mAP_vs_teacher')[0]
    assert row['scores'] == [95.0, 94.0] and row['diff_mean'] == pytest.approx(4.0)


def test_a_teacher_trained_once_is_every_seeds_baseline():
    results = dict(teacher=runs({0: 90.0}), KD=runs({0: 91.0, 1: 93.0, 2: 92.0}))
    (row,) = claim_rows(results, [('KD', 'teacher')])
    # Differences 1, 3, 2 against the one teacher: mean 2, sample std 1.
    half = 4.302652729911275 / 3**0.5  # t_{0.975, 2}
    assert row['seeds'] == [0, 1, 2] and row['diff_mean'] == pytest.approx(2.0)
    assert (row['diff_low'], row['diff_high']) == pytest.approx((2.0 - half, 2.0 + half))
    assert row['verdict'] == 'not held'  # the interval holds 0


@pytest.mark.parametrize(
    'low, high, expected',
    [
        (0.1, 2.0, 'held'),
        (-0.1, 2.0, 'not held'),
        (-2.0, -0.1, 'inverted'),
        (math.nan, math.nan, 'not held'),
    ],
)
def test_verdict_reads_the_interval(low, high, expected):
    assert verdict(low, high) == expected


def test_claims_table_names_each_pair_and_its_verdict():
    results = dict(
        student=runs({0: 80.0, 1: 70.0, 2: 75.0}),
        L2D=runs({0: 81.0, 1: 71.0, 2: 76.0}),
        ThreeD=runs({0: 85.0, 1: 76.0, 2: 80.0}),
    )
    rows = claim_rows(results, [('ThreeD', 'L2D'), ('L2D', 'ThreeD')])
    assert [row['verdict'] for row in rows] == ['held', 'inverted']
    text = paired_table(results, rows)
    assert '| paired with |' in text and '| claim |' in text
    assert '| ThreeD | 0,1,2 | 80.33 ± 4.51 | L2D | +4.33 |' in text


def test_a_fidelity_comparison_names_a_baseline_without_fidelity_and_shows_teachers_without_it():
    students = dict(
        teacher=[dict(seed=0, test={'mAP': 99.0})],  # scored as a teacher: no fidelity
        student=[dict(seed=s, test={'mAP': 80.0}) for s in (0, 1)],
        KD=runs({0: 81.0, 1: 72.0}, {0: 95.0, 1: 94.0}),
        MLD=runs({0: 81.0, 1: 72.0}, {0: 93.0, 1: 93.0}),
    )
    with pytest.raises(KeyError, match="seed 0: no 'fidelity/mAP_vs_teacher' on test"):
        paired_rows(students, metric='fidelity/mAP_vs_teacher')
    rows = paired_rows(students, 'test', 'MLD', ['KD'], 'fidelity/mAP_vs_teacher')
    assert rows[0]['diff_mean'] == pytest.approx(1.5)
    assert '| teacher | 0 | - |' in paired_table(students, rows)


def test_a_baseline_row_shows_the_seeds_its_pairs_use_and_bad_results_are_named():
    student = runs({0: 50.0, 1: 60.0, 2: 50.0})
    rows = paired_rows(dict(student=student, KD=runs({0: 52.0, 1: 62.0})))
    table = paired_table(dict(student=student), rows)
    assert '| student | 0,1 | 55.00 ± 7.07 |' in table  # not its mean over seeds 0, 1, 2
    # A teacher trained once whose score is an integer in the file is every seed's baseline.
    once = [dict(seed=0, test={'mAP': 90})]
    row = paired_rows(dict(teacher=once, KD=runs({3: 91.0})), baseline='teacher')[0]
    assert row['seeds'] == [3] and row['diff_mean'] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="stage 'KD' lists seed 0 twice"):
        paired_rows(dict(student=student, KD=runs({0: 1.0}) + runs({0: 2.0})))
    with pytest.raises(ValueError, match="stage 'KD' has no runs"):
        claim_rows(dict(student=student, KD=[]), [('KD', 'student')])
    with pytest.raises(KeyError, match="stage 'student', seed 0: no 'mAP' on val"):
        paired_rows(dict(student=runs({0: 1.0}), KD=runs({0: 2.0})), split='val')
