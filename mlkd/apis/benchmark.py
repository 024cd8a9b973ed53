"""A benchmark: a teacher and students, one config per stage, trained over seeds and compared on
test. A benchmark is declared as data (:class:`Benchmark`: its stages' configs) and run by
:func:`run_benchmark` as a task graph (:mod:`mlkd.apis.tasks`); the demo
(:data:`mlkd.apis.demo.DEMO`, ``tools/demo.py``) is one.

The protocol of a call:

* The teacher stage trains once, with the first seed, and serves every seed (or a checkpoint
  given instead is evaluated). A seed sets what the configs' ``seed_key`` names
  (:func:`~mlkd.apis.runs.set_run_seed`).
* Each seed trains every other stage. A stage whose config is a distiller reads its teacher's
  outputs from the seed's teacher cache, ``<work dir>/seed<S>/teacher_cache``, filled once per
  seed before them by ``min(jobs, epochs)`` tasks side by side (task k of N: epochs k, k + N, ...;
  the bytes do not depend on the split) with the outputs of the stage that reads the most of them.
* Every stage stores ``<work dir>/seed<S>/<stage>/result.json`` (val and test metrics, times,
  checkpoint, protocol) when it ends; the call then prints a table (mean ± std over seeds) and
  writes ``results.json`` (every stage per seed, with the protocol) and a bar chart.

A result's protocol is the code's commit and each stage's
:func:`~mlkd.utils.fingerprint.fingerprint` (its resolved config, with the checkpoint given as
teacher; the repository and the work dir written as ``<repo>`` / ``<work-dir>``, so the digests do
not depend on where they are). Before anything trains, results of another protocol in the work dir
are refused, and so are the finished stages of this one unless ``resume`` (reuse them) or
``overwrite`` (train them again) says what to do.
"""

from __future__ import annotations

import glob
import json
import os.path as osp
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mmengine.config import Config
from mmengine.registry import DefaultScope

from mlkd.apis.benchmark_report import plot_results, results_table, validate_results
from mlkd.apis.runs import (
    METRICS,
    evaluate_checkpoint,
    set_run_seed,
    train_and_evaluate,
)
from mlkd.apis.tasks import Task, run_tasks
from mlkd.apis.teacher_cache import fill_teacher_cache
from mlkd.registry import MODELS
from mlkd.utils.atomic import write_json_atomic
from mlkd.utils.cli import load_config
from mlkd.utils.config_paths import source_checkout_root
from mlkd.utils.fingerprint import fingerprint
from mlkd.utils.output_policy import check_outputs

__all__ = [
    'Benchmark',
    'BenchmarkRequestError',
    'ProtocolError',
    'check_protocol',
    'check_request',
    'protocol_of',
    'run_benchmark',
]

#: The model type of a distilled stage (it reads the teacher, from the seed's teacher cache).
DISTILLER = 'SingleTeacherDistiller'


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
        teacher: the stage that trains the teacher (with the first seed only).
        metrics: the val / test metrics every stage reports (``MultiLabelMetric`` keys).
        distill_hooks: custom hooks added to every distilled stage (e.g. loss diagnostics).
        chart: the file name of the bar chart in the call's work dir (beside ``results.json``).
    """

    name: str
    stages: dict[str, str]
    default_stages: tuple[str, ...]
    teacher: str = 'teacher'
    metrics: tuple[str, ...] = METRICS
    distill_hooks: tuple[dict, ...] = ()
    chart: str = 'benchmark.png'

    def stage_config(
        self,
        name: str,
        work_dir: str,
        seed: int,
        teacher_ckpt: str | None,
        options: dict | None = None,
    ) -> Config:
        """The resolved config of stage ``name`` for ``seed``, training in ``work_dir``
        (``<call's work dir>/seed<S>/<stage>``; ``options``: ``--cfg-options``, keys checked). A
        distilled stage reads ``teacher_ckpt``'s outputs from the seed's teacher cache."""
        cfg = load_config(self.stages[name], options)
        cfg.work_dir = work_dir
        set_run_seed(cfg, seed)
        if is_distilled(cfg):
            cfg.model.teacher_ckpt = teacher_ckpt
            cfg.model.teacher_cache = dict(
                dir=teacher_cache_dir(osp.dirname(work_dir)), mode='read'
            )
            cfg.custom_hooks = list(cfg.custom_hooks) + [dict(h) for h in self.distill_hooks]
        return cfg


def is_distilled(cfg: Config) -> bool:
    """Whether a stage's config distils a teacher (and so reads the seed's teacher cache)."""
    return cfg.model.get('type') == DISTILLER


def teacher_cache_dir(seed_dir: str) -> str:
    """Where the distilled stages of one seed (``seed_dir``) share their teacher's outputs."""
    return osp.join(seed_dir, 'teacher_cache')


def repository_root() -> str:
    """The source checkout mlkd runs from, else the installed ``mlkd/.mim`` (configs, tools)."""
    return source_checkout_root() or osp.join(osp.dirname(osp.dirname(__file__)), '.mim')


def git_commit() -> str:
    """The repository's HEAD commit, with ``+dirty`` when tracked files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ['git', *args], cwd=repository_root(), capture_output=True, text=True, check=True
        ).stdout

    try:
        head = git('rev-parse', 'HEAD').strip()
        dirty = git('status', '--porcelain', '--untracked-files=no')
    except (OSError, subprocess.CalledProcessError):
        return 'unknown (not a git checkout)'
    return head + ('+dirty' if dirty.strip() else '')


def protocol_of(
    benchmark: Benchmark,
    stages: Sequence[str],
    options: dict | None,
    work_dir: str,
    given_teacher: str | None = None,
) -> dict:
    """What a result depends on: ``{'commit', 'configs': {stage: fingerprint}}`` (for the
    teacher and the distilled stages, the teacher checkpoint given instead of trained counts:
    a distilled result of another teacher is not this protocol's)."""
    places = {work_dir: '<work-dir>', repository_root(): '<repo>'}
    configs = {}
    for name in stages:
        cfg = benchmark.stage_config(
            name, osp.join(work_dir, 'seed0', name), 0, 'teacher.pth', options
        )
        if given_teacher is not None and (name == benchmark.teacher or is_distilled(cfg)):
            cfg.given_checkpoint = osp.abspath(given_teacher)
        configs[name] = fingerprint(cfg, places=places)
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
    if not seeds or any(seed < 0 for seed in seeds):
        raise BenchmarkRequestError(f'--seeds must be non-negative, got {list(seeds)}')
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


def run_stage(job: dict, needs: dict, live_progress: bool) -> dict:
    """Task: train one stage of one seed (the teacher stage with a teacher checkpoint given:
    evaluate it) and store its ``result.json``. ``job``: ``benchmark``, ``name``, ``seed``,
    ``root`` (the call's work dir), ``teacher`` (a given checkpoint) or ``teacher_task`` (the key
    of the teacher's task in ``needs``), ``options``, ``protocol``, ``verbose``, ``overwrite``."""
    work_dir = osp.join(job['root'], f'seed{job["seed"]}', job['name'])
    label = f'[seed {job["seed"]}] {job["name"]:9s}'
    cfg = job['benchmark'].stage_config(
        job['name'], work_dir, job['seed'], _teacher(job, needs), job['options']
    )
    metrics = job['benchmark'].metrics
    given = job['teacher'] if job['name'] == job['benchmark'].teacher else None
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


def fill_seed_cache(job: dict, needs: dict, live_progress: bool) -> str:
    """Task: run the teacher over the training batches of some epochs of one seed and store its
    outputs in the seed's teacher cache, which that seed's distilled stages read (bit-identically
    to a live teacher, docs/teacher_cache.md). Several tasks fill disjoint epochs of one cache
    at once (the cache locks its manifest). It holds the outputs of the stage that reads the most
    of them (the demo's L2D also reads the label embeddings), so every stage finds its own.

    ``job``: ``benchmark``, ``seed``, ``root``, ``teacher`` / ``teacher_task`` (as for
    :func:`run_stage`), ``options``, ``stages`` (the distilled ones), ``epochs`` (the epoch numbers
    this task fills). Returns the cache folder.

    Raises:
        ValueError: no stage reads every teacher output the others read (the benchmark's
            distilled stages cannot share one cache).
    """
    seed_dir = osp.join(job['root'], f'seed{job["seed"]}')
    configs = {
        name: job['benchmark'].stage_config(
            name, osp.join(seed_dir, name), job['seed'], _teacher(job, needs), job['options']
        )
        for name in job['stages']
    }
    outputs = {}
    with DefaultScope.overwrite_default_scope('mlkd'):
        for name, cfg in configs.items():
            model_cfg = dict(
                cfg.model.to_dict(),
                teacher_cache=None,
                teacher_ckpt=None,
                allow_random_teacher=True,
            )  # only the taps are wanted here
            outputs[name] = set(MODELS.build(model_cfg).teacher_outputs)
    widest = max(outputs, key=lambda name: len(outputs[name]))
    missing = {
        name: sorted(taps - outputs[widest])
        for name, taps in outputs.items()
        if not taps <= outputs[widest]
    }
    if missing:
        raise ValueError(
            f'no single stage reads every teacher output the others read ({missing} are not read '
            f'by {widest}); one teacher cache cannot serve them all'
        )
    fill_teacher_cache(configs[widest], teacher_cache_dir(seed_dir), job['epochs'], log=_silent)
    return teacher_cache_dir(seed_dir)


def _silent(text: str) -> None:
    """A log that drops its lines (a worker's; the task's start and end lines say enough)."""


def _teacher(job: dict, needs: dict) -> str | None:
    """The teacher checkpoint of a task: the teacher task's, else the one given."""
    teacher = needs.get(job.get('teacher_task'))
    return teacher['checkpoint'] if teacher is not None else job['teacher']


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
    distilled: list[str],
    shard: int,
    shards: int,
    epochs: int,
    waits: tuple,
) -> Task:
    """Shard ``shard`` of ``shards`` of a seed's teacher cache: epochs shard, shard + shards..."""
    what = 'teacher outputs' + (f' (shard {shard + 1} of {shards})' if shards > 1 else '')
    shard_epochs = list(range(shard, epochs, shards))

    def report(folder: str, seconds: float) -> str:
        return f'[seed {seed}] {what} cached in {folder} ({seconds:.0f} s)'

    return Task(
        ('cache', shard, seed),
        fill_seed_cache,
        dict(common, seed=seed, stages=distilled, epochs=shard_epochs),
        after=waits,
        name=f'[seed {seed}] caching the {what}, epochs {shard_epochs}',
        report=report,
        wanted=False,
    )


def plan_tasks(
    benchmark: Benchmark,
    configs: Mapping[str, Config],
    seeds: Sequence[int],
    common: dict,
    jobs: int,
) -> list[Task]:
    """The call's task graph, in the order one process runs it: the teacher, then per seed its
    teacher cache (in shards) before its distilled stages. ``configs``: each stage's resolved
    config (seed 0), ``common``: what every task's job holds (``benchmark``, ``root``,
    ``options``, ``teacher``, ``teacher_task``)."""
    teacher = benchmark.teacher
    students = [name for name in configs if name != teacher]
    distilled = [name for name in students if is_distilled(configs[name])]
    epochs = max((configs[name].train_cfg.max_epochs for name in distilled), default=0)
    shards = cache_writers(jobs, epochs)
    waits = (common['teacher_task'],) if common['teacher_task'] else ()
    tasks = []
    if teacher in configs:
        tasks.append(
            Task(
                ('stage', teacher, seeds[0]),
                run_stage,
                dict(common, name=teacher, seed=seeds[0], teacher_task=None),
                name=f'[seed {seeds[0]}] {teacher}',
                report=_stage_report(seeds[0], teacher),
            )
        )
    for seed in seeds:
        cache_keys = tuple(('cache', shard, seed) for shard in range(shards)) if distilled else ()
        for name in students:
            if distilled and name == distilled[0]:  # the cache, before the first stage reading it
                tasks += [
                    _cache_task(common, seed, distilled, shard, shards, epochs, waits)
                    for shard in range(shards)
                ]
            tasks.append(
                Task(
                    ('stage', name, seed),
                    run_stage,
                    dict(common, name=name, seed=seed),
                    after=waits + cache_keys if name in distilled else (),
                    name=f'[seed {seed}] {name}',
                    report=_stage_report(seed, name),
                )
            )
    return tasks


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
        teacher_ckpt: evaluate (and distil from) this teacher instead of training one.
        options: ``--cfg-options`` applied to every stage.
        resume: reuse the stages an earlier call of the same protocol finished.
        overwrite: train finished stages again and replace the call's outputs (deleting nothing
            else).
        verbose: show the training logs.

    Returns:
        what ``results.json`` holds: ``seeds``, ``stages``, ``protocol``, ``teacher_ckpt`` and
        ``results`` (stage -> one result per seed).

    Raises:
        BenchmarkRequestError: a call that cannot run as asked (nothing trained).
        ProtocolError: the work dir holds results of another protocol (nothing trained).
        OutputExistsError: outputs of an earlier call, without ``resume`` or ``overwrite``.
    """
    stages = list(benchmark.default_stages if stages is None else stages)
    seeds = list(seeds)
    check_request(benchmark, seeds, stages, jobs=jobs, resume=resume, overwrite=overwrite)
    teacher = benchmark.teacher
    configs = {
        name: benchmark.stage_config(name, osp.join(work_dir, 'seed0', name), 0, None, options)
        for name in stages
    }
    if teacher_ckpt is None and teacher not in stages and any(map(is_distilled, configs.values())):
        raise BenchmarkRequestError(
            f'distilled stages need a teacher: add the {teacher} stage or --teacher-ckpt'
        )

    # Every check below happens before any training.
    protocol = protocol_of(benchmark, stages, options, work_dir, teacher_ckpt)
    stored = sorted(glob.glob(osp.join(work_dir, 'seed*', '*', 'result.json')))
    for path in [osp.join(work_dir, 'results.json')] + stored:
        if osp.isfile(path):
            with open(path, encoding='utf-8') as f:
                try:
                    found = json.load(f)
                except ValueError:  # not ours: the output policy below refuses to replace it
                    continue
            check_protocol(
                found.get('protocol', {}) if isinstance(found, dict) else {}, protocol, path
            )
    planned = [result_path(work_dir, s, n) for s in seeds for n in stages if n != teacher]
    if teacher in stages:
        planned.append(result_path(work_dir, seeds[0], teacher))
    done = [p for p in planned if osp.isfile(p)]
    if done and not (resume or overwrite):
        raise BenchmarkRequestError(
            f'{len(done)} stage(s) of this call are already finished in {work_dir} (e.g. '
            f'{done[0]}): pass --resume to reuse them or --overwrite to retrain them'
        )
    started = time.perf_counter()
    outputs = [osp.join(work_dir, name) for name in (benchmark.chart, 'results.json')]
    # What an earlier call left is replaced only with overwrite; resume reuses its finished
    # stages (of the same protocol) and summarises them again in the chart and results.json.
    policy = dict(overwrite=overwrite or resume, inputs=[teacher_ckpt])
    if not resume:
        results = [result_path(work_dir, s, n) for s in seeds for n in stages]
        check_outputs(outputs + results, **policy)

    teacher_task = ('stage', teacher, seeds[0]) if teacher in stages else None
    common = dict(
        benchmark=benchmark,
        root=work_dir,
        options=options,
        teacher=teacher_ckpt,
        teacher_task=teacher_task,
        protocol=protocol,
        verbose=verbose,
        overwrite=overwrite,
    )
    tasks = plan_tasks(benchmark, configs, seeds, common, jobs)
    finished = {}
    for kind, name, seed in (task.key for task in tasks if resume):
        path = result_path(work_dir, seed, name) if kind == 'stage' else ''
        if osp.isfile(path):  # a finished stage; its protocol is checked above
            with open(path, encoding='utf-8') as f:
                finished[(kind, name, seed)] = json.load(f)
            log(f'[seed {seed}] {name}: reused {path}')
    finished = run_tasks(tasks, jobs, finished, started=started, log=log)

    results = {
        name: [
            finished[('stage', name, seed)] for seed in (seeds[:1] if name == teacher else seeds)
        ]
        for name in stages
    }
    if teacher in stages:
        teacher_ckpt = results[teacher][0]['checkpoint']
    log(results_table(results, f'{benchmark.name} test split', benchmark.metrics))
    plot_results(results, outputs[0], benchmark.name, teacher, **policy)
    summary = dict(
        seeds=seeds, stages=stages, protocol=protocol, teacher_ckpt=teacher_ckpt, results=results
    )
    validate_results(summary, benchmark.metrics, teacher)
    check_outputs(outputs[1:], **policy)
    write_json_atomic(outputs[1], summary)
    log(f'total wall time: {time.perf_counter() - started:.0f} s; bar chart: {outputs[0]}')
    return summary
