"""mlkd.apis.benchmark: a call's checks, protocol and task graph, refused before any training.

The runs themselves: tests/tools/test_demo.py (tools/demo.py as a user runs it).
"""

import json
import os
import os.path as osp

import pytest
from conftest import cheap_default_init
from mmengine.registry import DefaultScope

from mlkd.apis import DEMO, MULTI_TEACHER
from mlkd.apis.benchmark import (
    Benchmark,
    BenchmarkRequestError,
    ProtocolError,
    check_request,
    fill_seed_cache,
    git_commit,
    plan_tasks,
    protocol_of,
    repository_root,
    run_benchmark,
)
from mlkd.apis.benchmark_report import metric_label, results_table, validate_results
from mlkd.apis.demo import RANKING
from mlkd.apis.runs import METRICS
from mlkd.registry import MODELS
from mlkd.utils.atomic import write_json_atomic


@pytest.fixture
def no_training(monkeypatch):
    """Nothing may run: any task fails the test."""
    monkeypatch.setattr('mlkd.apis.benchmark.run_tasks', lambda *a, **k: pytest.fail('ran'))


@pytest.mark.parametrize(
    'request_, message',
    [
        (dict(seeds=[0, 1, 0]), 'lists a seed twice'),
        (dict(seeds=[0, -1]), 'must be non-negative'),
        (dict(stages=['teacher', 'teacher']), 'lists a stage twice'),
        (dict(stages=['teacher', 'Distill']), "['Distill'] are not stages of MultiDigits"),
        (dict(resume=True, overwrite=True), 'pick one'),
        (dict(jobs=0), '--jobs must be at least 1'),
        (dict(seeds=[]), '--seeds: name at least one seed'),
        (dict(stages=[]), '--stages: name at least one stage'),
    ],
)
def test_bad_requests_are_refused_naming_the_option(request_, message):
    args = {'seeds': [0], 'stages': ['student'], **request_}
    with pytest.raises(BenchmarkRequestError) as error:
        check_request(DEMO, args.pop('seeds'), args.pop('stages'), **args)
    assert message in str(error.value)


def write_result(work_dir: str, protocol: dict, seed: int = 0, stage: str = 'student') -> str:
    path = osp.join(work_dir, f'seed{seed}', stage, 'result.json')
    write_json_atomic(
        path, dict(val={}, test={}, seed=seed, protocol=protocol, seconds=1.0, checkpoint='x.pth')
    )
    return path


def test_results_of_another_commit_or_config_are_refused_even_with_resume(tmp_path, no_training):
    work = str(tmp_path)
    here = protocol_of(DEMO, ['student'], {}, work)
    write_result(work, dict(here, commit='0' * 40))
    for resume in (False, True):
        with pytest.raises(ProtocolError, match="another protocol: commit '0000000000"):
            run_benchmark(DEMO, work, stages=['student'], resume=resume)
    # Same commit, the student trained with another config (here: another epoch count).
    write_result(work, here)
    with pytest.raises(ProtocolError, match='another protocol: the student config'):
        run_benchmark(
            DEMO, work, stages=['student'], resume=True, options={'train_cfg.max_epochs': 3}
        )
    # Distilled results made with another (given) teacher are another protocol's.
    given = protocol_of(DEMO, ['student', 'KD'], {}, work, 'other_teacher.pth')['configs']
    trained = protocol_of(DEMO, ['student', 'KD'], {}, work)['configs']
    assert given['student'] == trained['student'] and given['KD'] != trained['KD']
    # So are those of a teacher trained with another first seed (a call with --seeds 1 after one
    # with --seeds 0 1 trains another teacher: its seed 1 distilled results are not reusable).
    stages = ['student', 'teacher', 'KD']
    seed1 = protocol_of(DEMO, stages, {}, work, teacher_seed=1)['configs']
    seed0 = protocol_of(DEMO, stages, {}, work)['configs']
    assert seed1['student'] == seed0['student']
    assert seed1['teacher'] != seed0['teacher'] and seed1['KD'] != seed0['KD']
    # A results.json of another protocol is refused as well.
    write_json_atomic(osp.join(work, 'results.json'), dict(protocol=dict(here, commit='f' * 40)))
    with pytest.raises(ProtocolError, match='results.json holds results of another protocol'):
        run_benchmark(DEMO, work, stages=['student'], resume=True)


def test_a_damaged_or_foreign_file_is_refused_before_it_is_read_or_replaced(tmp_path, no_training):
    work = str(tmp_path)
    path = write_result(work, protocol_of(DEMO, ['student'], {}, work))
    with open(path, 'w') as file:
        file.write('{')  # a write cut short
    with pytest.raises(ProtocolError, match=f'{path} is not a result of this tool'):
        run_benchmark(DEMO, work, stages=['student'], resume=True)
    os.remove(path)
    foreign = osp.join(work, 'results.json')
    with open(foreign, 'w') as file:
        file.write('not ours')
    with pytest.raises(ProtocolError, match='results.json is not a result of this tool'):
        run_benchmark(DEMO, work, stages=['student'], resume=True)
    assert open(foreign).read() == 'not ours'


def test_the_commit_of_a_changed_tree_names_its_changes(tmp_path, monkeypatch):
    """Two uncommitted states of one HEAD are two protocols."""
    import subprocess

    def git(*args):
        subprocess.run(['git', *args], cwd=tmp_path, check=True, capture_output=True)

    git('init', '-q')
    (tmp_path / 'a.py').write_text('x = 1\n')
    git('add', 'a.py')
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'c')
    monkeypatch.setattr('mlkd.apis.benchmark.repository_root', lambda: str(tmp_path))
    clean = git_commit()
    (tmp_path / 'a.py').write_text('x = 2\n')
    first = git_commit()
    (tmp_path / 'a.py').write_text('x = 3\n')
    second = git_commit()
    assert len(clean) == 40 and first.startswith(clean + '+dirty.') and first != second


def test_protocol_does_not_depend_on_where_the_work_dir_is(tmp_path, monkeypatch):
    """The distilled stages name their seed's cache inside the work dir; the digests of two work
    dirs (one given relative to the current folder) are the same, those of two configs are not."""
    monkeypatch.chdir(tmp_path)
    one = protocol_of(DEMO, ['student', 'KD'], {}, str(tmp_path / 'a' / 'demo'), 'teacher.pth')
    two = protocol_of(DEMO, ['student', 'KD'], {}, 'b', str(tmp_path / 'teacher.pth'))
    assert one == two
    longer = protocol_of(DEMO, ['student', 'KD'], {'train_cfg.max_epochs': 3}, 'b')
    assert longer['configs']['KD'] != protocol_of(DEMO, ['KD'], {}, 'b')['configs']['KD']


def test_protocol_covers_the_student_file_a_distilled_stage_names(tmp_path):
    """The demo's KD config names its student by path: editing that file (not the KD config)
    must change the KD stage's protocol, or results of the old student would pass the check of a
    dirty tree (whose commit reads the same before and after the edit)."""
    demo = osp.join(repository_root(), 'configs', 'demo')

    def kd_digest(dropout: float) -> str:
        folder = tmp_path / 'configs'
        folder.mkdir(exist_ok=True)
        student = folder / 'student.py'
        student.write_text(
            f'_base_ = [{osp.join(demo, "student.py")!r}]\n'
            f'model = dict(head=dict(dropout={dropout}))\n'
        )
        kd = folder / 'kd.py'
        kd.write_text(
            f'_base_ = [{osp.join(demo, "kd.py")!r}]\nmodel = dict(student={str(student)!r})\n'
        )
        benchmark = Benchmark('test', {'KD': str(kd)}, ('KD',))
        return protocol_of(benchmark, ['KD'], {}, str(tmp_path / 'work'))['configs']['KD']

    assert kd_digest(0.0) != kd_digest(0.5)
    assert kd_digest(0.0) == kd_digest(0.0)


def test_finished_stages_are_neither_retrained_nor_overwritten_silently(tmp_path, no_training):
    work = str(tmp_path)
    path = write_result(work, protocol_of(DEMO, ['student'], {}, work))
    with pytest.raises(BenchmarkRequestError, match='pass --resume to reuse them or --overwrite'):
        run_benchmark(DEMO, work, stages=['student'])
    assert json.load(open(path))['checkpoint'] == 'x.pth'
    with pytest.raises(BenchmarkRequestError, match='distilled stages need a teacher'):
        run_benchmark(DEMO, work, stages=['student', 'KD'])


def test_the_graph_trains_the_teacher_once_and_fills_each_seeds_cache_before_its_readers():
    stages = ['student', 'KD', 'teacher', '3D']
    configs = {name: DEMO.stage_config(name, f'w/seed0/{name}', 0, None) for name in stages}
    epochs = configs['KD'].train_cfg.max_epochs
    common = dict(benchmark=DEMO, root='w', options=None, teachers={}, given_teacher=None)
    teacher_task = ('stage', 'teacher', 3)
    tasks = plan_tasks(
        DEMO, configs, [3, 5], dict(common, teacher_tasks={'teacher': teacher_task}), 2
    )
    shards = [('cache', 'teacher/0', 3), ('cache', 'teacher/1', 3)]
    assert [t.key for t in tasks] == [
        teacher_task,
        ('stage', 'student', 3),
        ('fidelity', 'student', 3),
        *shards,
        ('stage', 'KD', 3),
        ('stage', '3D', 3),
        ('stage', 'student', 5),
        ('fidelity', 'student', 5),
        ('cache', 'teacher/0', 5),
        ('cache', 'teacher/1', 5),
        ('stage', 'KD', 5),
        ('stage', '3D', 5),
    ]
    by_key = {t.key: t for t in tasks}
    assert by_key[('stage', 'student', 3)].after == ()
    # The plain student's fidelity: scored once it and the teacher are trained.
    assert by_key[('fidelity', 'student', 5)].after == (('stage', 'student', 5), teacher_task)
    assert by_key[('stage', 'KD', 3)].after == (teacher_task, *shards)
    assert by_key[shards[0]].after == (teacher_task,) and not by_key[shards[0]].wanted
    assert by_key[shards[0]].job['epochs'] == list(range(0, epochs, 2))
    assert by_key[shards[1]].job['epochs'] == list(range(1, epochs, 2))
    assert by_key[shards[1]].job['stages'] == ['KD', '3D']
    assert by_key[shards[1]].job['teacher'] == 'teacher'
    # With a given teacher nothing waits for a teacher task; one job fills a cache in one task.
    del configs['teacher']
    given = dict(common, teachers={'teacher': 't.pth'}, teacher_tasks={})
    tasks = plan_tasks(DEMO, configs, [3], given, 1)
    cache = ('cache', 'teacher/0', 3)
    fidelity = ('fidelity', 'student', 3)
    assert [t.key for t in tasks][:3] == [('stage', 'student', 3), fidelity, cache]
    assert {t.key: t.after for t in tasks}[('stage', 'KD', 3)] == (cache,)
    assert {t.key: t.after for t in tasks}[fidelity] == (('stage', 'student', 3),)
    # Neither trained nor given (a call of the student alone): no fidelity to score.
    alone = plan_tasks(
        DEMO, {'student': configs['student']}, [3], dict(common, teacher_tasks={}), 1
    )
    assert [t.key for t in alone] == [('stage', 'student', 3)]


def test_a_resumed_call_reuses_a_fidelity_score_only_of_the_same_teacher_checkpoint(tmp_path):
    """A stored score of the plain student against another teacher checkpoint (an earlier call
    given another --teacher-ckpt), or of another checkpoint of the student, is made again, not
    reported."""
    from mlkd.apis.benchmark import _reusable, fidelity_path

    work = str(tmp_path)
    configs = {name: DEMO.stage_config(name, f'w/seed0/{name}', 0, None) for name in ['student']}
    common = dict(benchmark=DEMO, root=work, options=None, given_teacher=None, teacher_tasks={})
    write_result(work, {})  # the student's checkpoint: x.pth
    for student, ckpt, reused in (
        ('x.pth', 'a.pth', True),
        ('x.pth', 'b.pth', False),  # another teacher
        ('y.pth', 'a.pth', False),  # a score of another student checkpoint (retrained since)
    ):
        scored = dict(
            fidelity={'test': {'fidelity/kl': 0.5}}, checkpoint=student, teacher_ckpt='a.pth'
        )
        write_json_atomic(fidelity_path(work, 0, 'student'), scored)
        tasks = plan_tasks(DEMO, configs, [0], dict(common, teachers={'teacher': ckpt}), 1)
        finished = _reusable(tasks, work, DEMO, ckpt, lambda line: None)
        assert (('fidelity', 'student', 0) in finished) is reused
        assert ('stage', 'student', 0) in finished


def test_validate_results_names_the_stage_and_seed_at_fault():
    metrics = {m: 90.0 for m in METRICS}
    good = dict(
        seeds=[3, 4],
        stages=['teacher', 'student'],
        protocol={},
        teacher_ckpt='t.pth',
        results=dict(
            teacher=[dict(seed=3, val=metrics, test=metrics)],
            student=[
                dict(seed=3, val=metrics, test=metrics),
                dict(seed=4, val=metrics, test=metrics),
            ],
        ),
    )
    validate_results(good, METRICS)
    bad = json.loads(json.dumps(good))
    del bad['results']['student'][1]['test']['mAP']
    with pytest.raises(ValueError, match=r"stage 'student' seed 4: test metrics \['mAP'\]"):
        validate_results(bad, METRICS)
    bad = json.loads(json.dumps(good))
    bad['results']['student'].pop()
    with pytest.raises(ValueError, match=r"stage 'student' has seeds \[3\], expected \[3, 4\]"):
        validate_results(bad, METRICS)
    assert [metric_label(m) for m in METRICS] == ['mAP', 'CF1 (thr 0.5)', 'OF1 (thr 0.5)']


def test_a_stage_of_two_teachers_waits_for_both_and_reads_a_cache_of_each():
    stages = list(MULTI_TEACHER.default_stages)
    configs = {
        name: MULTI_TEACHER.stage_config(name, f'w/seed0/{name}', 0, {'low': 'l.pth'})
        for name in stages
    }
    both = configs['L2D-both'].model.teachers
    assert (both.low.ckpt, both.high.ckpt) == ('l.pth', None)
    assert both.low.cache == dict(dir='w/seed0/teacher_cache_low', mode='read', dtype='float32')
    trained = {name: ('stage', stage, 3) for name, stage in MULTI_TEACHER.teachers.items()}
    common = dict(benchmark=MULTI_TEACHER, root='w', options=None, teachers={}, given_teacher=None)
    tasks = plan_tasks(MULTI_TEACHER, configs, [3], dict(common, teacher_tasks=trained), 1)
    by_key = {t.key: t for t in tasks}
    low, high = ('cache', 'low/0', 3), ('cache', 'high/0', 3)
    assert [t.key for t in tasks][:2] == [trained['low'], trained['high']]
    assert by_key[('stage', 'student', 3)].after == ()
    assert ('fidelity', 'student', 3) not in by_key  # no single teacher it stands against
    assert by_key[('stage', 'L2D-0to6', 3)].after == (trained['low'], low)
    assert by_key[('stage', 'L2D-3to9', 3)].after == (trained['high'], high)
    assert by_key[('stage', 'L2D-both', 3)].after == (trained['low'], trained['high'], low, high)
    # A cache is written from the widest of its readers, which need both teachers' weights.
    assert by_key[low].after == (trained['low'], trained['high'])
    assert by_key[low].job['teacher'] == 'low'
    assert by_key[low].job['stages'] == ['L2D-0to6', 'L2D-both', 'L2D-both-bestAP']


def test_a_live_teacher_stage_waits_for_the_teacher_but_not_for_the_cache():
    stages = ['student', 'L2D', 'RKD', 'ReviewKD']
    configs = {
        name: RANKING.stage_config(name, f'w/seed0/{name}', 0, {'teacher': 't.pth'})
        for name in stages
    }
    assert configs['ReviewKD'].model.teacher_cache is None  # live
    assert configs['ReviewKD'].model.teacher_ckpt == 't.pth'
    assert configs['RKD'].model.teacher_cache.mode == 'read'
    teacher_task = ('stage', 'teacher', 3)
    common = dict(benchmark=RANKING, root='w', options=None, teachers={}, given_teacher=None)
    tasks = plan_tasks(
        RANKING, configs, [3], dict(common, teacher_tasks={'teacher': teacher_task}), 1
    )
    by_key = {t.key: t for t in tasks}
    cache = ('cache', 'teacher/0', 3)
    assert by_key[cache].job['stages'] == ['L2D', 'RKD']  # its writer leaves ReviewKD's taps out
    assert by_key[('stage', 'ReviewKD', 3)].after == (teacher_task,)
    assert by_key[('stage', 'RKD', 3)].after == (teacher_task, cache)


def test_a_seeds_cache_holds_every_output_that_one_of_its_readers_reads(tmp_path):
    # L2D reads the teacher's label embeddings, RKD its pooled features: neither reads all.
    options = {
        'model.allow_random_teacher': True,
        'train_dataloader.dataset.num_samples': 4,
        'train_dataloader.num_workers': 0,
        'train_dataloader.persistent_workers': False,
    }
    job = dict(
        benchmark=RANKING,
        seed=0,
        root=str(tmp_path),
        teachers={'teacher': None},
        teacher_tasks={},
        options=options,
        teacher='teacher',
        stages=['L2D', 'RKD'],
        epochs=[0],
    )
    with cheap_default_init():
        folder = fill_seed_cache(job, {}, live_progress=False)
        read = {}
        for name in job['stages']:
            cfg = RANKING.stage_config(name, str(tmp_path / 'seed0' / name), 0, None, options)
            with DefaultScope.overwrite_default_scope('mlkd'):
                read[name] = set(MODELS.build(cfg.model).teacher_outputs)
    assert read['L2D'] - read['RKD'] and read['RKD'] - read['L2D']
    with open(osp.join(folder, 'manifest.json')) as f:
        assert set(json.load(f)['taps']) == read['L2D'] | read['RKD']


def test_a_benchmark_of_students_only_plans_no_teacher_and_reports_every_seed(
    tmp_path, monkeypatch
):
    from mlkd.apis.demo import TASK_LOSSES

    def fake_runs(tasks, jobs, finished, started, log):
        assert [t.key for t in tasks] == [
            ('stage', name, seed) for seed in (0, 1) for name in ('BCE', 'Two-way')
        ]
        assert all(t.after == () for t in tasks)  # nothing to wait for

        def result(seed: int) -> dict:
            scores = {m: 50.0 + seed for m in TASK_LOSSES.metrics}
            return dict(val=scores, test=scores, seed=seed, seconds=1.0, checkpoint='x.pth')

        return {t.key: result(t.key[2]) for t in tasks}

    monkeypatch.setattr('mlkd.apis.benchmark.run_tasks', fake_runs)
    summary = run_benchmark(
        TASK_LOSSES, str(tmp_path), seeds=[0, 1], stages=['BCE', 'Two-way'], log=lambda _: None
    )
    assert summary['teacher_ckpt'] == {}
    table = results_table(summary['results'], 'students', TASK_LOSSES.metrics)
    assert 'mAP@sample' in table and 'fidelity' not in table
    assert [r['test']['mAP'] for r in summary['results']['Two-way']] == [50.0, 51.0]
    assert osp.isfile(tmp_path / 'results.json') and osp.isfile(tmp_path / 'task_losses.png')


def test_a_misspelt_live_teacher_stage_is_refused():
    with pytest.raises(ValueError, match=r"live_teacher_stages \['ReviewKd'\] are not stages"):
        Benchmark(
            name='b',
            stages={'ReviewKD': 'x.py'},
            default_stages=(),
            live_teacher_stages=('ReviewKd',),
        )


def test_a_teacher_cache_left_by_an_earlier_call_is_reused_or_rebuilt_only_when_asked(
    tmp_path, monkeypatch
):
    """An earlier (perhaps stopped) call's seed cache, made for its teacher and stages: refused
    before anything without flags; with --overwrite moved aside (nothing deleted) before the
    tasks run."""

    class Ran(Exception):
        pass

    def run_tasks(*args, **kwargs):
        raise Ran

    monkeypatch.setattr('mlkd.apis.benchmark.run_tasks', run_tasks)
    work = str(tmp_path)
    cache = tmp_path / 'seed0' / 'teacher_cache'
    cache.mkdir(parents=True)
    (cache / 'manifest.json').write_text('{}')
    with pytest.raises(BenchmarkRequestError, match='teacher_cache holds the teacher cache of an'):
        run_benchmark(DEMO, work, stages=['teacher', 'KD'])
    with pytest.raises(Ran):
        run_benchmark(DEMO, work, stages=['teacher', 'KD'], overwrite=True)
    assert not cache.exists()
    (aside,) = (tmp_path / 'seed0').glob('teacher_cache.replaced_*')
    assert (aside / 'manifest.json').read_text() == '{}'
