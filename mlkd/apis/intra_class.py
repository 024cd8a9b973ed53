"""The bundled-data studies of the intra-class contrastive teacher (configs/intra_class/README.md,
"Study on MultiDigits", "Study on DigitObjects") and the validation search of their KD+RKD runs'
RKD weight, each a :class:`~mlkd.apis.study.Study` (results reused only for the config that made
them).

"Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous ICLR
submission) claims that a teacher trained with ``CE + λ·L_intra`` teaches better than a plain
one. For each seed a study (:func:`intra_class_study`) trains, on the single-label data of its
config folder (:data:`CONFIG_FOLDERS`: ``configs/intra_class/multidigits/``, 10 classes, or
``configs/intra_class/digit_objects/``, 100): the plain teacher (``teacher.py``) and the intra-class
contrastive teacher (``teacher_intra_class.py``, λ = 0.02); the student alone (``student.py``);
from each teacher of the same seed, the student with KD (``kd.py`` / ``ours.py``) and with KD + RKD
(``kd_rkd.py`` / ``ours_rkd.py``, at the RKD weight chosen on val by the search). Every run's
last weights are evaluated on val and test (top-1); the protocol is fixed in the configs, nothing
is selected on test (``val_only``: no run reads test, for choosing a regime on val).
:func:`run_intra_class_study` reports the mean ± std over seeds per arm and the paired
differences (same seed) with a 95 % Student-t interval.

:func:`run_rkd_search` trains, instead, the KD+RKD run from the plain teacher at several RKD
weights (times the paper's, ``kd_rkd_paper_weight.py``) on every seed, reads val only (top-1 and
agreement with the teacher, ``DistillFidelity``) and records each loss term's weighted value and
gradient norm on the student (``LossDiagnosticsHook``); the plain teacher and the student alone
are the study's own runs. The chosen weight is the one of the highest mean val top-1.

``tools/analysis_tools/intra_class_study.py`` is their command line;
:mod:`mlkd.apis.intra_class_report` writes their tables and charts.
"""

from __future__ import annotations

import os.path as osp
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from mlkd.apis.intra_class_report import (
    FIDELITY_COLUMNS,
    SPLITS,
    write_fidelity_outputs,
    write_search_outputs,
    write_study_outputs,
)
from mlkd.apis.study import Study, StudyRequestError, StudyRun, run_study
from mlkd.apis.study_fidelity import fidelity_to_teacher
from mlkd.utils.cli import load_config
from mlkd.utils.stats import paired_differences
from mlkd.utils.tables import mean_std

__all__ = [
    'CONFIG_FOLDERS',
    'INTRA_CLASS',
    'chosen_weight',
    'intra_class_study',
    'run_intra_class_study',
    'run_rkd_search',
    'search_study',
    'split_rkd',
    'study_fidelity',
    'summarize',
    'summarize_fidelity',
    'summarize_search',
]

#: The metric of every run (top-1, %).
METRIC = 'accuracy/top1'
#: The studies' data -> the folder of their configs (``teacher.py``, ``teacher_intra_class.py``,
#: ``student.py``, ``kd.py``, ``ours.py``, ``kd_rkd.py``, ``ours_rkd.py`` and the search's
#: ``kd_rkd_paper_weight.py``).
CONFIG_FOLDERS = {
    'multidigits': 'mlkd::intra_class/multidigits',  # 10 classes, 1,000 training images
    'digit_objects': 'mlkd::intra_class/digit_objects',  # 100 classes, 20,000 training images
}
#: How the tables and charts name each data.
DATA_NAMES = {'multidigits': 'MultiDigits', 'digit_objects': 'DigitObjects'}
#: Many short runs, one core each: the loaders read in the training process.
IN_PROCESS_LOADERS = {
    f'{loader}.{key}': value
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader')
    for key, value in (('num_workers', 0), ('persistent_workers', False))
}
OUTPUTS = ('md', 'csv', 'png', 'json')
STUDY_NAME = 'intra_class_study'


def _folder(data: str) -> str:
    if data not in CONFIG_FOLDERS:
        raise StudyRequestError(f'--data: one of {sorted(CONFIG_FOLDERS)}, got {data!r}')
    return CONFIG_FOLDERS[data]


#: Each run of a study: its config in the data's folder and the run that teaches it.
RUNS = {
    'teacher': ('teacher.py', None),
    'teacher_intra_class': ('teacher_intra_class.py', None),
    'student': ('student.py', None),
    'kd': ('kd.py', 'teacher'),
    'ours': ('ours.py', 'teacher_intra_class'),
    'kd_rkd': ('kd_rkd.py', 'teacher'),
    'ours_rkd': ('ours_rkd.py', 'teacher_intra_class'),
}


def intra_class_study(data: str = 'multidigits', *, test: bool = True) -> Study:
    """The study on ``data`` (a key of :data:`CONFIG_FOLDERS`); ``test=False``: no run is
    evaluated on test (the val-only call that chooses a regime)."""
    configs = _folder(data)
    return Study(
        name=f'the intra-class study ({data})',
        runs={
            name: StudyRun(f'{configs}/{config}', teacher=teacher, test=test)
            for name, (config, teacher) in RUNS.items()
        },
        metrics=(METRIC,),
        options=IN_PROCESS_LOADERS,
    )


#: The study on MultiDigits (its run names are every study's).
INTRA_CLASS = intra_class_study()
#: The arm label of each run in the tables.
LABELS = {
    'teacher': 'plain teacher',
    'teacher_intra_class': 'intra-class teacher',
    'student': 'student alone',
    'kd': 'KD ← plain teacher',
    'ours': 'KD ← intra-class teacher ("Ours")',
    'kd_rkd': 'KD+RKD ← plain teacher',
    'ours_rkd': 'KD+RKD ← intra-class teacher ("Ours+RKD")',
}
#: Paired comparisons: (label, treated run, control run).
PAIRS = [
    ('teacher: intra-class − plain', 'teacher_intra_class', 'teacher'),
    ('KD student: from intra-class − from plain', 'ours', 'kd'),
    ('KD+RKD student: from intra-class − from plain', 'ours_rkd', 'kd_rkd'),
    ('KD ← plain teacher − student alone', 'kd', 'student'),
    ('KD+RKD ← plain teacher − student alone', 'kd_rkd', 'student'),
    ('KD+RKD ← intra-class teacher − student alone', 'ours_rkd', 'student'),
]


def _print(line: str) -> None:
    print(line, flush=True)


def check_seeds(seeds: Sequence[int]) -> None:
    """Raises StudyRequestError unless ``seeds`` holds two distinct seeds or more (a paired
    interval needs two)."""
    if len(set(seeds)) != len(seeds) or len(seeds) < 2:
        raise StudyRequestError(f'--seeds: give at least two distinct seeds, got {list(seeds)}')


def output_files(out_dir: str, name: str, extensions: Sequence[str] = OUTPUTS) -> dict[str, str]:
    """``{extension: <out_dir>/<name>.<extension>}`` of the files a call writes."""
    return {extension: osp.join(out_dir, f'{name}.{extension}') for extension in extensions}


def paired_interval(treated: list[float], control: list[float]) -> tuple[float, float, float]:
    """Mean of ``treated − control`` (paired) and its 95 % Student-t interval."""
    paired = paired_differences(treated, control)
    return paired.mean, paired.low, paired.high


def summarize(
    results: dict[str, dict[str, dict[str, float]]],
    seeds: Sequence[int],
    splits: Sequence[str] = SPLITS,
) -> tuple[list[dict], list[dict]]:
    """Per-arm rows (``arm``, ``run`` and the per-seed values of each split) and paired rows
    (``comparison`` and, per split, the mean difference and its interval) from
    ``results[str(seed)][run][split]`` (top-1, %) for each of ``splits``; the arms the results
    hold (a call of some runs: those), and the pairs of two of them."""
    keys = [str(s) for s in seeds]
    ran = [run for run in RUNS if run in results[keys[0]]]
    arms = [
        {'arm': LABELS[run], 'run': run, **{s: [results[k][run][s] for k in keys] for s in splits}}
        for run in ran
    ]
    pairs = [
        {
            'comparison': label,
            **{
                s: paired_interval(
                    [results[k][treated][s] for k in keys], [results[k][control][s] for k in keys]
                )
                for s in splits
            },
        }
        for label, treated, control in PAIRS
        if treated in ran and control in ran
    ]
    return arms, pairs


def _top1(result: dict, splits: Sequence[str] = SPLITS) -> dict:
    """A run's result as the study's JSON holds it: the top-1 of each of ``splits`` it evaluated,
    its CPU time and the fingerprint of its identity."""
    kept = {split: result[split][METRIC] for split in splits if split in result}
    return dict(kept, cpu_seconds=result['cpu_seconds'], config_sha256=result['config_sha256'])


def _run_study_for_outputs(
    study: Study,
    name: str,
    work_dir: str,
    out_dir: str,
    seeds: Sequence[int],
    call: dict,
    extra: Sequence[str] = (),
) -> tuple[dict, dict[str, str], dict]:
    """Check ``seeds``, run ``study`` (``call``: :func:`~mlkd.apis.study.run_study`'s keyword
    arguments) with ``<out_dir>/<name>.{md,csv,png,json}`` and the ``extra`` files checked before
    any training; return its results, those paths and the policy they are written under
    (``overwrite``, ``log``)."""
    check_seeds(seeds)
    outputs = output_files(out_dir, name)
    checked = [*outputs.values(), *extra]
    runs = run_study(study, work_dir, seeds=seeds, outputs=checked, **call)
    policy = dict(overwrite=call.get('overwrite', False), log=call.get('log', _print))
    return runs, outputs, policy


def run_intra_class_study(
    work_dir: str,
    out_dir: str,
    *,
    seeds: Sequence[int],
    data: str = 'multidigits',
    val_only: bool = False,
    fidelity: bool = False,
    **call: Any,
) -> tuple[list[dict], list[dict]]:
    """Train (or reuse) the study on ``data`` (:func:`intra_class_study`) for ``seeds`` in
    ``work_dir`` and write ``intra_class_study.{md,csv,png,json}`` to ``out_dir`` (refused before
    any training where they exist, unless ``overwrite``). ``val_only``: no run reads test, and the
    files are ``intra_class_study_val.*`` with val columns only (the call that chooses a regime;
    a later call that reads test in the same work dir evaluates test on those runs' checkpoints,
    :func:`~mlkd.apis.study.run_study`). ``fidelity``: also the test fidelity of every student
    to both teachers (:func:`study_fidelity`), written to ``intra_class_fidelity.{md,json}``.

    Args:
        call: the keyword arguments of :func:`~mlkd.apis.study.run_study` (``runs``: some arms
            only, with their teachers, and the tables of those; ``epochs``, ``options``,
            ``jobs``, ``overwrite``, ``verbose``, ``log``).

    Returns:
        :func:`summarize`'s arms and pairs.

    Raises:
        StudyRequestError: fewer than two distinct seeds, unknown ``data``, or see
            :func:`run_study`.
        StaleResultError, OutputExistsError: see :func:`run_study` (nothing trained).
    """
    if fidelity and val_only:
        raise StudyRequestError('--fidelity reads test: it cannot go with --val-only')
    if fidelity and call.get('runs') is not None:
        raise StudyRequestError('--fidelity measures every arm: it cannot go with --runs')
    study = intra_class_study(data, test=not val_only)
    outputs_name = f'{STUDY_NAME}_val' if val_only else STUDY_NAME
    extra = output_files(out_dir, FIDELITY_NAME, ('md', 'json')) if fidelity else {}
    runs, outputs, policy = _run_study_for_outputs(
        study, outputs_name, work_dir, out_dir, seeds, call, extra=list(extra.values())
    )
    splits = ('val',) if val_only else SPLITS
    results = {
        str(seed): {name: _top1(r, splits) for name, r in runs[seed].items()} for seed in seeds
    }
    arms, pairs = summarize(results, seeds, splits)
    write_study_outputs(outputs, results, arms, pairs, seeds, **policy)
    if fidelity:
        scores = study_fidelity(study, runs, work_dir, seeds, call)
        write_fidelity_outputs(extra, scores, summarize_fidelity(scores, seeds), seeds, **policy)
    return arms, pairs


#: Test fidelity: each teacher run of the study, with the distilled run it taught in whose config
#: a student's fidelity to it is measured (:mod:`mlkd.apis.study_fidelity`), and the students.
FIDELITY_TEACHERS = {'teacher': 'kd', 'teacher_intra_class': 'ours'}
FIDELITY_STUDENTS = ('student', 'kd', 'ours', 'kd_rkd', 'ours_rkd')
FIDELITY_NAME = 'intra_class_fidelity'
#: The keys of the single-label fidelity (``DistillFidelity``) the study reports.
FIDELITY_KEYS = tuple(FIDELITY_COLUMNS)


def study_fidelity(
    study: Study,
    runs: Mapping[int, Mapping[str, dict]],
    work_dir: str,
    seeds: Sequence[int],
    call: Mapping[str, Any],
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """``{str(seed): {student: {teacher: fidelity keys}}}`` on test, of every run of
    :data:`FIDELITY_STUDENTS` to both teachers of its seed (``runs``: :func:`run_study`'s
    results; ``call``: its keyword arguments)."""
    log = call.get('log', _print)
    return {
        str(seed): {
            student: {
                teacher: fidelity_to_teacher(
                    study,
                    runs[seed],
                    work_dir,
                    seed,
                    student,
                    teacher,
                    via,
                    epochs=call.get('epochs'),
                    options=call.get('options'),
                    log=log,
                )
                for teacher, via in FIDELITY_TEACHERS.items()
            }
            for student in FIDELITY_STUDENTS
        }
        for seed in seeds
    }


def summarize_fidelity(scores: Mapping, seeds: Sequence[int]) -> list[dict]:
    """Per student and teacher: the per-seed values of each of :data:`FIDELITY_KEYS` and, for a
    distilled student, the paired difference from the student alone (to the same teacher)."""
    keys = [str(s) for s in seeds]
    rows = []
    for student in FIDELITY_STUDENTS:
        for teacher in FIDELITY_TEACHERS:
            values = {k: [scores[s][student][teacher][k] for s in keys] for k in FIDELITY_KEYS}
            alone = {k: [scores[s]['student'][teacher][k] for s in keys] for k in FIDELITY_KEYS}
            paired = (
                {k: paired_interval(values[k], alone[k]) for k in FIDELITY_KEYS}
                if student != 'student'
                else None
            )
            rows.append(
                dict(
                    student=LABELS[student],
                    teacher=LABELS[teacher],
                    values=values,
                    paired=paired,
                )
            )
    return rows


# ----------------------------------------------------------------------------- RKD weight search
#: The RKD loss of the KD+RKD configs, and the terms it is split into for the search's
#: diagnostics: RKDLoss(d, a) = RKDLoss(d, 0) + RKDLoss(0, a), the same loss.
RKD_LOSS = 'rkd'
RKD_TERMS = {'rkd_distance': dict(angle_weight=0.0), 'rkd_angle': dict(distance_weight=0.0)}
#: The config (in the data's folder) whose RKD weight the searched weight multiplies (the paper's:
#: distance 25, angle 50, loss weight 1), the study's run that teaches the searched runs (the plain
#: teacher) and the study's run they are compared with (the student alone).
SEARCH_CONFIG = 'kd_rkd_paper_weight.py'
SEARCH_TEACHER, SEARCH_BASELINE = 'teacher', 'student'
SEARCH_NAME = 'intra_class_rkd_search'
#: Log keys of the terms, in plotting order.
TERM_KEYS = ('loss_cls', 'loss_kd', 'loss_rkd_distance', 'loss_rkd_angle')
#: The search's agreement with the teacher: top-1 agreement on val (DistillFidelity).
AGREEMENT = 'fidelity/top1_agreement'


def split_rkd(distill_losses: Mapping, weight: float) -> dict:
    """``distill_losses`` with ``rkd`` scaled by ``weight`` and split into its distance and angle
    terms (``rkd_distance``, ``rkd_angle``), so that each term's gradient is logged on its own."""
    losses = {k: dict(v) for k, v in distill_losses.items() if k != RKD_LOSS}
    rkd = dict(distill_losses[RKD_LOSS])
    rkd['loss_weight'] = rkd.get('loss_weight', 1.0) * weight
    for name, zeroed in RKD_TERMS.items():
        losses[name] = dict(rkd, **zeroed)
    return losses


def search_run_name(weight: float) -> str:
    return f'rkd_w{weight:g}'


def search_study(
    weights: Sequence[float], interval: int, data: str = 'multidigits', *, val_only: bool = False
) -> Study:
    """The search as a study: the study's plain teacher and student alone (the same runs, so
    their results are shared), and per weight KD+RKD from that teacher at ``weight`` times the
    paper's RKD weight, its RKD split into terms (:func:`split_rkd`), with ``LossDiagnosticsHook``
    every ``interval`` iterations on all the student's parameters and ``DistillFidelity`` on val;
    val only; on ``data`` (a key of :data:`CONFIG_FOLDERS`). ``val_only``: the shared runs do not
    read test either (those of a val-only study call)."""
    config = f'{_folder(data)}/{SEARCH_CONFIG}'
    cfg = load_config(config)
    evaluators = cfg.val_evaluator
    evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
    common = {
        'custom_hooks': [
            *cfg.custom_hooks,
            dict(type='LossDiagnosticsHook', interval=interval, module='student'),
        ],
        'val_evaluator': [*evaluators, dict(type='DistillFidelity', mode='single_label')],
    }
    cells = {
        search_run_name(weight): StudyRun(
            config,
            teacher=SEARCH_TEACHER,
            test=False,
            options={
                **common,
                'model.distill_losses': dict(
                    split_rkd(cfg.model.distill_losses.to_dict(), weight), _delete_=True
                ),
            },
        )
        for weight in weights
    }
    study = intra_class_study(data, test=not val_only)
    runs = {name: study.runs[name] for name in (SEARCH_TEACHER, SEARCH_BASELINE)}
    return Study(f'the RKD weight search ({data})', {**runs, **cells}, study.metrics, study.options)


def _search_cell(result: dict) -> dict:
    """A search run's result as the search's JSON holds it: val top-1, agreement with the teacher,
    the diagnostic steps and, per term of :data:`TERM_KEYS`, its weighted value and gradient norm
    at each."""
    series = result['diagnostics']
    terms = {
        term: {stat: series['terms'][term][stat] for stat in ('value', 'grad_norm')}
        for term in TERM_KEYS
    }
    return {
        'val': result['val'][METRIC],
        'agreement': result['fidelity']['val'][AGREEMENT],
        'steps': series['steps'],
        'terms': terms,
        'cpu_seconds': result['cpu_seconds'],
        'config_sha256': result['config_sha256'],
    }


def summarize_search(
    search: dict, baseline: dict, seeds: Sequence[int], weights: Sequence[float]
) -> list[dict]:
    """One row per weight from ``search[str(seed)][f'{weight:g}']`` and ``baseline[str(seed)]``
    (the student alone's val top-1): val top-1 per seed, the paired difference to the student
    alone with its 95 % t-interval, the agreement with the teacher per seed, and per term the
    median (over the diagnostic steps of every seed) of its weighted value and gradient norm."""
    rows = []
    for weight in weights:
        cells = [search[str(s)][f'{weight:g}'] for s in seeds]
        row = {
            'weight': weight,
            'val': [c['val'] for c in cells],
            'agreement': [c['agreement'] for c in cells],
            'vs_student': paired_interval(
                [c['val'] for c in cells], [baseline[str(s)] for s in seeds]
            ),
        }
        for term in TERM_KEYS:
            for stat in ('value', 'grad_norm'):
                values = [v for c in cells for v in c['terms'][term][stat]]
                row[f'{term}/{stat}'] = statistics.median(values)
        rows.append(row)
    return rows


def chosen_weight(rows: list[dict]) -> float:
    """The rule fixed before the search ran: the weight of the highest mean val top-1."""
    return max(rows, key=lambda row: mean_std(row['val'])[0])['weight']


def run_rkd_search(
    work_dir: str,
    out_dir: str,
    *,
    seeds: Sequence[int],
    weights: Sequence[float],
    interval: int = 8,
    data: str = 'multidigits',
    val_only: bool = False,
    **call: Any,
) -> list[dict]:
    """Train (or reuse) the search (:func:`search_study`) for ``seeds`` in ``work_dir`` and write
    ``intra_class_rkd_search.{md,csv,png,json}`` to ``out_dir``; ``call`` as for
    :func:`run_intra_class_study`. Returns :func:`summarize_search`'s rows.

    Raises:
        StudyRequestError: repeated or non-positive weights, fewer than two distinct seeds, or
            see :func:`~mlkd.apis.study.run_study`.
    """
    weights = list(weights)
    if len(set(weights)) != len(weights) or min(weights, default=0) <= 0:
        raise StudyRequestError(
            f'--search-rkd-weights: give distinct positive weights, got {weights}'
        )
    study = search_study(weights, interval, data, val_only=val_only)
    runs, outputs, policy = _run_study_for_outputs(
        study, SEARCH_NAME, work_dir, out_dir, seeds, call
    )
    search = {
        str(seed): {f'{w:g}': _search_cell(runs[seed][search_run_name(w)]) for w in weights}
        for seed in seeds
    }
    student = {str(seed): runs[seed][SEARCH_BASELINE]['val'][METRIC] for seed in seeds}
    rows = summarize_search(search, student, seeds, weights)
    chosen = chosen_weight(rows)
    write_search_outputs(
        outputs, rows, search, student, seeds, chosen, data=DATA_NAMES[data], **policy
    )
    return rows
