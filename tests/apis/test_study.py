"""mlkd.apis.study: which stored results a study reuses (the identity of a run, its teacher's
included) and what it refuses before training (the runs themselves:
tests/tools/analysis_tools/test_intra_class_study.py, the intra-class study as a user runs it)."""

import dataclasses
import json
import os
import os.path as osp

import pytest
from conftest import TINY_TOOL_DATA, config_path, parsed_cfg_options

from mlkd.apis.intra_class import IN_PROCESS_LOADERS
from mlkd.apis.runs import StaleResultError, save_finished_run
from mlkd.apis.study import (
    ResultsFileError,
    Study,
    StudyRequestError,
    StudyRun,
    result_path,
    run_identities,
    run_study,
    shorten_schedule,
    take_results,
)
from mlkd.utils.cli import load_config
from mlkd.utils.fingerprint import fingerprint
from mlkd.utils.work_dir import WorkDirConflictError

MULTIDIGITS = config_path('intra_class', 'multidigits')
#: One epoch of 64 training mosaics, 32 val and 32 test mosaics (seconds per run).
TINY_DATA = [
    *TINY_TOOL_DATA,
    *(f'{split}_dataloader.dataset.serialize_data=False' for split in ('train', 'val', 'test')),
]


def _study(tmp_path, teacher_lr: float = 2e-3) -> Study:
    """Teacher (a config file of the test, its peak lr given), KD from it, the student alone."""
    teacher = tmp_path / 'teacher.py'
    teacher.write_text(
        f'_base_ = [{osp.join(MULTIDIGITS, "teacher.py")!r}]\n'
        f'param_scheduler = [dict(eta_max={teacher_lr}), dict()]\n'
    )
    return Study(
        'a test study',
        {
            'teacher': StudyRun(str(teacher)),
            'kd': StudyRun(osp.join(MULTIDIGITS, 'kd.py'), teacher='teacher'),
            'student': StudyRun(osp.join(MULTIDIGITS, 'student.py')),
        },
        metrics=('accuracy/top1',),
    )


def _digests(study: Study, work_dir: str, seeds=(0,)) -> dict:
    names = list(study.runs)
    return {
        key: fingerprint(identity)
        for key, identity in run_identities(study, names, seeds, work_dir).items()
    }


def test_a_changed_teacher_makes_its_students_results_stale(tmp_path):
    """The KD config does not change when its teacher's training config does; its identity does."""
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    before = _digests(_study(tmp_path / 'a'), str(tmp_path / 'work'), seeds=(0, 1))
    after = _digests(_study(tmp_path / 'b', teacher_lr=1e-3), str(tmp_path / 'work'))
    assert after[('teacher', 0)] != before[('teacher', 0)]
    assert after[('kd', 0)] != before[('kd', 0)]
    assert after[('student', 0)] == before[('student', 0)]
    assert before[('kd', 0)] != before[('kd', 1)]  # each seed is a run of its own
    # Where the work dir is does not matter (a distilled run names its teacher by identity).
    elsewhere = _digests(_study(tmp_path / 'a'), str(tmp_path / 'elsewhere'))
    assert elsewhere == {key: value for key, value in before.items() if key[1] == 0}


def test_a_changed_student_file_makes_the_distilled_results_stale(tmp_path):
    """A distiller names its student by config path; editing that file (not the KD config) must
    change the KD run's identity, or a stored KD result of the old student would be reused."""

    def kd_digest(folder, width):
        folder.mkdir(parents=True)
        student = folder / 'student.py'
        student.write_text(
            f'_base_ = [{osp.join(MULTIDIGITS, "student.py")!r}]\n'
            f'model = dict(backbone=dict(stem_channels={width}, base_channels={width}), '
            f'head=dict(in_channels={8 * width}))\n'
        )
        kd = folder / 'kd.py'
        kd.write_text(
            f'_base_ = [{osp.join(MULTIDIGITS, "kd.py")!r}]\n'
            f'model = dict(student={str(student)!r})\n'
        )
        study = Study(
            'a test study',
            {
                'teacher': StudyRun(osp.join(MULTIDIGITS, 'teacher.py')),
                'kd': StudyRun(str(kd), teacher='teacher'),
            },
            metrics=('accuracy/top1',),
        )
        return _digests(study, str(tmp_path / 'work'))

    # the same folder name for both, so that only the student file's content differs
    narrow = kd_digest(tmp_path / 'a' / 'run', 4)
    (tmp_path / 'a').rename(tmp_path / 'old')
    wide = kd_digest(tmp_path / 'a' / 'run', 8)
    assert narrow[('teacher', 0)] == wide[('teacher', 0)]
    assert narrow[('kd', 0)] != wide[('kd', 0)]


def test_stored_results_are_reused_for_their_identity_only(tmp_path):
    study, work = _study(tmp_path), str(tmp_path / 'work')
    identities = run_identities(study, list(study.runs), [0], work)
    for (name, seed), identity in identities.items():  # what a finished call leaves
        path = result_path(work, seed, name)
        scores = dict(val={'accuracy/top1': 50.0}, test={'accuracy/top1': 49.0})
        save_finished_run(path, dict(scores, checkpoint='x.pth'), identity)
    lines = []
    results = run_study(study, work, seeds=[0], log=lines.append)  # nothing to train
    assert sorted(lines) == sorted(
        f'[seed 0] {name}: reused {result_path(work, 0, name)}' for name in study.runs
    )
    assert results[0]['kd']['config_sha256'] == fingerprint(identities[('kd', 0)])
    # Runs asked for in any order: a teacher's identity is made before its students'.
    assert run_study(study, work, seeds=[0], runs=['kd', 'teacher'], log=print) == {
        0: {name: results[0][name] for name in ('teacher', 'kd')}
    }
    # Another config (here: another epoch count) is refused before anything trains, naming what
    # differs; the stored result stays.
    before = open(result_path(work, 0, 'teacher')).read()
    with pytest.raises(StaleResultError, match=r'train_cfg.max_epochs: 10 -> 1') as error:
        run_study(study, work, seeds=[0], epochs=1, log=lines.append)
    assert 'run teacher of seed 0' in str(error.value) and '--overwrite' in str(error.value)
    assert open(result_path(work, 0, 'teacher')).read() == before
    assert not osp.exists(osp.join(work, 'seed0', 'teacher', 'mlkd_run_config.json'))
    # The same identity stored without a test score (a val-only call) and without its checkpoint
    # cannot serve a run that reads test: refused before anything trains.
    identity = identities[('student', 0)]
    save_finished_run(result_path(work, 0, 'student'), dict(val={'accuracy/top1': 50.0}), identity)
    with pytest.raises(StaleResultError, match='run student of seed 0: .* has no test score'):
        run_study(study, work, seeds=[0], log=lines.append)


def test_a_val_only_result_reads_test_on_its_checkpoint_as_its_training_would_have(tmp_path):
    """Choose on val, freeze, read test on the same networks: a call that reads test completes
    the val-only results of the same identities from their checkpoints, without training, with
    the test scores (and a distilled run's fidelity to its own teacher) that training with test
    gives; a checkpoint that is not the one that made its result is refused."""
    evaluators = [
        dict(type='Accuracy', topk=(1,)),
        dict(type='DistillFidelity', mode='single_label'),
    ]
    kd = StudyRun(
        osp.join(MULTIDIGITS, 'kd.py'),
        teacher='teacher',
        options=dict(val_evaluator=evaluators, test_evaluator=evaluators),
    )
    study = dataclasses.replace(  # the shipped teacher config (_study's is for identities only)
        _study(tmp_path),
        runs=dict(
            _study(tmp_path).runs, teacher=StudyRun(osp.join(MULTIDIGITS, 'teacher.py')), kd=kd
        ),
        # No loader worker processes: forked from this test process, persistent ones would outlive
        # the test holding its pipes (the tool server's stdin among them).
        options=IN_PROCESS_LOADERS,
    )
    val_only = dataclasses.replace(
        study, runs={n: dataclasses.replace(r, test=False) for n, r in study.runs.items()}
    )
    call = dict(seeds=[0], epochs=1, options=parsed_cfg_options(*TINY_DATA), log=print)
    chosen, work = str(tmp_path / 'chosen'), str(tmp_path / 'fresh')
    run_study(val_only, chosen, **call)
    lines = []
    completed = run_study(study, chosen, **dict(call, log=lines.append))[0]
    trained = run_study(study, work, **call)[0]
    assert not any('epoch 1/1' in line for line in lines)  # nothing trained
    assert sum('reads test on the checkpoint of' in line for line in lines) == 3
    for name in study.runs:
        assert completed[name]['test_from_checkpoint'] is True
        for key in ('val', 'test'):
            assert completed[name][key] == pytest.approx(trained[name][key], abs=1e-6), name
        assert completed[name]['cpu_seconds'] > 0  # the training's, kept
    assert set(completed['kd']['fidelity']) == {'val', 'test'}
    for key, value in trained['kd']['fidelity']['test'].items():
        assert completed['kd']['fidelity']['test'][key] == pytest.approx(value, abs=1e-6), key
    # Stored: a later call reuses it as it is.
    assert json.load(open(result_path(chosen, 0, 'kd')))['test'] == completed['kd']['test']
    # A checkpoint that does not give its result's val score is refused, naming both.
    path = result_path(val_only_dir := str(tmp_path / 'other'), 0, 'student')
    run_study(val_only, val_only_dir, **dict(call, runs=['student']))
    stored = json.load(open(path))
    stored['val']['accuracy/top1'] += 1.0
    with open(path, 'w') as file:
        json.dump(stored, file)
    with pytest.raises(StaleResultError, match='is not the one that made the result'):
        run_study(study, val_only_dir, **dict(call, runs=['student']))


def test_requests_that_cannot_run_are_refused_before_anything(tmp_path):
    study, work = _study(tmp_path), tmp_path / 'work'
    cases = [
        (dict(seeds=[0, 0]), 'distinct and non-negative'),
        (dict(seeds=[-1]), 'distinct and non-negative'),
        (dict(seeds=[0], runs=['kd']), "run 'kd' needs its teacher run 'teacher'"),
        (dict(seeds=[0], runs=['KD']), r"\['KD'\] are not runs of a test study"),
        (dict(seeds=[0], jobs=0), 'jobs must be at least 1'),
        (dict(seeds=[0], runs=[]), 'runs must be distinct and at least one'),
        (dict(seeds=[0], runs=['student', 'student']), 'runs must be distinct'),
        (dict(seeds=[0], epochs=0), 'epochs must be at least 1'),
    ]
    for kwargs, message in cases:
        with pytest.raises(StudyRequestError, match=message):
            run_study(study, str(work), **kwargs)
    assert not work.exists()
    with pytest.raises(ValueError, match="run 'kd' is taught by 'teacher', which is not a run"):
        Study('s', {'kd': StudyRun('kd.py', teacher='teacher'), 'teacher': StudyRun('t.py')}, ())


def test_a_shortened_schedule_is_the_same_recipe_cut():
    cfg = load_config(osp.join(MULTIDIGITS, 'teacher.py'))
    cfg.param_scheduler.append(dict(type='LinearLR', begin=0, end=1, by_epoch=True))  # a warm-up
    shorten_schedule(cfg, 3)
    steps = [(s.get('total_steps'), s['end']) for s in cfg.param_scheduler]
    assert steps == [(3, 3), (3, 3), (None, 1)]
    assert (cfg.train_cfg.max_epochs, cfg.train_cfg.val_interval) == (3, 3)
    cfg.param_scheduler.append(dict(type='LinearLR', end=100, by_epoch=False))  # iterations
    with pytest.raises(StudyRequestError, match=r'param_scheduler\[3\] of .* counts iterations'):
        shorten_schedule(cfg, 2)
    # A run keeps one checkpoint, its last: what is evaluated and what teaches.
    study = Study('s', {'t': StudyRun(osp.join(MULTIDIGITS, 'teacher.py'))}, ())
    hook = study.run_config('t', 0, 'w', epochs=3).default_hooks.checkpoint
    assert (hook.interval, hook.max_keep_ckpts) == (3, 1)


def test_stored_identity_names_the_teacher_by_its_digest(tmp_path):
    """What a distilled run's stored config says about its teacher: the teacher run's identity,
    which the teacher's own result.json carries as ``config_sha256``."""
    study, work = _study(tmp_path), str(tmp_path / 'work')
    identities = run_identities(study, list(study.runs), [0], work)
    save_finished_run(result_path(work, 0, 'kd'), {}, identities[('kd', 0)])
    save_finished_run(result_path(work, 0, 'teacher'), {}, identities[('teacher', 0)])
    kd = json.load(open(result_path(work, 0, 'kd')))
    teacher = json.load(open(result_path(work, 0, 'teacher')))
    assert teacher['config_sha256'] in kd['config_values']['model.teacher_ckpt']


def test_results_made_elsewhere_are_taken_for_their_identity_only(tmp_path):
    """An entry of a results file is taken only for the same run, seed and identity, without its
    checkpoint; one of another config is logged and left; a run stored here already is preferred
    to it; a run or seed the call does not ask for is ignored; nothing is written by a refused
    call."""
    study, work = _study(tmp_path), str(tmp_path / 'work')
    identities = run_identities(study, list(study.runs), [0], work)

    def entry(name, seed=0, **changes):
        scores = dict(val={'accuracy/top1': 50.0}, test={'accuracy/top1': 49.0})
        result = dict(scores, seed=seed, checkpoint='elsewhere.pth', cpu_seconds=1.0)
        return {**result, 'config_sha256': fingerprint(identities[(name, 0)]), **changes}

    here = result_path(work, 0, 'student')
    scores = dict(val={'accuracy/top1': 1.0}, test={'accuracy/top1': 1.0})
    save_finished_run(here, scores, identities[('student', 0)])
    results = dict(
        protocol=dict(commit='c' * 40),
        results=dict(
            teacher=[entry('teacher'), entry('teacher', seed=7)],
            kd=[entry('kd', config_sha256='0' * 64)],
            student=[entry('student')],
            other=[entry('teacher')],
        ),
    )
    lines = []
    taken = take_results('a.json', results, identities, log=lines.append)
    assert list(taken) == [('teacher', 0), ('student', 0)]
    assert taken[('teacher', 0)]['checkpoint'] is None
    assert taken[('teacher', 0)]['taken_from'] == dict(
        file='a.json', commit='c' * 40, checkpoint='elsewhere.pth'
    )
    assert lines[0].startswith('[seed 0] kd: not taken from a.json: made by another config')
    assert lines[1:] == ['a.json: 2 of 5 runs match this call']
    assert not osp.exists(result_path(work, 0, 'teacher'))  # take_results writes nothing

    # KD would train here from a teacher whose checkpoint is elsewhere: refused, nothing stored.
    with pytest.raises(
        StaleResultError,
        match=r'run kd of seed 0: its teacher run teacher is '
        r'finished \(taken from a.json\) but its checkpoint',
    ):
        run_study(study, work, seeds=[0], reuse={'a.json': results}, log=lines.append)
    assert not osp.exists(result_path(work, 0, 'teacher'))
    stored = run_study(
        study, work, seeds=[0], reuse={'a.json': results}, stored_only=True, log=lines.append
    )[0]
    assert set(stored) == {'teacher', 'student'}  # kd neither stored nor taken
    assert stored['student']['val'] == {'accuracy/top1': 1.0}  # the run stored here stays

    # Taken without the test score this call needs: its checkpoint is elsewhere, so refused;
    # left out of a stored-only call.
    without_test = {k: v for k, v in entry('teacher').items() if k != 'test'}
    val_only = dict(results, results=dict(teacher=[without_test]))
    with pytest.raises(StaleResultError, match='its checkpoint is on the machine that made it'):
        run_study(study, work, seeds=[0], reuse={'b.json': val_only}, log=lines.append)
    stored = run_study(
        study, work, seeds=[0], reuse={'b.json': val_only}, stored_only=True, log=lines.append
    )[0]
    assert 'teacher' not in stored and 'b.json has no test score; left out' in lines[-2]

    # A stale result here (made by another identity) is refused without --overwrite and replaced
    # by the taken one with it: taken, not trained again.
    save_finished_run(result_path(work, 0, 'teacher'), scores, identities[('student', 0)])
    with pytest.raises(StaleResultError, match='run teacher of seed 0'):
        run_study(study, work, seeds=[0], runs=['teacher'], reuse={'a.json': results})
    replaced = run_study(
        study,
        work,
        seeds=[0],
        runs=['teacher'],
        reuse={'a.json': results},
        overwrite=True,
        log=lines.append,
    )[0]['teacher']
    assert replaced['val'] == {'accuracy/top1': 50.0} and replaced['taken_from']['file'] == 'a.json'
    with open(result_path(work, 0, 'teacher'), encoding='utf-8') as file:
        assert json.load(file)['taken_from']['file'] == 'a.json'

    for bad, error in (
        ([], 'not a study results file'),
        ({'results': {'kd': 3}}, r'results.kd is not a list'),
        ({'results': {'kd': [{'val': {}}]}}, r"results.kd\[0\] lacks \['seed'"),
        (
            {'results': {'kd': [{**entry('kd'), 'seed': '0'}]}},
            r'results.kd\[0\] lacks an integer seed',
        ),
        (
            {'results': {'kd': [{**entry('kd'), 'config_sha256': None, 'val': 1.0}]}},
            r'results.kd\[0\] lacks a config_sha256 string and val scores \(a mapping\)',
        ),
    ):
        with pytest.raises(ResultsFileError, match=f'c.json: {error}'):
            take_results('c.json', bad, identities, log=lines.append)


def test_a_call_takes_the_result_that_serves_it_and_refuses_before_anything(tmp_path):
    """Between the results stored here and those of results files, a call takes one holding
    every metric of the study and, where the run reads test, a test score (whatever the order of
    the files); an entry taken already keeps where it was trained; a stored result without a
    metric, or a run folder holding another run, is refused before anything is stored."""
    study, work = _study(tmp_path), str(tmp_path / 'work')
    identities = run_identities(study, list(study.runs), [0], work)

    def entry(name, **changes):
        result = dict(val={'accuracy/top1': 50.0}, test={'accuracy/top1': 49.0}, seed=0)
        result.update(cpu_seconds=1.0, checkpoint='/far/ckpt.pth', commit='t' * 40)
        return {**result, 'config_sha256': fingerprint(identities[(name, 0)]), **changes}

    def results_file(**entries):
        return dict(protocol=dict(commit='w' * 40), results={k: [v] for k, v in entries.items()})

    val_only = {k: v for k, v in entry('student').items() if k != 'test'}
    other_metric = entry('teacher', val={'mAP': 1.0}, test={'mAP': 1.0})
    files = {
        'val.json': results_file(student=val_only, teacher=other_metric),
        'full.json': results_file(student=entry('student'), teacher=entry('teacher')),
    }
    stored = run_study(
        study, work, seeds=[0], runs=['teacher', 'student'], reuse=files, stored_only=True
    )[0]
    assert stored['student']['taken_from']['file'] == 'full.json'  # the one with test
    assert stored['teacher']['taken_from'] == dict(
        file='full.json', commit='t' * 40, checkpoint='/far/ckpt.pth'
    )
    # A file written from a call that had taken them: the first origin is kept.
    chained = results_file(teacher=dict(stored['teacher'], commit=None))
    again = run_study(
        study, work, seeds=[0], runs=['teacher'], reuse={'b.json': chained}, stored_only=True
    )[0]['teacher']
    assert again['taken_from'] == dict(file='b.json', commit='t' * 40, checkpoint='/far/ckpt.pth')

    # A stored val-only result whose checkpoint is gone gives way to a complete one taken.
    save_finished_run(result_path(work, 0, 'student'), val_only, identities[('student', 0)])
    served = run_study(study, work, seeds=[0], runs=['student'], reuse=files, stored_only=True)
    assert served[0]['student']['test'] == {'accuracy/top1': 49.0}

    # A stored result without one of the study's metrics: refused, naming it.
    save_finished_run(result_path(work, 0, 'student'), other_metric, identities[('student', 0)])
    with pytest.raises(StaleResultError, match=r"stores no \['val/accuracy/top1', 'test/acc"):
        run_study(study, work, seeds=[0], runs=['student'])

    # The folder of a run to train holds a run of another config: refused before the taken
    # teacher is stored or anything trains.
    os.remove(result_path(work, 0, 'student'))
    open(osp.join(work, 'seed0', 'student', 'epoch_1.pth'), 'w').close()
    teacher_only = {'t.json': results_file(teacher=entry('teacher'))}
    with pytest.raises(WorkDirConflictError, match='seed0/student'):
        run_study(study, work, seeds=[0], runs=['teacher', 'student'], reuse=teacher_only)
    assert not osp.exists(result_path(work, 0, 'teacher'))
