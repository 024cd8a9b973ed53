"""A benchmark: a teacher and students, one config per stage, trained over seeds and compared on
test. A benchmark is declared as data (:class:`Benchmark`: its stages' configs) and run by
:func:`run_benchmark` as a task graph (:mod:`mlkd.apis.tasks`); the demo
(:data:`mlkd.apis.demo.DEMO`, ``tools/demo.py``) is one.

The protocol of a call:

* Each teacher stage trains once, with the first seed, and serves every seed (or, for a
  benchmark of one teacher, a checkpoint given instead is evaluated). A seed sets what the
  configs' ``seed_key`` names (:func:`~mlkd.apis.runs.set_run_seed`).
* Each seed trains every other stage. A stage whose config is a distiller reads each of its
  teachers' outputs from the seed's cache of that teacher, ``<work dir>/seed<S>/teacher_cache``
  (``teacher_cache_<name>`` for the teachers of a multi-teacher distiller,
  :func:`teacher_cache_dir`), filled once per seed before them by ``min(jobs, epochs)`` tasks side
  by side (task k of N: epochs k, k + N, ...; the bytes do not depend on the split) with every
  output of the teacher that one of them reads. A benchmark may name stages whose teacher runs
  live instead (``live_teacher_stages``: outputs too large to store).
* Every stage stores ``<work dir>/seed<S>/<stage>/result.json`` (val and test metrics, times,
  checkpoint, protocol) when it ends; the call then prints a table (mean ± std over seeds) and
  writes ``results.json`` (every stage per seed, with the protocol) and a bar chart.
* A plain student stage is also scored against the benchmark's ``fidelity_teacher``
  (``DistillFidelity`` on val and test, as ``tools/test.py --teacher`` does) once its seed's
  checkpoint and the teacher's exist, and stores ``fidelity.json`` beside its ``result.json``:
  the baseline of a paired comparison of fidelity then has one too.

A result's protocol is the code's commit and each stage's
:func:`~mlkd.utils.fingerprint.fingerprint` (its resolved config, with the checkpoint given as
teacher and the networks named by config path resolved to the models they build,
:func:`~mlkd.models.builder.with_networks_resolved`; the repository and the work dir written as
``<repo>`` / ``<work-dir>``, so the digests do not depend on where they are). Before anything
trains, results of another protocol in the work dir are refused, and so are the finished stages of
this one unless ``resume`` (reuse them) or ``overwrite`` (train them again) says what to do.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import os.path as osp
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mmengine.config import Config

from mlkd.apis.benchmark_report import plot_results, results_table, validate_results
from mlkd.apis.runs import (
    METRICS,
    evaluate_checkpoint,
    set_run_seed,
    train_and_evaluate,
)
from mlkd.apis.tasks import Task, run_tasks
from mlkd.apis.teacher_cache import fill_teacher_cache
from mlkd.models.builder import with_networks_resolved
from mlkd.models.distillers.teacher_settings import (
    is_distiller_config,
    reading_every_output,
    set_teacher,
    teacher_names,
)
from mlkd.utils.atomic import write_json_atomic
from mlkd.utils.cli import load_config
from mlkd.utils.config_paths import source_checkout_root
from mlkd.utils.fingerprint import fingerprint
from mlkd.utils.output_policy import check_outputs
from mlkd.utils.work_dir import new_folder

__all__ = [
    'Benchmark',
    'BenchmarkRequestError',
    'ProtocolError',
    'check_protocol',
    'check_teacher_checkpoint',
    'check_request',
    'protocol_of',
    'run_benchmark',
]


class BenchmarkRequestError(ValueError):
    """A call that cannot run as asked (seeds, stages, flags); nothing was trained."""


class ProtocolError(RuntimeError):
    """The work dir holds results of another protocol (another commit or stage config)."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark declared by its stages.

    Attributes:
        name: what the table and chart are titled (``'MultiDigits'``).
        stages: stage name -> its config (a path or ``mlkd::<path under configs/>``), in the
            order of the table.
        default_stages: the stages a call runs when it names none.
        teachers: teacher name, as the distilled stages' configs name it (``'teacher'`` for a
            ``SingleTeacherDistiller``, the keys of a ``MultiTeacherDistiller``'s
            ``model.teachers``) -> the stage that trains it (with the first seed only).
        metrics: the val / test metrics every stage reports (``MultiLabelMetric`` keys).
        distill_hooks: custom hooks added to every distilled stage (e.g. loss diagnostics).
        live_teacher_stages: distilled stages whose teachers run live on every batch rather than
            being read from the seed's caches (which then leave their outputs out): for outputs
            too large to store once per epoch.
        fidelity_teacher: the teacher (a key of ``teachers``) each plain student stage is scored
            against, so that its fidelity is measured as the distilled stages' is; ``None``: not
            scored (a benchmark without a teacher, or of several teachers that no plain student
            stands for alone).
        chart: the file name of the bar chart in the call's work dir (beside ``results.json``).
    """

    name: str
    stages: dict[str, str]
    default_stages: tuple[str, ...]
    teachers: dict[str, str] = field(default_factory=lambda: {'teacher': 'teacher'})
    metrics: tuple[str, ...] = METRICS
    distill_hooks: tuple[dict, ...] = ()
    live_teacher_stages: tuple[str, ...] = ()
    fidelity_teacher: str | None = 'teacher'
    chart: str = 'benchmark.png'

    def __post_init__(self) -> None:
        if self.fidelity_teacher is not None and self.fidelity_teacher not in self.teachers:
            raise ValueError(
                f'{self.name}: fidelity_teacher {self.fidelity_teacher!r} is not one of its '
                f'teachers ({list(self.teachers)}); None scores no plain stage'
            )
        unknown = [name for name in self.live_teacher_stages if name not in self.stages]
        if unknown:  # a misspelt name would leave that stage reading the cache, silently
            raise ValueError(
                f'{self.name}: live_teacher_stages {unknown} are not stages ({list(self.stages)})'
            )

    @property
    def teacher_stages(self) -> tuple[str, ...]:
        """The stages that train a teacher (each once, with the first seed)."""
        return tuple(dict.fromkeys(self.teachers.values()))

    def stage_config(
        self,
        name: str,
        work_dir: str,
        seed: int,
        teacher_ckpts: Mapping[str, str | None] | None,
        options: dict | None = None,
    ) -> Config:
        """The resolved config of stage ``name`` for ``seed``, training in ``work_dir``
        (``<call's work dir>/seed<S>/<stage>``; ``options``: ``--cfg-options``, keys checked). A
        distilled stage reads each teacher's outputs (``teacher_ckpts``: teacher name ->
        checkpoint) from the seed's cache of that teacher, or runs it live
        (:attr:`live_teacher_stages`)."""
        cfg = load_config(self.stages[name], options)
        cfg.work_dir = work_dir
        set_run_seed(cfg, seed)
        if is_distilled(cfg):
            seed_dir = osp.dirname(work_dir)
            for teacher in teacher_names(cfg.model):
                set_teacher(
                    cfg.model,
                    teacher,
                    ckpt=(teacher_ckpts or {}).get(teacher),
                    cache=None
                    if name in self.live_teacher_stages
                    else dict(dir=teacher_cache_dir(seed_dir, teacher), mode='read'),
                )
            cfg.custom_hooks = list(cfg.custom_hooks) + [dict(h) for h in self.distill_hooks]
        return cfg


def is_distilled(cfg: Config) -> bool:
    """Whether a stage's config distils teachers (and so reads the seed's teacher caches)."""
    return is_distiller_config(cfg.model)


def teacher_cache_dir(seed_dir: str, teacher: str = 'teacher') -> str:
    """Where the distilled stages of one seed (``seed_dir``) share the outputs of ``teacher``:
    ``teacher_cache`` for a single-teacher distiller's, ``teacher_cache_<name>`` for the teachers
    of a multi-teacher distiller."""
    return osp.join(
        seed_dir, 'teacher_cache' if teacher == 'teacher' else f'teacher_cache_{teacher}'
    )


def repository_root() -> str:
    """The source checkout mlkd runs from, else the installed ``mlkd/.mim`` (configs, tools)."""
    return source_checkout_root() or osp.join(osp.dirname(osp.dirname(__file__)), '.mim')


def git_commit() -> str:
    """The repository's HEAD commit, with ``+dirty.<digest of the changes>`` when tracked files
    differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ['git', *args], cwd=repository_root(), capture_output=True, text=True, check=True
        ).stdout

    try:
        head = git('rev-parse', 'HEAD').strip()
        changes = git('diff', 'HEAD', '--no-color', '--no-ext-diff')
    except (OSError, subprocess.CalledProcessError):
        return 'unknown (not a git checkout)'
    if not changes:
        return head
    # Two uncommitted states of the same HEAD are two protocols: the changes' digest tells them apart.
    return f'{head}+dirty.{hashlib.sha256(changes.encode()).hexdigest()[:12]}'


def check_teacher_checkpoint(benchmark: Benchmark, checkpoint: str, options: dict | None) -> None:
    """Refuse, before anything trains, a ``--teacher-ckpt`` that does not load into the
    benchmark's teacher (strictly: another network's, a student's, a missing file).

    Raises:
        BenchmarkRequestError: naming the file and what does not fit.
    """
    from mlkd.apis.inference import build_classifier
    from mlkd.models.weights import load_network_checkpoint

    stage = next(iter(benchmark.teachers.values()))
    network, _, _ = build_classifier(load_config(benchmark.stages[stage], options))
    try:
        load_network_checkpoint(network, checkpoint, f'--teacher-ckpt (the {stage} stage)')
    except (FileNotFoundError, ValueError) as error:
        raise BenchmarkRequestError(str(error)) from None


def protocol_of(
    benchmark: Benchmark,
    stages: Sequence[str],
    options: dict | None,
    work_dir: str,
    given_teacher: str | None = None,
    teacher_seed: int = 0,
) -> dict:
    """What a result depends on: ``{'commit', 'configs': {stage: fingerprint}}`` (for the
    teacher and the distilled stages, the teacher checkpoint given instead of trained counts, or
    the seed the teacher trains with, the call's first: a distilled result of another teacher is
    not this protocol's)."""
    places = {work_dir: '<work-dir>', repository_root(): '<repo>'}
    configs = {}
    placeholders = {teacher: f'{teacher}.pth' for teacher in benchmark.teachers}
    for name in stages:
        cfg = benchmark.stage_config(
            name, osp.join(work_dir, 'seed0', name), 0, placeholders, options
        )
        if name in benchmark.teacher_stages or is_distilled(cfg):
            if given_teacher is not None:
                cfg.given_checkpoint = osp.abspath(given_teacher)
            elif teacher_seed != 0:  # seed 0 adds nothing: the protocols recorded so far stay
                cfg.teacher_seed = teacher_seed
        configs[name] = fingerprint(with_networks_resolved(cfg), places=places)
    return dict(commit=git_commit(), configs=configs)


def check_protocol(found: dict, expected: dict, where: str) -> None:
    """Refuse results of another protocol: another commit, or another config for a stage.

    Raises:
        ProtocolError: naming ``where`` and what differs.
    """
    problems = []
    if found.get('commit') != expected['commit']:
        problems.append(f'commit {found.get("commit")!r} (now {expected["commit"]!r})')
    for name, digest in found.get('configs', {}).items():
        if name in expected['configs'] and digest != expected['configs'][name]:
            problems.append(
                f'the {name} config (sha256 {digest[:12]}, now {expected["configs"][name][:12]})'
            )
    if problems:
        raise ProtocolError(
            f'{where} holds results of another protocol: {"; ".join(problems)}. Use another '
            '--work-dir (results of two protocols are never mixed).'
        )


def check_request(
    benchmark: Benchmark,
    seeds: Sequence[int],
    stages: Sequence[str],
    *,
    jobs: int = 1,
    resume: bool = False,
    overwrite: bool = False,
) -> None:
    """Refuse a call that cannot run as asked, before anything is read or trained.

    Raises:
        BenchmarkRequestError: naming the option at fault.
    """
    if jobs < 1:
        raise BenchmarkRequestError(f'--jobs must be at least 1, got {jobs}')
    if not seeds:
        raise BenchmarkRequestError('--seeds: name at least one seed')
    if any(seed < 0 for seed in seeds):
        raise BenchmarkRequestError(f'--seeds must be non-negative, got {list(seeds)}')
    if not stages:
        raise BenchmarkRequestError('--stages: name at least one stage')
    if len(set(seeds)) != len(seeds):
        raise BenchmarkRequestError(f'--seeds lists a seed twice: {list(seeds)}')
    if len(set(stages)) != len(stages):
        raise BenchmarkRequestError(f'--stages lists a stage twice: {list(stages)}')
    unknown = [name for name in stages if name not in benchmark.stages]
    if unknown:
        raise BenchmarkRequestError(
            f'--stages: {unknown} are not stages of {benchmark.name} ({list(benchmark.stages)})'
        )
    if resume and overwrite:
        raise BenchmarkRequestError(
            '--resume reuses finished stages and --overwrite retrains them: pick one'
        )


def result_path(work_dir: str, seed: int, stage: str) -> str:
    """Where a stage of one seed stores its result."""
    return osp.join(work_dir, f'seed{seed}', stage, 'result.json')


def fidelity_path(work_dir: str, seed: int, stage: str) -> str:
    """Where a plain stage of one seed stores its fidelity to the benchmark's teacher."""
    return osp.join(work_dir, f'seed{seed}', stage, 'fidelity.json')


def run_stage(job: dict, needs: dict, live_progress: bool) -> dict:
    """Task: train one stage of one seed (a teacher stage with a teacher checkpoint given:
    evaluate it) and store its ``result.json``. ``job``: ``benchmark``, ``name``, ``seed``,
    ``root`` (the call's work dir), ``teachers`` (teacher name -> a given checkpoint) and
    ``teacher_tasks`` (teacher name -> the key of the task training it, in ``needs``),
    ``given_teacher`` (the call's ``teacher_ckpt``), ``options``, ``protocol``, ``verbose``,
    ``overwrite``."""
    work_dir = osp.join(job['root'], f'seed{job["seed"]}', job['name'])
    label = f'[seed {job["seed"]}] {job["name"]:9s}'
    cfg = job['benchmark'].stage_config(
        job['name'], work_dir, job['seed'], _teacher_ckpts(job, needs), job['options']
    )
    metrics = job['benchmark'].metrics
    given = job['given_teacher'] if job['name'] in job['benchmark'].teacher_stages else None
    if given is None:
        result = train_and_evaluate(
            cfg,
            label,
            test=True,
            verbose=job['verbose'],
            progress=live_progress,
            overwrite=job['overwrite'],
            metrics=metrics,
        )
    else:
        result = evaluate_checkpoint(cfg, given, label, verbose=job['verbose'], metrics=metrics)
    result.update(seed=job['seed'], protocol=job['protocol'])
    write_json_atomic(osp.join(work_dir, 'result.json'), result)
    return result


def score_fidelity(job: dict, needs: dict, live_progress: bool) -> dict:
    """Task: score the checkpoint of a plain stage of one seed against the benchmark's
    ``fidelity_teacher`` (``DistillFidelity`` on val and test, through a loss-free distiller of
    that teacher's config, as ``tools/test.py --teacher``) and store ``fidelity.json``:
    ``{'fidelity': {split: {key: value}}, 'checkpoint', 'teacher_ckpt', 'protocol'}``, which it
    returns. ``job``: as for :func:`run_stage`.

    The evaluation runs in ``<stage work dir>/fidelity``: mmengine saves the config it runs in its
    work dir, and the stage's own saved config must stay the plain classifier's. The teacher is
    built from its stage's config file, as the distilled stages build it (``--cfg-options`` apply
    to the stages' configs, not to the teacher inside them).
    """
    benchmark, seed, name = job['benchmark'], job['seed'], job['name']
    teacher = benchmark.fidelity_teacher
    work_dir = osp.join(job['root'], f'seed{seed}', name)
    cfg = benchmark.stage_config(name, work_dir, seed, None, job['options'])
    cfg.work_dir = osp.join(work_dir, 'fidelity')
    teacher_config = load_config(benchmark.stages[benchmark.teachers[teacher]]).filename
    teacher_ckpt = _teacher_ckpts(job, needs)[teacher]
    checkpoint = needs[('stage', name, seed)]['checkpoint']
    scored = evaluate_checkpoint(
        cfg,
        checkpoint,
        f'[seed {seed}] {name} vs {teacher}',
        verbose=job['verbose'],
        metrics=benchmark.metrics,
        teacher=(teacher_config, teacher_ckpt),
    )
    result = dict(
        fidelity=scored['fidelity'],
        checkpoint=checkpoint,
        teacher_ckpt=teacher_ckpt,
        protocol=job['protocol'],
    )
    write_json_atomic(fidelity_path(job['root'], seed, name), result)
    return result


def fill_seed_cache(job: dict, needs: dict, live_progress: bool) -> str:
    """Task: run one teacher over the training batches of some epochs of one seed and store its
    outputs in the seed's cache of that teacher, which that seed's distilled stages read
    (bit-identically to a live teacher, docs/teacher_cache.md). Several tasks fill disjoint epochs
    of one cache at once (the cache locks its manifest). It holds every output of the teacher that
    one of those stages reads (the ranking benchmark's L2D reads the label embeddings, its RKD the
    pooled features), written by one config reading them all
    (:func:`~mlkd.models.distillers.teacher_settings.reading_every_output`).

    ``job``: ``benchmark``, ``seed``, ``root``, ``teachers`` / ``teacher_tasks`` (as for
    :func:`run_stage`), ``options``, ``teacher`` (the name of the teacher to cache), ``stages``
    (the distilled stages reading it), ``epochs`` (the epoch numbers this task fills). Returns the
    cache folder.

    Raises:
        ValueError: two stages give one tap or connector name two settings (one cache cannot
            serve both).
    """
    seed_dir = osp.join(job['root'], f'seed{job["seed"]}')
    teacher = job['teacher']
    configs = {
        name: job['benchmark'].stage_config(
            name, osp.join(seed_dir, name), job['seed'], _teacher_ckpts(job, needs), job['options']
        )
        for name in job['stages']
    }
    writer = configs[job['stages'][0]]
    writer.model = reading_every_output({n: c.model.to_dict() for n, c in configs.items()}, teacher)
    folder = teacher_cache_dir(seed_dir, teacher)
    fill_teacher_cache(writer, folder, job['epochs'], teacher=teacher, log=_silent)
    return folder


def _silent(text: str) -> None:
    """A log that drops its lines (a worker's; the task's start and end lines say enough)."""


def _teacher_ckpts(job: dict, needs: dict) -> dict[str, str | None]:
    """The teacher checkpoints of a task, by teacher name: the teacher tasks', else those given."""
    ckpts = dict(job.get('teachers') or {})
    for name, key in (job.get('teacher_tasks') or {}).items():
        if key in needs:
            ckpts[name] = needs[key]['checkpoint']
    return ckpts


def cache_writers(jobs: int, epochs: int) -> int:
    """How many tasks fill one seed's cache side by side: one per job, at most one per epoch
    (writers of disjoint epochs share a cache folder under its lock, :mod:`mlkd.teacher_cache`)."""
    return max(min(jobs, epochs), 1)


def _stage_report(seed: int, name: str) -> Callable[[dict, float], str]:
    def report(result: dict, seconds: float) -> str:
        took = (
            'given'
            if result['seconds'] is None
            else f'{result["seconds"]:.0f} s wall, '
            f'{result.get("cpu_seconds", float("nan")):.0f} s CPU'
        )
        scores = '  '.join(f'{k} {v:.2f}' for k, v in result['test'].items())
        return f'[seed {seed}] {name}: test {scores}  ({took})'

    return report


def _cache_task(
    common: dict,
    seed: int,
    teacher: str,
    readers: list[str],
    shard: int,
    shards: int,
    epochs: int,
    waits: tuple,
) -> Task:
    """Shard ``shard`` of ``shards`` of the seed's cache of ``teacher``: epochs shard,
    shard + shards, ..."""
    what = 'teacher outputs' if teacher == 'teacher' else f'outputs of teacher {teacher!r}'
    what += f' (shard {shard + 1} of {shards})' if shards > 1 else ''
    shard_epochs = list(range(shard, epochs, shards))

    def report(folder: str, seconds: float) -> str:
        return f'[seed {seed}] {what} cached in {folder} ({seconds:.0f} s)'

    return Task(
        cache_key(teacher, shard, seed),
        fill_seed_cache,
        dict(common, seed=seed, teacher=teacher, stages=readers, epochs=shard_epochs),
        after=waits,
        name=f'[seed {seed}] caching the {what}, epochs {shard_epochs}',
        report=report,
        wanted=False,
    )


def _fidelity_task(common: dict, seed: int, name: str, teacher_task: tuple | None) -> Task:
    """Score stage ``name`` of ``seed`` against the benchmark's ``fidelity_teacher``
    (trained by ``teacher_task`` in this call, else given)."""

    def report(result: dict, seconds: float) -> str:
        scores = '  '.join(f'{k} {v:.4g}' for k, v in result['fidelity']['test'].items())
        return f'[seed {seed}] {name}: test {scores}  ({seconds:.0f} s)'

    return Task(
        ('fidelity', name, seed),
        score_fidelity,
        dict(common, name=name, seed=seed),
        after=(('stage', name, seed),) + ((teacher_task,) if teacher_task else ()),
        name=f'[seed {seed}] {name}: fidelity to the teacher',
        report=report,
    )


def cache_key(teacher: str, shard: int, seed: int) -> tuple:
    """The task key of shard ``shard`` of the seed's cache of ``teacher``."""
    return ('cache', f'{teacher}/{shard}', seed)


def plan_tasks(
    benchmark: Benchmark,
    configs: Mapping[str, Config],
    seeds: Sequence[int],
    common: dict,
    jobs: int,
) -> list[Task]:
    """The call's task graph, in the order one process runs it: the teacher stages, then per seed
    each teacher's cache (in shards) before the first distilled stage reading it, and the
    distilled stages after the caches of their teachers, and each plain student's fidelity to the
    ``fidelity_teacher`` after that student and teacher. ``configs``: each stage's resolved
    config (seed 0), ``common``: what every task's job holds (``benchmark``, ``root``,
    ``options``, ``teachers``, ``teacher_tasks``: teacher name -> the key of the task training
    it in this call)."""
    students = [name for name in configs if name not in benchmark.teacher_stages]
    distilled = [name for name in students if is_distilled(configs[name])]
    reads = {name: teacher_names(configs[name].model) for name in distilled}
    cached = {name: [] if name in benchmark.live_teacher_stages else reads[name] for name in reads}
    readers = {
        teacher: [name for name in distilled if teacher in cached[name]]
        for teacher in benchmark.teachers
    }
    epochs = {
        teacher: max((configs[name].train_cfg.max_epochs for name in names), default=0)
        for teacher, names in readers.items()
    }
    shards = {teacher: cache_writers(jobs, count) for teacher, count in epochs.items()}
    teacher_tasks = common['teacher_tasks']
    scored = benchmark.fidelity_teacher
    if (
        scored is not None
        and scored not in teacher_tasks
        and common['teachers'].get(scored) is None
    ):
        scored = None  # the call neither trains nor is given that teacher
    tasks = [
        Task(
            ('stage', stage, seeds[0]),
            run_stage,
            dict(common, name=stage, seed=seeds[0], teacher_tasks={}),
            name=f'[seed {seeds[0]}] {stage}',
            report=_stage_report(seeds[0], stage),
        )
        for stage in benchmark.teacher_stages
        if stage in configs
    ]

    def trained(names) -> tuple:
        return tuple(dict.fromkeys(teacher_tasks[n] for n in names if n in teacher_tasks))

    for seed in seeds:
        planned: set[str] = set()
        for name in students:
            waits = trained(reads.get(name, []))
            for teacher in cached.get(name, []):
                if teacher not in planned:  # the cache, before the first stage reading it
                    # Its writer builds the stages reading it, with all their teachers.
                    built = trained(t for reader in readers[teacher] for t in reads[reader])
                    tasks += [
                        _cache_task(
                            common,
                            seed,
                            teacher,
                            readers[teacher],
                            shard,
                            shards[teacher],
                            epochs[teacher],
                            built,
                        )
                        for shard in range(shards[teacher])
                    ]
                    planned.add(teacher)
                waits += tuple(cache_key(teacher, k, seed) for k in range(shards[teacher]))
            tasks.append(
                Task(
                    ('stage', name, seed),
                    run_stage,
                    dict(common, name=name, seed=seed),
                    after=waits,
                    name=f'[seed {seed}] {name}',
                    report=_stage_report(seed, name),
                )
            )
            if scored is not None and name not in distilled:
                tasks.append(_fidelity_task(common, seed, name, teacher_tasks.get(scored)))
    return tasks


def _reusable(
    tasks: Sequence[Task],
    work_dir: str,
    benchmark: Benchmark,
    teacher_ckpt: str | None,
    log: Callable[[str], None],
) -> dict:
    """The results of ``tasks`` an earlier call of the same protocol (checked before) stored:
    finished stages, and fidelity scores of a finished stage's checkpoint made against the teacher
    checkpoint this call uses (a stage or teacher trained again, or a teacher not trained yet: the
    score is made again)."""
    finished = {}
    for kind, name, seed in (task.key for task in tasks if task.key[0] == 'stage'):
        path = result_path(work_dir, seed, name)
        if osp.isfile(path):
            with open(path, encoding='utf-8') as f:
                finished[(kind, name, seed)] = json.load(f)
            log(f'[seed {seed}] {name}: reused {path}')
    teacher_stage = benchmark.teachers.get(benchmark.fidelity_teacher)
    trained = next(
        (r for (k, n, _), r in finished.items() if k == 'stage' and n == teacher_stage), None
    )
    expected = teacher_ckpt if trained is None else trained['checkpoint']
    for kind, name, seed in (task.key for task in tasks if task.key[0] == 'fidelity'):
        path = fidelity_path(work_dir, seed, name)
        stage = finished.get(('stage', name, seed))
        if stage is not None and osp.isfile(path):
            with open(path, encoding='utf-8') as f:
                stored = json.load(f)
            same = (stored.get('checkpoint'), stored.get('teacher_ckpt'))
            if expected is not None and same == (stage['checkpoint'], expected):
                finished[(kind, name, seed)] = stored
                log(f'[seed {seed}] {name}: reused {path}')
    return finished


def run_benchmark(
    benchmark: Benchmark,
    work_dir: str,
    *,
    seeds: Sequence[int] = (0,),
    stages: Sequence[str] | None = None,
    teacher_ckpt: str | None = None,
    options: dict | None = None,
    jobs: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    verbose: bool = False,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
) -> dict:
    """Run ``stages`` of ``benchmark`` for ``seeds`` in ``work_dir`` (module doc), ``jobs`` tasks
    side by side, each on one thread (a stage gives the same numbers whatever ``jobs``).

    Args:
        teacher_ckpt: evaluate (and distil from) this teacher instead of training one (a
            benchmark of one teacher only).
        options: ``--cfg-options`` applied to every stage.
        resume: reuse the stages an earlier call of the same protocol finished.
        overwrite: train finished stages again and replace the call's outputs (deleting nothing
            else).
        verbose: show the training logs.

    Returns:
        what ``results.json`` holds: ``seeds``, ``stages``, ``protocol``, ``teacher_ckpt`` (the
        teacher's checkpoint; with several teachers, teacher name -> checkpoint) and ``results``
        (stage -> one result per seed).

    Raises:
        BenchmarkRequestError: a call that cannot run as asked, or a ``teacher_ckpt`` that does
            not fit the teacher (nothing trained).
        ProtocolError: the work dir holds results of another protocol (nothing trained).
        OutputExistsError: outputs of an earlier call, without ``resume`` or ``overwrite``.
    """
    stages = list(benchmark.default_stages if stages is None else stages)
    seeds = list(seeds)
    check_request(benchmark, seeds, stages, jobs=jobs, resume=resume, overwrite=overwrite)
    # Absolute, so that a call from another folder, or spelling it otherwise, is the same call
    # (the protocol holds it as <work-dir>; the stages' configs and caches name it).
    work_dir = osp.abspath(work_dir)
    teacher_stages = benchmark.teacher_stages
    if teacher_ckpt is not None and len(benchmark.teachers) != 1:
        raise BenchmarkRequestError(
            f'--teacher-ckpt gives one teacher, but {benchmark.name} has {len(benchmark.teachers)} '
            f'({list(benchmark.teachers)}): train them (their stages {list(teacher_stages)})'
        )
    if teacher_ckpt is not None:
        check_teacher_checkpoint(benchmark, teacher_ckpt, options)
    configs = {
        name: benchmark.stage_config(name, osp.join(work_dir, 'seed0', name), 0, None, options)
        for name in stages
    }
    for name, cfg in configs.items():
        unknown = [t for t in teacher_names(cfg.model) if t not in benchmark.teachers]
        if unknown:
            raise BenchmarkRequestError(
                f'stage {name!r} reads teachers {unknown} that {benchmark.name} does not train '
                f'(its teachers: {benchmark.teachers})'
            )
        untrained = [
            benchmark.teachers[t]
            for t in teacher_names(cfg.model)
            if benchmark.teachers[t] not in stages
        ]
        if untrained and teacher_ckpt is None:
            raise BenchmarkRequestError(
                f'distilled stages need a teacher: add the {untrained[0]} stage or --teacher-ckpt'
            )

    # Every check below happens before any training.
    protocol = protocol_of(benchmark, stages, options, work_dir, teacher_ckpt, seeds[0])
    stored = sorted(
        glob.glob(osp.join(work_dir, 'seed*', '*', 'result.json'))
        + glob.glob(osp.join(work_dir, 'seed*', '*', 'fidelity.json'))
    )
    for path in [osp.join(work_dir, 'results.json')] + stored:
        if not osp.isfile(path):
            continue
        with open(path, encoding='utf-8') as f:
            try:
                found = json.load(f)
            except ValueError:
                found = None
        if not isinstance(found, dict) or not isinstance(found.get('protocol'), dict):
            if path in stored or resume:  # it would be read, or replaced by --resume
                raise ProtocolError(
                    f'{path} is not a result of this tool (not JSON, or without a protocol; a '
                    'damaged or foreign file): move it away to train or summarise again'
                )
            continue  # not ours: the output policy below refuses to replace it
        check_protocol(found['protocol'], protocol, path)
    planned = [
        result_path(work_dir, s, n) for s in seeds for n in stages if n not in teacher_stages
    ]
    planned += [result_path(work_dir, seeds[0], n) for n in stages if n in teacher_stages]
    done = [p for p in planned if osp.isfile(p)]
    if done and not (resume or overwrite):
        raise BenchmarkRequestError(
            f'{len(done)} stage(s) of this call are already finished in {work_dir} (e.g. '
            f'{done[0]}): pass --resume to reuse them or --overwrite to retrain them'
        )
    # The seeds' teacher caches an earlier call left (a stopped one included): outputs of the call
    # too, made for its teacher and stages; reused with --resume, rebuilt with --overwrite.
    caches = [
        cache
        for seed in seeds
        for teacher in benchmark.teachers
        if osp.isdir(cache := teacher_cache_dir(osp.join(work_dir, f'seed{seed}'), teacher))
    ]
    if caches and not (resume or overwrite):
        raise BenchmarkRequestError(
            f'{caches[0]} holds the teacher cache of an earlier call: pass --resume to reuse it '
            'or --overwrite to build it again'
        )
    if overwrite:
        for cache in caches:  # set aside, deleting nothing
            aside = new_folder(f'{cache}.replaced_{time.strftime("%Y%m%d_%H%M%S")}')
            os.replace(cache, aside)
            log(f'--overwrite: the teacher cache {cache} moved to {aside}')
    started = time.perf_counter()
    outputs = [osp.join(work_dir, name) for name in (benchmark.chart, 'results.json')]
    # What an earlier call left is replaced only with overwrite; resume reuses its finished
    # stages (of the same protocol) and summarises them again in the chart and results.json.
    policy = dict(overwrite=overwrite or resume, inputs=[teacher_ckpt])
    if not resume:
        check_outputs(outputs + planned, **policy)

    teacher_tasks = {
        name: ('stage', stage, seeds[0])
        for name, stage in benchmark.teachers.items()
        if stage in stages
    }
    common = dict(
        benchmark=benchmark,
        root=work_dir,
        options=options,
        teachers={name: teacher_ckpt for name in benchmark.teachers if name not in teacher_tasks},
        teacher_tasks=teacher_tasks,
        given_teacher=teacher_ckpt,
        protocol=protocol,
        verbose=verbose,
        overwrite=overwrite,
    )
    tasks = plan_tasks(benchmark, configs, seeds, common, jobs)
    finished = _reusable(tasks, work_dir, benchmark, teacher_ckpt, log) if resume else {}
    finished = run_tasks(tasks, jobs, finished, started=started, log=log)

    def with_fidelity(name: str, seed: int) -> dict:
        scored = finished.get(('fidelity', name, seed))
        result = finished[('stage', name, seed)]
        return result if scored is None else dict(result, fidelity=scored['fidelity'])

    results = {
        name: [
            with_fidelity(name, seed) for seed in (seeds[:1] if name in teacher_stages else seeds)
        ]
        for name in stages
    }
    ckpts = {
        name: results[stage][0]['checkpoint'] if stage in stages else teacher_ckpt
        for name, stage in benchmark.teachers.items()
    }
    log(results_table(results, f'{benchmark.name} test split', benchmark.metrics))
    plot_results(results, outputs[0], benchmark.name, teacher_stages, **policy)
    summary = dict(
        seeds=seeds,
        stages=stages,
        protocol=protocol,
        # One teacher: its checkpoint; several: teacher name -> checkpoint.
        teacher_ckpt=next(iter(ckpts.values())) if len(ckpts) == 1 else ckpts,
        results=results,
    )
    validate_results(summary, benchmark.metrics, teacher_stages)
    check_outputs(outputs[1:], **policy)
    write_json_atomic(outputs[1], summary)
    log(f'total wall time: {time.perf_counter() - started:.0f} s; bar chart: {outputs[0]}')
    return summary
