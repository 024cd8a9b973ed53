"""tools/analysis_tools/intra_class_study.py as a user runs it: the RKD weight search trained on a
tiny setting (two seeds, one epoch of 64 mosaics, one weight), its outputs, a second call that
reuses every run, and a changed config that is refused, then trained again with --overwrite; the
study's tables from the results a finished call leaves; the refusals. (An existing table refused
without --overwrite: tests/tools/test_output_policy_tools.py.)"""

import csv
import json
import math
import os
import os.path as osp
import re

import pytest
from conftest import TINY_TOOL_DATA, assert_png, parsed_cfg_options, run_tool

from mlkd.apis.intra_class import INTRA_CLASS, TERM_KEYS
from mlkd.apis.runs import save_finished_run
from mlkd.apis.study import result_path, run_identities
from mlkd.utils.run_logs import dumped_config_path

TOOL = 'tools/analysis_tools/intra_class_study.py'
CONFIGS = 'configs/intra_class/multidigits'
#: One epoch of 64 training mosaics (two iterations), 32 val and 32 test mosaics; the datasets
#: skip mmengine's serialisation (its gc.collect is a third of such a run's time).
TINY_DATA = [
    *TINY_TOOL_DATA,
    *(f'{split}_dataloader.dataset.serialize_data=False' for split in ('train', 'val', 'test')),
]
TINY = ['--epochs', '1', '--cfg-options', *TINY_DATA]
#: t quantile 0.975 with 2 degrees of freedom (tables: 4.303)
T_975_DF2 = 4.302652729916


def intra_class_study(*args: str, expect: int = 0):
    proc = run_tool(TOOL, *args)
    assert proc.returncode == expect, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.fixture(scope='module')
def search(tmp_path_factory) -> dict:
    """One call of the search: seeds 0 and 1, RKD weight 0.1, diagnostics every iteration."""
    root = tmp_path_factory.mktemp('intra_class_search')
    work, out = str(root / 'work'), str(root / 'out')
    argv = ['--seeds', '0', '1', '--work-dir', work, '--out-dir', out, *TINY]
    argv += ['--search-rkd-weights', '0.1', '--diagnostics-interval', '1']
    proc = intra_class_study(*argv)
    return dict(work=work, out=out, argv=argv, stdout=proc.stdout)


def _load(path: str) -> dict:
    with open(path, encoding='utf-8') as file:
        return json.load(file)


def test_search_trains_its_runs_and_writes_its_outputs(search):
    work, out = search['work'], search['out']
    saved = _load(osp.join(out, 'intra_class_rkd_search.json'))
    assert set(saved['runs']) == {'0', '1'} and set(saved['student_val']) == {'0', '1'}
    for seed in ('0', '1'):
        cell = saved['runs'][seed]['0.1']
        assert 0.0 <= cell['val'] <= 100.0 and 0.0 <= cell['agreement'] <= 100.0
        assert cell['steps'] == [1, 2]  # both iterations diagnosed
        assert set(cell['terms']) == set(TERM_KEYS)
        assert all(len(v) == 2 for term in cell['terms'].values() for v in term.values())
        # Each seed's KD+RKD distilled its own seed's plain teacher (its last checkpoint), and its
        # stored result names that teacher by the teacher run's fingerprint.
        run_dir = osp.join(work, f'seed{seed}', 'rkd_w0.1')
        teacher = _load(osp.join(work, f'seed{seed}', 'teacher', 'result.json'))
        with open(dumped_config_path(run_dir), encoding='utf-8') as file:
            assert repr(teacher['checkpoint']) in file.read()
        stored = _load(osp.join(run_dir, 'result.json'))
        assert teacher['config_sha256'] in stored['config_values']['model.teacher_ckpt']
        assert 'test' not in stored  # the search reads val only
    table = open(osp.join(out, 'intra_class_rkd_search.md'), encoding='utf-8').read()
    assert '| 0.1 | (2.5, 5) |' in table
    assert 'Chosen (highest mean val top-1): RKD loss weight 0.1.' in table
    with open(osp.join(out, 'intra_class_rkd_search.csv'), encoding='utf-8') as file:
        rows = list(csv.DictReader(file))
    assert [(r['weight'], r['seed']) for r in rows] == [('0.1', '0'), ('0.1', '1')]
    assert float(rows[1]['val']) == saved['runs']['1']['0.1']['val']
    assert_png(osp.join(out, 'intra_class_rkd_search.png'))


def test_a_second_call_reuses_every_run(search):
    before = _load(osp.join(search['out'], 'intra_class_rkd_search.json'))
    proc = intra_class_study(*search['argv'], '--overwrite')  # --overwrite: the tables only
    reused = [line for line in proc.stdout.splitlines() if ': reused ' in line]
    assert len(reused) == 6 and 'epoch 1/1' not in proc.stdout  # nothing trained
    assert _load(osp.join(search['out'], 'intra_class_rkd_search.json')) == before


def test_a_changed_config_is_refused_then_trained_again_with_overwrite(search):
    """The searched runs' config changes (their diagnostics interval); the teacher's and the
    student's does not: only the searched runs are stale. (Runs last: it changes the work dir.)"""
    out = search['out']
    argv = [*search['argv'][:-1], '2']  # --diagnostics-interval 2
    table = osp.join(out, 'intra_class_rkd_search.md')
    mtime = os.stat(table).st_mtime_ns
    proc = intra_class_study(*argv, expect=1)
    assert 'rkd_w0.1/result.json' in proc.stderr and 'interval: 1 -> 2' in proc.stderr
    assert '--overwrite' in proc.stderr and 'epoch 1/1' not in proc.stdout
    assert os.stat(table).st_mtime_ns == mtime  # nothing written
    proc = intra_class_study(*argv, '--overwrite')
    reused = [line for line in proc.stdout.splitlines() if ': reused ' in line]
    assert sorted(line.split(':')[0] for line in reused) == [
        f'[seed {s}] {name}' for s in (0, 1) for name in ('student', 'teacher')
    ]
    saved = _load(osp.join(out, 'intra_class_rkd_search.json'))
    assert [saved['runs'][s]['0.1']['steps'] for s in ('0', '1')] == [[1], [1]]


def _finished_study(work: str, seeds: list[int], *, val_only: bool = False) -> dict:
    """What a finished call of the study with ``TINY`` leaves: every run's result, stored with
    its identity (val = test - 1, test = 90 + seed + an offset per run; no test when
    ``val_only``)."""
    options = parsed_cfg_options(*TINY_DATA)
    offsets = dict(zip(INTRA_CLASS.runs, (5.0, 5.5, 0.0, 1.0, 1.6, 1.2, 0.9)))
    identities = run_identities(
        INTRA_CLASS, list(INTRA_CLASS.runs), seeds, work, epochs=1, options=options
    )
    for (name, seed), identity in identities.items():
        test = 90 + seed + offsets[name] + (0.3 * seed if name == 'ours' else 0.0)
        result = dict(
            val={'accuracy/top1': test - 1},
            cpu_seconds=1.0,
            checkpoint=osp.join(work, f'seed{seed}', name, 'epoch_1.pth'),
        )
        if not val_only:
            result['test'] = {'accuracy/top1': test}
        save_finished_run(result_path(work, seed, name), result, identity)
    return offsets


def test_study_tables_from_the_results_of_a_finished_call(tmp_path):
    work, out = str(tmp_path / 'work'), str(tmp_path / 'out')
    offsets = _finished_study(work, [0, 1, 2])
    argv = ['--seeds', '0', '1', '2', '--work-dir', work, '--out-dir', out, *TINY]
    proc = intra_class_study(*argv)
    assert proc.stdout.count(': reused ') == 21 and 'epoch 1/1' not in proc.stdout
    table = (tmp_path / 'out' / 'intra_class_study.md').read_text(encoding='utf-8')
    # teacher: 95, 96, 97 -> 96.00 ± 1.00; the KD difference 0.9 [0.9 ∓ half] (sd 0.3).
    assert '| plain teacher | 95.00 ± 1.00 | 96.00 ± 1.00 | 95.0, 96.0, 97.0 |' in table
    half = T_975_DF2 * 0.3 / math.sqrt(3)
    assert f'+0.90 [{0.9 - half:+.2f}, {0.9 + half:+.2f}]' in table
    with open(tmp_path / 'out' / 'intra_class_study.csv', encoding='utf-8') as file:
        rows = list(csv.DictReader(file))
    assert [(r['run'], r['seed']) for r in rows] == [(n, str(s)) for s in range(3) for n in offsets]
    saved = _load(str(tmp_path / 'out' / 'intra_class_study.json'))
    assert saved['2']['ours']['test'] == pytest.approx(90 + 2 + 1.6 + 0.6)
    assert saved['0']['kd'] == {
        'val': 90.0,
        'test': 91.0,
        'cpu_seconds': 1.0,
        'config_sha256': _load(result_path(work, 0, 'kd'))['config_sha256'],
    }
    assert_png(str(tmp_path / 'out' / 'intra_class_study.png'))


def test_val_only_writes_val_alone_and_runs_without_checkpoints_cannot_serve_test(tmp_path):
    """--val-only (choosing a regime): tables of val alone, in files of their own; a read of test
    in the same work dir is refused before anything trains where the runs' checkpoints are gone
    (here: results written by the test; with checkpoints, test is read on them, below)."""
    work, out = str(tmp_path / 'work'), str(tmp_path / 'out')
    _finished_study(work, [0, 1, 2], val_only=True)
    argv = ['--seeds', '0', '1', '2', '--work-dir', work, '--out-dir', out, *TINY]
    proc = intra_class_study(*argv, '--val-only')
    assert proc.stdout.count(': reused ') == 21 and 'epoch 1/1' not in proc.stdout
    table = (tmp_path / 'out' / 'intra_class_study_val.md').read_text(encoding='utf-8')
    assert '| plain teacher | 95.00 ± 1.00 | 94.0, 95.0, 96.0 |' in table
    assert 'test' not in table
    with open(tmp_path / 'out' / 'intra_class_study_val.csv', encoding='utf-8') as file:
        assert next(csv.reader(file)) == ['run', 'seed', 'val', 'cpu_seconds']
    assert_png(str(tmp_path / 'out' / 'intra_class_study_val.png'))
    proc = intra_class_study(*argv, expect=1)
    assert 'has no test score' in proc.stderr and 'epoch 1/1' not in proc.stdout
    assert not osp.exists(tmp_path / 'out' / 'intra_class_study.md')


def test_test_is_read_on_the_val_only_runs_and_every_student_scored_against_both_teachers(
    tmp_path,
):
    """Choose on val (--val-only), then read test in the same work dir: nothing trains, every
    run's test comes from its checkpoint; --fidelity scores each student against both teachers,
    equal to tools/test.py --teacher for the student alone (another code path)."""
    work, out = str(tmp_path / 'work'), str(tmp_path / 'out')
    argv = ['--seeds', '0', '1', '--work-dir', work, '--out-dir', out, *TINY]
    intra_class_study(*argv, '--val-only')
    proc = intra_class_study(*argv, '--fidelity')
    assert 'epoch 1/1' not in proc.stdout
    assert proc.stdout.count('reads test on the checkpoint of') == 14
    table = (tmp_path / 'out' / 'intra_class_study.md').read_text(encoding='utf-8')
    assert 'test top-1 (%)' in table
    scores = _load(osp.join(out, 'intra_class_fidelity.json'))
    assert set(scores) == {'0', '1'}
    assert set(scores['0']) == {'student', 'kd', 'ours', 'kd_rkd', 'ours_rkd'}
    fidelity = (tmp_path / 'out' / 'intra_class_fidelity.md').read_text(encoding='utf-8')
    assert '| KD ← plain teacher | plain teacher |' in fidelity
    for seed in (0,):  # one seed: each tools/test.py call is a few seconds
        for teacher in ('teacher', 'teacher_intra_class'):
            values = scores[str(seed)]['student'][teacher]
            assert 0.0 <= values['fidelity/top1_agreement'] <= 100.0
            stored = _load(result_path(work, seed, teacher))
            plain = _load(result_path(work, seed, 'student'))
            proc = run_tool(
                'tools/test.py',
                osp.join(CONFIGS, 'student.py'),
                plain['checkpoint'],
                '--teacher',
                osp.join(CONFIGS, 'teacher.py'),
                stored['checkpoint'],
                '--work-dir',
                str(tmp_path / f'test_{seed}_{teacher}'),
                '--cfg-options',
                *TINY_DATA,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            for key, value in values.items():
                logged = re.search(rf'{key}: ([-\d.]+)', proc.stdout + proc.stderr)
                assert logged and float(logged.group(1)) == pytest.approx(value, abs=1e-3), key
    # --fidelity reads test: not with --val-only.
    proc = intra_class_study(*argv, '--val-only', '--fidelity', expect=2)
    assert '--fidelity reads test' in proc.stderr


def test_some_arms_are_trained_and_tabled_alone(tmp_path):
    """--runs: the positive control's arms (what step 1 of a candidate trains first) — their
    table holds them and the one pair of two of them; an arm without its teacher is refused."""
    work, out = str(tmp_path / 'work'), str(tmp_path / 'out')
    _finished_study(work, [0, 1, 2], val_only=True)
    argv = ['--seeds', '0', '1', '2', '--work-dir', work, '--out-dir', out, *TINY, '--val-only']
    proc = intra_class_study(*argv, '--runs', 'teacher', 'student', 'kd')
    assert proc.stdout.count(': reused ') == 9 and 'epoch 1/1' not in proc.stdout
    table = (tmp_path / 'out' / 'intra_class_study_val.md').read_text(encoding='utf-8')
    arms = [line.split(' | ')[0] for line in table.splitlines() if line.startswith('| ')]
    assert arms[1:4] == ['| plain teacher', '| student alone', '| KD ← plain teacher']
    assert 'intra-class' not in table and '| KD ← plain teacher − student alone |' in table
    proc = intra_class_study(*argv, '--runs', 'kd', '--overwrite', expect=2)
    assert "run 'kd' needs its teacher run 'teacher'" in proc.stderr


def test_requests_that_cannot_run_are_refused(tmp_path):
    out = str(tmp_path / 'out')
    for seeds in (['0'], ['1', '1']):
        proc = intra_class_study('--seeds', *seeds, '--out-dir', out, expect=2)
        assert 'at least two distinct seeds' in proc.stderr
    proc = intra_class_study('--search-rkd-weights', '1', '1', '--out-dir', out, expect=2)
    assert 'distinct positive weights' in proc.stderr
    proc = intra_class_study('--runs', 'teacher', '--fidelity', '--out-dir', out, expect=2)
    assert '--fidelity measures every arm' in proc.stderr
    proc = intra_class_study('--data', 'cifar', '--out-dir', out, expect=2)
    assert "--data: one of ['digit_objects', 'multidigits'], got 'cifar'" in proc.stderr
    assert not osp.exists(out)
