"""A study: the same runs trained for every seed, each distilled run taught by the teacher run of
its own seed, every stored result reused only for the config that made it.

A study is declared as data (:class:`Study`: its runs' configs and which run teaches which) and
run by :func:`run_study` as a task graph (:mod:`mlkd.apis.tasks`): each run of each seed as soon
as its teacher run of that seed has finished, ``jobs`` at a time, one thread each. Unlike a
benchmark (:mod:`mlkd.apis.benchmark`: one teacher trained once and read from a cache by every
seed), every seed trains its own teachers and its distilled runs read them live. The
intra-class study (:mod:`mlkd.apis.intra_class`) is one.

* Run ``R`` of seed ``S`` trains in ``<work dir>/seed<S>/R``: its config with the study's and the
  call's options, the seed at its ``seed_key`` (:func:`~mlkd.apis.runs.set_run_seed`), one
  checkpoint (the last, which is evaluated and which teaches); a distilled run's
  ``model.teacher_ckpt`` is that checkpoint of its teacher run. It is evaluated on val (and on
  test unless ``test=False``: a run that selects settings, or a call that reads val only) with
  its last weights.
* Its result is stored in ``result.json`` beside it, keyed by the
  :func:`~mlkd.utils.fingerprint.fingerprint` of the run's *identity*: its resolved config, in
  which a distilled run's teacher checkpoint is replaced by the fingerprint of the teacher run's
  identity, and every network the model names by config path (``student``, ``teacher``,
  ``classifier``) by the model that file resolves to. A changed teacher config thus changes its
  students' identities too, an edited student file its KD runs', and no identity depends on
  where the work dir is.
* Before anything trains every stored result of the call is read: one of the same identity is
  reused, one of another identity is refused (:class:`~mlkd.apis.runs.StaleResultError`, naming
  the keys that differ) unless ``overwrite``, which trains that run again.
* Whether a run read test is not part of its identity. A result of the same identity without the
  test score its run now needs (stored by a call that read val only: the call that chose a
  setting) is completed from its stored checkpoint without training (:func:`read_test_on_checkpoint`):
  the settings are chosen on val, frozen, and test is then read once on the same networks. Its
  val is evaluated again and must equal the stored one (the checkpoint is the one that made the
  result); a result whose checkpoint is gone is refused, or trained again with ``overwrite``.
* Results made elsewhere (another machine, another work dir, a call that was stopped) are taken
  from results files in the format of :func:`~mlkd.apis.config_study.study_results` (``reuse``):
  an entry of the same run, seed and identity fingerprint is stored in this work dir, once the
  call is not refused, as if it had trained here, but without a checkpoint (``checkpoint`` None;
  where it was is kept in ``taken_from``): its checkpoint is on the machine that made it. So it
  cannot serve a call that reads test where it read val only, nor teach a run trained here; both
  are refused before anything trains. A result stored here is preferred; where it cannot serve
  (none, stale under ``overwrite``, or val only without its checkpoint) a taken one holding every
  metric of the study, with a test score where the run reads test, whatever the order of the
  files. With ``stored_only`` nothing trains: the call returns what is stored, so a stopped study
  can be written out and continued elsewhere.
* A stored result without one of the study's metrics is refused (trained again with
  ``overwrite``); so is, before anything trains, the folder of a run to train that holds a run
  of another config. Each result trained records the ``commit`` it trained on.
"""

from __future__ import annotations

import copy
import json
import os.path as osp
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mmengine.config import Config

from mlkd.apis.runs import (
    StaleResultError,
    evaluate_checkpoint,
    load_finished_run,
    save_finished_run,
    set_run_seed,
    train_and_evaluate,
)
from mlkd.apis.tasks import Task, run_tasks
from mlkd.models.builder import with_networks_resolved
from mlkd.utils.cli import load_config
from mlkd.utils.fingerprint import fingerprint
from mlkd.utils.output_policy import check_outputs
from mlkd.utils.run_logs import read_diagnostic_series

__all__ = [
    'ResultsFileError',
    'Study',
    'StudyRequestError',
    'StudyRun',
    'check_work_dirs',
    'missing_metrics',
    'run_identities',
    'run_study',
    'read_results_file',
    'read_test_on_checkpoint',
    'take_results',
]


class StudyRequestError(ValueError):
    """A study call that cannot run as asked (seeds, runs, jobs); nothing was trained."""


class ResultsFileError(ValueError):
    """A results file to take runs from is not one (:func:`take_results`)."""


@dataclass(frozen=True)
class StudyRun:
    """One run of a study, trained for every seed.

    Attributes:
        config: its config (a path or ``mlkd::<path under configs/>``).
        teacher: the run, declared before it, whose last checkpoint of the same seed it distils
            (``model.teacher_ckpt``); ``None`` for a run without a teacher.
        options: ``--cfg-options`` of this run, applied after the study's.
        test: also evaluate the test split (``False`` for a run that selects a setting on val).
    """

    config: str
    teacher: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    test: bool = True


@dataclass(frozen=True)
class Study:
    """A study declared by its runs (module doc).

    Attributes:
        name: what its error messages call it.
        runs: run name -> :class:`StudyRun`, teachers before the runs they teach.
        metrics: the val / test metrics every run reports (evaluator keys).
        options: ``--cfg-options`` applied to every run.
    """

    name: str
    runs: dict[str, StudyRun]
    metrics: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, (name, run) in enumerate(self.runs.items()):
            if run.teacher is not None and run.teacher not in list(self.runs)[:index]:
                raise ValueError(
                    f'{self.name}: run {name!r} is taught by {run.teacher!r}, which is not a run '
                    'declared before it'
                )

    def run_config(
        self,
        name: str,
        seed: int,
        work_dir: str,
        *,
        epochs: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Config:
        """The resolved config of run ``name`` for ``seed`` in the call's ``work_dir`` (module
        doc); ``epochs``: the same recipe shortened to that many epochs
        (:func:`shorten_schedule`); ``options``: the call's ``--cfg-options`` (keys checked),
        applied after the study's and the run's own."""
        run = self.runs[name]
        # merge_from_dict consumes the ``_delete_`` markers of the dicts it merges: give it copies.
        merged = copy.deepcopy({**self.options, **run.options, **(options or {})})
        cfg = load_config(run.config, merged)
        cfg.work_dir = osp.join(work_dir, f'seed{seed}', name)
        set_run_seed(cfg, seed)
        if epochs is not None:
            shorten_schedule(cfg, epochs)
        checkpoint = dict(cfg.default_hooks.checkpoint)
        cfg.default_hooks.checkpoint = dict(
            checkpoint, interval=cfg.train_cfg.max_epochs, max_keep_ckpts=1
        )
        return cfg


def shorten_schedule(cfg: Config, epochs: int) -> None:
    """The recipe of ``cfg`` over ``epochs`` epochs, in place: ``max_epochs`` and
    ``val_interval``, every scheduler's ``total_steps``, and its ``end`` where it ended later
    (for trying a study out; a study's numbers come from its configs' own schedules)."""
    if epochs < 1:
        raise StudyRequestError(f'--epochs must be at least 1, got {epochs}')
    by_iteration = [
        i for i, scheduler in enumerate(cfg.param_scheduler) if not scheduler.get('by_epoch', True)
    ]
    if by_iteration:
        raise StudyRequestError(
            f'--epochs shortens epoch-based schedules; param_scheduler[{by_iteration[0]}] of '
            f'{cfg.filename} counts iterations: shorten it with --cfg-options'
        )
    for scheduler in cfg.param_scheduler:
        if 'total_steps' in scheduler:
            scheduler['total_steps'] = epochs
        if scheduler.get('end') is not None:
            scheduler['end'] = min(scheduler['end'], epochs)
    cfg.train_cfg.update(max_epochs=epochs, val_interval=epochs)


def result_path(work_dir: str, seed: int, name: str) -> str:
    """Where run ``name`` of ``seed`` stores its result."""
    return osp.join(work_dir, f'seed{seed}', name, 'result.json')


def run_identities(
    study: Study,
    names: Sequence[str],
    seeds: Sequence[int],
    work_dir: str,
    *,
    epochs: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[tuple[str, int], dict]:
    """The identity of each run of ``names`` and ``seeds`` (module doc), by ``(name, seed)``: the
    resolved config as a dict, with a distilled run's ``model.teacher_ckpt`` replaced by
    ``'<run TEACHER: sha256 of its identity>'``."""
    identities: dict[tuple[str, int], dict] = {}
    for seed in seeds:
        for name in names:
            identity = with_networks_resolved(
                study.run_config(name, seed, work_dir, epochs=epochs, options=options)
            )
            teacher = study.runs[name].teacher
            if teacher is not None:
                digest = fingerprint(identities[(teacher, seed)])
                identity['model']['teacher_ckpt'] = f'<run {teacher}: {digest}>'
            identities[(name, seed)] = identity
    return identities


def train_run(job: dict, needs: dict, live_progress: bool) -> dict:
    """Task: train one run of one seed, evaluate its last weights and store its ``result.json``
    with the fingerprint of its identity and the commit it trained on. ``job``: ``study``,
    ``name``, ``seed``, ``work_dir``, ``epochs``, ``options``, ``identity``, ``verbose``,
    ``overwrite``, ``commit``; ``needs``: the teacher run's result (its ``checkpoint``). A run
    with ``LossDiagnosticsHook`` also stores its per-term records
    (:func:`~mlkd.utils.run_logs.read_diagnostic_series`) as ``diagnostics``."""
    study, name, seed = job['study'], job['name'], job['seed']
    run = study.runs[name]
    cfg = study.run_config(
        name, seed, job['work_dir'], epochs=job['epochs'], options=job['options']
    )
    if run.teacher is not None:
        cfg.model.teacher_ckpt = needs[('run', run.teacher, seed)]['checkpoint']
    result = train_and_evaluate(
        cfg,
        f'[seed {seed}] {name}',
        test=run.test,
        verbose=job['verbose'],
        progress=live_progress,
        overwrite=job['overwrite'],
        metrics=study.metrics,
    )
    if any(hook.get('type') == 'LossDiagnosticsHook' for hook in cfg.get('custom_hooks', [])):
        result['diagnostics'] = read_diagnostic_series(cfg.work_dir)
    result.update(seed=seed, commit=job['commit'], config_sha256=fingerprint(job['identity']))
    save_finished_run(result_path(job['work_dir'], seed, name), result, job['identity'])
    return result


def read_results_file(path: str) -> Any:
    """The content of a results file to take runs from.

    Raises:
        ResultsFileError: it cannot be read or is not JSON, naming it.
    """
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except OSError as error:
        raise ResultsFileError(f'{path}: {error.strerror}') from None
    except json.JSONDecodeError as error:
        raise ResultsFileError(f'{path}: not a JSON file ({error})') from None


def _checked_entries(source: str, results: Any) -> list[tuple[str, dict]]:
    """``(run, entry)`` of every entry of a results file's content; refuses a file that is not
    in :func:`~mlkd.apis.config_study.study_results`'s format, naming the run and index."""
    runs = results.get('results') if isinstance(results, Mapping) else None
    if not isinstance(runs, Mapping):
        raise ResultsFileError(f'{source}: not a study results file (no "results" mapping)')
    checked = []
    for name, entries in runs.items():
        if not isinstance(entries, list):
            raise ResultsFileError(f'{source}: results.{name} is not a list of runs')
        for index, entry in enumerate(entries):
            where = f'{source}: results.{name}[{index}]'
            if not isinstance(entry, Mapping):
                raise ResultsFileError(f'{where} is not a mapping')
            missing = [k for k in ('seed', 'val', 'cpu_seconds', 'config_sha256') if k not in entry]
            if missing:
                raise ResultsFileError(f'{where} lacks {missing}')
            wrong = [
                what
                for what, fits in (
                    ('an integer seed', isinstance(entry['seed'], int)),
                    ('a config_sha256 string', isinstance(entry['config_sha256'], str)),
                    ('val scores (a mapping)', isinstance(entry['val'], Mapping)),
                    ('test scores (a mapping)', isinstance(entry.get('test', {}), Mapping)),
                )
                if not fits
            ]
            if wrong:
                raise ResultsFileError(f'{where} lacks {" and ".join(wrong)}')
            checked.append((name, dict(entry)))
    return checked


def take_results(
    source: str,
    results: Any,
    identities: Mapping[tuple[str, int], Mapping],
    *,
    log: Callable[[str], None],
) -> dict[tuple[str, int], dict]:
    """The runs of ``results`` (a results file's content, in the format of
    :func:`~mlkd.apis.config_study.study_results`, read from ``source``) that a call may take:
    ``{(run, seed): result}`` for each entry whose run name, seed and ``config_sha256`` are those
    of one of ``identities`` (``{(run, seed): identity}``); :func:`run_study` chooses between them
    and what its work dir stores. A result has no checkpoint (``None``); ``taken_from`` says where
    it was read (``file``), the commit that trained it (the entry's ``commit``, else the file's)
    and where its checkpoint is (an entry taken already keeps its first ``taken_from``'s). An
    entry of another fingerprint is left and logged, naming both fingerprints; how many entries
    match of how many is logged. Nothing is written.

    Raises:
        ResultsFileError: ``results`` is not in that format, naming ``source``, run and index.
    """
    entries = _checked_entries(source, results)
    commit = (results.get('protocol') or {}).get('commit')
    taken = {}
    for name, entry in entries:
        seed = entry['seed']
        identity = identities.get((name, seed))
        if identity is None:
            continue  # a run or seed this call does not ask for
        expected = fingerprint(identity)
        if entry['config_sha256'] != expected:
            log(
                f'[seed {seed}] {name}: not taken from {source}: made by another config '
                f"(fingerprint {entry['config_sha256'][:12]}, this call's {expected[:12]})"
            )
            continue
        origin = entry.get('taken_from') or {}  # an entry taken already, by the call that wrote it
        stored = {k: v for k, v in entry.items() if k not in ('config_values', 'taken_from')}
        elsewhere = dict(
            file=source,
            commit=entry.get('commit') or origin.get('commit') or commit,
            checkpoint=origin.get('checkpoint') or entry.get('checkpoint'),
        )
        taken[(name, seed)] = dict(stored, checkpoint=None, taken_from=elsewhere)
    log(f'{source}: {len(taken)} of {len(entries)} runs match this call')
    return taken


#: How far a stored val score and the same checkpoint's val score evaluated again may differ (the
#: evaluation is deterministic; the stored value went through a float32 log scalar).
VAL_TOLERANCE = 1e-4


def read_test_on_checkpoint(job: dict, needs: dict, live_progress: bool) -> dict:
    """Task: complete a stored val-only result of a run (``job['stored']``) with its test scores,
    evaluated on its stored checkpoint (no training), and store it again. ``job`` and ``needs`` as
    for :func:`train_run`; the distiller of a distilled run is built on its teacher run's
    checkpoint, so that its test fidelity is against that teacher.

    Raises:
        StaleResultError: the checkpoint's val score evaluated again is not the stored one (the
            checkpoint is not the one that made the result), naming the file and both values.
    """
    study, name, seed, stored = job['study'], job['name'], job['seed'], job['stored']
    run = study.runs[name]
    cfg = study.run_config(
        name, seed, job['work_dir'], epochs=job['epochs'], options=job['options']
    )
    if run.teacher is not None:
        cfg.model.teacher_ckpt = needs[('run', run.teacher, seed)]['checkpoint']
    label = f'[seed {seed}] {name}'
    evaluated = evaluate_checkpoint(
        cfg, stored['checkpoint'], label, verbose=job['verbose'], metrics=study.metrics
    )
    path = result_path(job['work_dir'], seed, name)
    for key in study.metrics:  # run_study checked that the stored result holds them
        value = stored['val'][key]
        if abs(evaluated['val'][key] - value) > VAL_TOLERANCE:
            raise StaleResultError(
                f'{label}: {stored["checkpoint"]} evaluates to val {key} '
                f'{evaluated["val"][key]:.4f}, but {path} stores {value:.4f}: the checkpoint is '
                'not the one that made the result; --overwrite trains the run again'
            )
    result = dict(stored, test=evaluated['test'], test_from_checkpoint=True)
    fidelity = evaluated.get('fidelity', {}).get('test')
    if fidelity:
        result['fidelity'] = dict(result.get('fidelity', {}), test=fidelity)
    save_finished_run(path, result, job['identity'])
    return result


def _teacher_task(study: Study, name: str, seed: int) -> tuple:
    """The key of the task training the teacher run of ``name`` for ``seed`` (none: empty)."""
    teacher = study.runs[name].teacher
    return () if teacher is None else (('run', teacher, seed),)


def _report(seed: int, name: str) -> Callable[[dict, float], str]:
    def report(result: dict, seconds: float) -> str:
        scores = '  '.join(
            f'{split} {key} {value:.2f}'
            for split in ('val', 'test')
            for key, value in result.get(split, {}).items()
        )
        how = 'test read on its checkpoint; ' if result.get('test_from_checkpoint') else ''
        return f'[seed {seed}] {name}: {scores}  ({how}{result["cpu_seconds"]:.0f} s CPU)'

    return report


def check_teachers_here(
    study: Study, names: Sequence[str], seeds: Sequence[int], finished: Mapping[tuple, dict]
) -> None:
    """Refuse, before anything trains, a run to train whose teacher run is finished but whose
    checkpoint is not here (a run taken from elsewhere, or a deleted checkpoint): it would have
    no teacher to distil from.

    Raises:
        StaleResultError: naming the run, the seed and where the teacher's checkpoint was.
    """
    for seed in seeds:
        for name in names:
            teacher = study.runs[name].teacher
            if teacher is None or ('run', name, seed) in finished:
                continue
            result = finished.get(('run', teacher, seed))
            if result is not None and not osp.isfile(result.get('checkpoint') or ''):
                elsewhere = result.get('taken_from', {})
                where = elsewhere.get('checkpoint') or result.get('checkpoint')
                source = f' (taken from {elsewhere["file"]})' if elsewhere else ''
                raise StaleResultError(
                    f'{study.name}, run {name} of seed {seed}: its teacher run {teacher} is '
                    f'finished{source} but its checkpoint {where!r} is not on this machine; take '
                    f'{name} from a results file too, or train {teacher} here (without that '
                    'file, its stored result.json deleted)'
                )


def missing_metrics(result: Mapping, metrics: Sequence[str]) -> list[str]:
    """The ``split/metric`` of ``metrics`` a stored result lacks, on each split it holds."""
    return [
        f'{split}/{metric}'
        for split in ('val', 'test')
        if split in result
        for metric in metrics
        if metric not in result[split]
    ]


def _checkpoint_here(result: Mapping) -> bool:
    return osp.isfile(result.get('checkpoint') or '')


def check_work_dirs(
    study: Study,
    keys: Sequence[tuple[str, int]],
    finished: Mapping[tuple, dict],
    work_dir: str,
    *,
    epochs: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Refuse, before anything trains, a run of ``keys`` (``(run, seed)``) whose folder holds a
    run of another config (:func:`~mlkd.utils.work_dir.check_work_dir`): a run without a teacher,
    or whose teacher run is finished (its checkpoint is part of the config). A run whose teacher
    trains in this call is checked when it starts.

    Raises:
        WorkDirConflictError: naming the folder and the keys that differ.
    """
    from mlkd.utils.work_dir import check_work_dir

    for name, seed in keys:
        cfg = study.run_config(name, seed, work_dir, epochs=epochs, options=options)
        teacher = study.runs[name].teacher
        if teacher is not None:
            done = finished.get(('run', teacher, seed))
            if done is None:
                continue
            cfg.model.teacher_ckpt = done['checkpoint']
        check_work_dir(cfg)


def check_study_request(
    study: Study, seeds: Sequence[int], names: Sequence[str], jobs: int
) -> None:
    """Refuse a call that cannot run as asked, before anything is read or trained.

    Raises:
        StudyRequestError: naming the option at fault.
    """
    if jobs < 1:
        raise StudyRequestError(f'--jobs must be at least 1, got {jobs}')
    if not names or len(set(names)) != len(names):
        raise StudyRequestError(f'--runs must be distinct and at least one, got {list(names)}')
    if not seeds or any(seed < 0 for seed in seeds) or len(set(seeds)) != len(seeds):
        raise StudyRequestError(f'--seeds must be distinct and non-negative, got {list(seeds)}')
    unknown = [name for name in names if name not in study.runs]
    if unknown:
        raise StudyRequestError(f'{unknown} are not runs of {study.name} ({list(study.runs)})')
    for name in names:
        teacher = study.runs[name].teacher
        if teacher is not None and teacher not in names:
            raise StudyRequestError(f'run {name!r} needs its teacher run {teacher!r}')


def run_study(
    study: Study,
    work_dir: str,
    *,
    seeds: Sequence[int],
    runs: Sequence[str] | None = None,
    epochs: int | None = None,
    options: Mapping[str, Any] | None = None,
    jobs: int = 1,
    overwrite: bool = False,
    verbose: bool = False,
    outputs: Sequence[str] = (),
    reuse: Mapping[str, Any] | None = None,
    stored_only: bool = False,
    commit: str | None = None,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
) -> dict[int, dict[str, dict]]:
    """Train ``runs`` (default: all) of ``study`` for ``seeds`` in ``work_dir``, reusing the
    results stored for the same identities (module doc).

    Args:
        epochs: shorten every run's recipe to this many epochs (:func:`shorten_schedule`).
        options: ``--cfg-options`` applied to every run.
        jobs: runs trained side by side (worker processes); a run gives the same numbers
            whatever the number.
        overwrite: train again the runs whose stored result was made by another identity (and
            train them in their work dirs although these hold that other run).
        verbose: show the training logs.
        outputs: the files the caller writes from the results: refused before any training where
            they exist, unless ``overwrite`` (checked after the stored results, so that a stale
            result is what a call is refused for first).
        reuse: results made elsewhere, ``{file name: its content}`` in the format of
            :func:`~mlkd.apis.config_study.study_results` (:func:`take_results`), stored in
            ``work_dir`` once nothing refuses the call (returned only, with ``stored_only``); with
            ``overwrite`` a taken run replaces a stale one stored here rather than training it.
        stored_only: train and evaluate nothing, return what is stored (a run without the test
            score it needs is left out, logged).
        commit: the code the runs train with, stored in each result trained (default: the
            checkout's HEAD now; a caller reads it before anything starts).

    Returns:
        ``{seed: {run: result}}``; a result is :func:`~mlkd.apis.runs.train_and_evaluate`'s
        (``val``, ``test``, ``seconds``, ``cpu_seconds``, ``checkpoint``, ...) with ``seed`` and
        ``config_sha256`` (the fingerprint of its identity). With ``stored_only`` the runs not
        stored are left out (a seed none of whose runs is stored maps to ``{}``).

    Raises:
        StudyRequestError: a call that cannot run as asked (nothing trained).
        StaleResultError: a stored result of another identity, without one of the study's
            metrics, or without the test score its run now needs and without its checkpoint,
            without ``overwrite`` (nothing trained);
            a checkpoint whose val score is not its stored result's (:func:`read_test_on_checkpoint`);
            a run to train whose teacher run's checkpoint is not here (taken from elsewhere, or
            deleted).
        ResultsFileError: a file of ``reuse`` is not a results file (nothing stored or trained).
        OutputExistsError: one of ``outputs`` exists, without ``overwrite`` (nothing trained).
        WorkDirConflictError: the folder of a run to train holds a run of another config,
            without ``overwrite`` (nothing trained; for a run whose teacher trains in this call,
            found when it starts).
    """
    names, seeds = list(study.runs if runs is None else runs), list(seeds)
    check_study_request(study, seeds, names, jobs)
    names = [name for name in study.runs if name in names]  # teachers first, as declared
    identities = run_identities(study, names, seeds, work_dir, epochs=epochs, options=options)
    candidates: dict[tuple[str, int], list[dict]] = {}
    for source, results in (reuse or {}).items():
        for key, result in take_results(source, results, identities, log=log).items():
            candidates.setdefault(key, []).append(result)
    finished, untested, taken = {}, {}, {}
    for (name, seed), identity in identities.items():  # every stored result, before training
        path = result_path(work_dir, seed, name)
        what = f'{study.name}, run {name} of seed {seed}'
        needs_test = study.runs[name].test
        result = load_finished_run(path, identity, what=what, overwrite=overwrite)
        if result is not None and (gaps := missing_metrics(result, study.metrics)):
            if not overwrite:
                raise StaleResultError(
                    f'{what}: {path} stores no {gaps} (made by a call that reported other '
                    'metrics); --overwrite trains it again'
                )
            result = None
        if result is None or (needs_test and 'test' not in result and not _checkpoint_here(result)):
            # A result made elsewhere: one with every metric, with test where the run reads it.
            usable = [
                c for c in candidates.get((name, seed), []) if not missing_metrics(c, study.metrics)
            ]
            pick = next((c for c in usable if 'test' in c or not needs_test), None)
            pick = pick or (usable[0] if usable and result is None else None)
            if pick is not None:
                result, path = pick, pick['taken_from']['file']
                taken[(name, seed)] = pick
        # Whether a run read test is not part of its identity (module doc).
        if result is not None and needs_test and 'test' not in result:
            checkpoint = result.get('checkpoint')
            if stored_only:
                log(f'[seed {seed}] {name}: {path} has no test score; left out (stored only)')
                continue
            if _checkpoint_here(result):
                untested[(name, seed)] = result
                log(f'[seed {seed}] {name}: reads test on the checkpoint of {path}')
                continue
            if not overwrite:
                gone = (
                    'is on the machine that made it'
                    if 'taken_from' in result
                    else f'{checkpoint!r} is gone'
                )
                raise StaleResultError(
                    f'{what}: {path} has no test score (stored by a call that read val only) '
                    f'and its checkpoint {gone}; read val only (--val-only), '
                    'or --overwrite trains it again'
                )
            result = None
        if result is not None:
            finished[('run', name, seed)] = result
            how = 'taken from' if (name, seed) in taken else 'reused'
            log(f'[seed {seed}] {name}: {how} {path}')
    check_outputs(outputs, overwrite=overwrite)
    if stored_only:
        return {
            seed: {
                name: finished[key] for name in names if (key := ('run', name, seed)) in finished
            }
            for seed in seeds
        }
    check_teachers_here(study, names, seeds, finished)
    to_train = [key for key in identities if ('run', *key) not in finished and key not in untested]
    if not overwrite:
        check_work_dirs(study, to_train, finished, work_dir, epochs=epochs, options=options)
    for (name, seed), result in taken.items():  # nothing refuses the call any more
        if ('run', name, seed) in finished:
            save_finished_run(result_path(work_dir, seed, name), result, identities[(name, seed)])
    if commit is None:
        from mlkd.apis.benchmark import git_commit

        commit = git_commit()
    tasks = [
        Task(
            ('run', name, seed),
            train_run if (name, seed) not in untested else read_test_on_checkpoint,
            dict(
                study=study,
                name=name,
                seed=seed,
                work_dir=work_dir,
                epochs=epochs,
                options=options,
                identity=identities[(name, seed)],
                verbose=verbose,
                overwrite=overwrite,
                stored=untested.get((name, seed)),
                commit=commit,
            ),
            after=_teacher_task(study, name, seed),
            name=f'[seed {seed}] {name}',
            report=_report(seed, name),
        )
        for seed in seeds
        for name in names
    ]
    done = run_tasks(tasks, jobs, finished, log=log)
    return {seed: {name: done[('run', name, seed)] for name in names} for seed in seeds}
