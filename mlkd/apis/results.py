"""Collect the results of many runs into one table (the format of the method READMEs).

A run is a folder holding ``<timestamp>/vis_data/scalars.json`` and the config mmengine dumped
(``<config name>.py``). Teacher, student, method (the names of the distillation terms, as in the
``loss_<name>`` log keys) and seed (the value at the config's ``seed_key``, ``randomness.seed``
unless the config names another: :func:`mlkd.apis.runs.seed_key_of`) are read from that config.
Runs of the same config, teacher, student and method are one row: every number is the mean ±
sample std over their seeds, and they must be seeds of one setting: their configs have the same
:func:`~mlkd.utils.fingerprint.fingerprint` once the seed, the location keys and where the
teacher's outputs are cached (:data:`TEACHER_CACHE_LOCATION`) are left out.
"last" is the metric of the last evaluated epoch, "best" the highest over epochs (the epoch it came
from is in the per-run table). Wall time runs from each timestamp folder's creation to the last
write of its log.

``tools/analysis_tools/collect_results.py`` is its command line.
"""

from __future__ import annotations

import os.path as osp
from collections import defaultdict
from dataclasses import dataclass

from mlkd.apis.runs import seed_key_of, seed_keys_of
from mlkd.utils.fingerprint import (
    LOCATION_KEYS,
    config_differences,
    config_leaves,
    flatten_config,
    values_fingerprint,
)
from mlkd.utils.run_logs import RunLog, dumped_config_path, read_run_log
from mlkd.utils.tables import format_mean_std, format_seconds, mean_std

__all__ = ['Run', 'group_runs', 'grouped_table', 'per_run_table', 'read_run']

#: Where a run's teacher outputs are cached, and whether it writes or reads them: a run that
#: reads them computes what the live teacher would (docs/teacher_cache.md), so seeds of one setting
#: may differ there (a benchmark gives each seed its own cache, ``seed<S>/teacher_cache``).
TEACHER_CACHE_LOCATION = ('model.teacher_cache.dir', 'model.teacher_cache.mode')

NONE = '-'


def describe_model(model) -> str:
    """A short name for a model given as a config path, ``dict(cfg_path=...)`` or a model dict."""
    if isinstance(model, str):
        return osp.splitext(osp.basename(model))[0]
    if not isinstance(model, dict):
        return NONE
    if 'cfg_path' in model:
        extra = '+overrides' if len(model) > 1 else ''
        return osp.splitext(osp.basename(model['cfg_path']))[0] + extra
    backbone = model.get('backbone') or {}
    name = backbone.get('type', model.get('type', NONE))
    for size_key in ('depth', 'arch', 'widen_factor'):
        if size_key in backbone:
            return f'{name}-{backbone[size_key]}'
    return name


@dataclass
class Run:
    """One run read from its work dir (:func:`read_run`)."""

    work_dir: str
    config: str
    teacher: str
    student: str
    method: str
    seed: int | None
    log: RunLog
    #: the fingerprint of the dumped config without the seed and the location keys (what seeds
    #: of one setting share)
    setting: str
    #: that config flattened (to name what differs)
    setting_values: dict[str, str]

    def metric(self, key: str) -> tuple[float | None, tuple[int, float] | None]:
        """(value at the last evaluated step, (step, value) of the best step) of ``key``: the
        highest, or the lowest for a metric where lower is better (:func:`lower_is_better`)."""
        points = self.log.eval_series(key)
        if not points:
            return None, None
        pick = min if lower_is_better(key) else max
        return points[-1][1], pick(points, key=lambda point: point[1])

    @property
    def last_epoch(self) -> int | None:
        # the last step with the run's own metrics (prefixed keys such as teacher/mAP are not)
        steps = [
            line['step']
            for line in self.log.evals
            if any('/' not in k and k != 'step' for k in line)
        ]
        return steps[-1] if steps else None


#: Evaluation keys (their last part) where a lower value is the better one besides the losses
#: (``loss*``): the student's distance to its teacher (DistillFidelity's kl and mean_abs_diff).
LOWER_IS_BETTER = ('kl', 'mean_abs_diff')


def lower_is_better(key: str) -> bool:
    """Whether the best value of evaluation ``key`` is its lowest (:data:`LOWER_IS_BETTER`)."""
    last = key.rsplit('/', 1)[-1]
    return last in LOWER_IS_BETTER or last.startswith('loss')


def read_run(work_dir: str) -> Run:
    """The run in ``work_dir``: its dumped config and its merged scalar log."""
    from mmengine.config import Config

    config_file = dumped_config_path(work_dir)
    cfg = Config.fromfile(config_file)
    model = cfg.get('model', {})
    log = read_run_log(work_dir)
    losses = model.get('distill_losses')
    teachers = model.get('teachers') or {}
    if teachers:  # a multi-teacher distiller: each teacher's network and losses
        teacher = ' + '.join(describe_model(entry.get('network')) for entry in teachers.values())
        student = describe_model(model.get('student'))
        names = list(
            dict.fromkeys(n for e in teachers.values() for n in e.get('distill_losses') or {})
        )
        method = '+'.join(method_terms(names, log.train_keys())) or NONE
    elif losses:
        teacher = describe_model(model.get('teacher'))
        student = describe_model(model.get('student'))
        method = '+'.join(method_terms(list(losses), log.train_keys()))
    else:
        teacher, student, method = NONE, describe_model(model), NONE
    seed_key = seed_key_of(cfg)
    # What seeds of one setting may differ in: where the run was, its seed, its teacher cache.
    ignored = (*LOCATION_KEYS, *seed_keys_of(cfg), *TEACHER_CACHE_LOCATION)
    values = flatten_config(cfg, ignore=ignored)
    return Run(
        work_dir,
        osp.splitext(osp.basename(config_file))[0],
        teacher,
        student,
        method,
        config_leaves(cfg, ignore=()).get(seed_key),
        log,
        values_fingerprint(values),
        values,
    )


def method_terms(names: list[str], logged_keys: list[str]) -> list[str]:
    """Distillation term names in the order the run logged ``loss_<name>`` (the dumped config
    sorts its keys); names never logged go last, alphabetically."""

    def position(name: str) -> tuple[int, str]:
        for index, key in enumerate(logged_keys):
            if key == f'loss_{name}' or key.startswith(f'loss_{name}_'):
                return index, name
        return len(logged_keys), name

    return sorted(names, key=position)


def group_runs(runs: list[Run], allow_mixed: bool = False) -> list[list[Run]]:
    """Runs of one config, teacher, student and method, seeds in order.

    Raises:
        ValueError: two runs of a group differ in anything but the seed (another setting or
            protocol that the row would average as if it were a seed), naming both work dirs and
            the keys; ``allow_mixed`` averages them anyway.
    """
    groups: dict[tuple, list[Run]] = defaultdict(list)
    for run in runs:
        groups[(run.config, run.teacher, run.student, run.method)].append(run)
    if not allow_mixed:
        for group in groups.values():
            other = next((r for r in group[1:] if r.setting != group[0].setting), None)
            if other is not None:
                raise ValueError(
                    f'runs {group[0].work_dir!r} and {other.work_dir!r} (config '
                    f'{group[0].config}) differ in more than the seed, so they are not seeds of '
                    'one setting: '
                    f'{config_differences(group[0].setting_values, other.setting_values)}; '
                    'collect them separately, or pass --allow-mixed to average them anyway'
                )
    return [
        sorted(group, key=lambda r: (r.seed is None, r.seed or 0, r.work_dir))
        for group in groups.values()
    ]


def grouped_table(groups: list[list[Run]], metrics: list[str]) -> tuple[list, list, list, list]:
    """Header and rows for printing, header and rows for the CSV (numbers unformatted)."""
    header = ['config', 'teacher', 'student', 'method', 'seeds', 'epochs']
    csv_header = header + ['runs']
    for key in metrics:
        header += [f'{key} (last)', f'{key} (best)']
        csv_header += [f'{key}_last_mean', f'{key}_last_std', f'{key}_best_mean', f'{key}_best_std']
    header.append('wall time')
    csv_header += ['wall_time_s_mean', 'work_dirs']
    rows, csv_rows = [], []
    for group in groups:
        first = group[0]
        seeds = ', '.join(NONE if r.seed is None else str(r.seed) for r in group)
        epochs = sorted({r.last_epoch for r in group if r.last_epoch is not None})
        epochs_text = '/'.join(map(str, epochs)) or NONE
        row = [first.config, first.teacher, first.student, first.method, seeds, epochs_text]
        csv_row = row + [len(group)]
        for key in metrics:
            values = [r.metric(key) for r in group]
            last = [v for v, _ in values if v is not None]
            best = [b[1] for _, b in values if b is not None]
            # A mean over fewer runs than the row's seeds says so: (n=runs that logged the key).
            some = f' (n={len(last)})' if 0 < len(last) < len(group) else ''
            row += [format_mean_std(last) + some, format_mean_std(best) + some]
            for numbers in (last, best):
                mean, std = mean_std(numbers) if numbers else (None, None)
                csv_row += [mean, std]
        walls = [r.log.wall_time_s for r in group if r.log.wall_time_s is not None]
        wall = mean_std(walls)[0] if walls else None
        row.append(format_seconds(wall, hours=True))
        csv_row += [wall, ';'.join(r.work_dir for r in group)]
        rows.append(row)
        csv_rows.append(csv_row)
    return header, rows, csv_header, csv_rows


def per_run_table(runs: list[Run], metrics: list[str]) -> tuple[list[str], list[list]]:
    """Header and rows of ``--per-run``: one row per run (work dir, config, teacher, student,
    method, seed, last epoch, each metric's last and best value with the best epoch, wall
    time)."""
    header = ['work dir', 'config', 'teacher', 'student', 'method', 'seed', 'epochs']
    for key in metrics:
        header += [f'{key} (last)', f'{key} (best)']
    header.append('wall time')
    rows = []
    for run in runs:
        row = [
            run.work_dir,
            run.config,
            run.teacher,
            run.student,
            run.method,
            NONE if run.seed is None else run.seed,
            run.last_epoch or NONE,
        ]
        for key in metrics:
            last, best = run.metric(key)
            row += [
                NONE if last is None else f'{last:.2f}',
                NONE if best is None else f'{best[1]:.2f} (epoch {best[0]})',
            ]
        row.append(format_seconds(run.log.wall_time_s, hours=True))
        rows.append(row)
    return header, rows
