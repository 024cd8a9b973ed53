"""mlkd.apis.config_study: a run per config named by its stem, the results in the benchmark's
results.json form (what demo_paired.py reads) and their table (the tool as a user runs it:
tests/tools/analysis_tools/test_study_tool.py)."""

import pytest

from mlkd.apis.config_study import config_study, render_results, study_results
from mlkd.apis.paired import paired_rows
from mlkd.apis.study import StudyRequestError


def test_runs_are_named_by_their_file_stems_and_read_test_unless_val_only():
    study = config_study(['configs/a/bce.py', 'mlkd::b/asl.py'], test=False, metrics=('mAP',))
    assert list(study.runs) == ['bce', 'asl']
    assert [run.test for run in study.runs.values()] == [False, False]
    assert study.runs['asl'].config == 'mlkd::b/asl.py' and study.metrics == ('mAP',)
    with pytest.raises(StudyRequestError, match=r"same file name \['bce'\]"):
        config_study(['a/bce.py', 'b/bce.py'])
    with pytest.raises(StudyRequestError, match='at least one config'):
        config_study([])


def test_results_take_the_benchmark_form_that_paired_comparisons_read():
    runs = {
        seed: {
            name: dict(val={'mAP': base + seed}, cpu_seconds=10.0, config_sha256=f'{name}{seed}')
            for name, base in (('an', 30.0), ('role', 38.0))
        }
        for seed in (0, 1, 2)
    }
    saved = study_results(runs, [0, 1, 2], 'abc')
    assert saved['stages'] == ['an', 'role'] and saved['seeds'] == [0, 1, 2]
    assert [r['seed'] for r in saved['results']['role']] == [0, 1, 2]
    assert saved['protocol'] == dict(
        commit='abc', configs={'an': ['an0', 'an1', 'an2'], 'role': ['role0', 'role1', 'role2']}
    )
    (row,) = paired_rows(saved['results'], 'val', 'an', ['role'], 'mAP')
    assert row['diff_mean'] == pytest.approx(8.0) and row['diff_low'] == pytest.approx(8.0)
    table = render_results(saved, ('mAP',))
    assert '| role | 39.00 ± 1.00 | 10 ± 0 |' in table and 'test' not in table


def test_a_partial_study_names_the_runs_it_lacks():
    """A stored-only call: seed 0 has both runs, seed 1 only one, seed 2 none; every run of any
    seed is a stage, in the order first met, and the lacking ones are named."""
    result = dict(val={'mAP': 1.0}, cpu_seconds=1.0, config_sha256='x')
    runs = {0: {'an': result, 'role': result}, 1: {'role': result}, 2: {}}
    saved = study_results(runs, [0, 1, 2], 'abc')
    assert saved['stages'] == ['an', 'role']
    assert [r['seed'] for r in saved['results']['role']] == [0, 1]
    missing = ['an of seed 1', 'an of seed 2', 'role of seed 2']
    assert saved['protocol']['missing'] == missing
    assert f'3 runs not stored ({", ".join(missing)})' in render_results(saved, ('mAP',))
    # only the first five are listed
    many = study_results({seed: {} for seed in range(4)}, list(range(4)), 'abc', ['a', 'b'])
    text = render_results(many, ('mAP',))
    listed = 'a of seed 0, b of seed 0, a of seed 1, b of seed 1, a of seed 2, and 3 more'
    assert f'8 runs not stored ({listed})' in text
    assert study_results(runs, [0], 'abc').get('protocol', {}).get('missing') is None
