"""Read what an MMEngine run leaves in its work dir: ``scalars.json`` logs and the dumped config.

Used by the log tools of ``tools/analysis_tools`` and by :mod:`mlkd.apis.results` (standard
library only).

A work dir written by ``tools/train.py`` looks like::

    <work_dir>/<config name>.py                    the config as run (mmengine's dump)
    <work_dir>/<timestamp>/vis_data/scalars.json   one JSON object per line

``scalars.json`` mixes two kinds of lines. Training lines (one per logging interval) carry
``iter`` (and ``epoch`` when training by epoch) next to ``lr``, ``time``, ``data_time``, ``loss``,
``loss_cls`` and one ``loss_<name>`` (or ``loss_<name>_<term>``) per distillation term; ``time``
and ``data_time`` are the logger's means over its interval. Evaluation lines (validation metrics,
``teacher/...`` from ``TeacherEvalHook``) carry no ``iter``; their ``step`` is the epoch (or the
iteration when metrics are logged by iteration). A resumed run adds a timestamp folder; the
folders are read in time order, a later line for the same step replaces an earlier one, and what
an earlier folder logged from the iteration (and epoch) a later one starts at is dropped: it
belongs to the run the resume abandoned (a run resumed from epoch 1 after logging epoch 2).
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import os.path as osp
import re
from collections import defaultdict
from dataclasses import dataclass, field

SCALARS = osp.join('vis_data', 'scalars.json')
TIMESTAMP_FORMAT = '%Y%m%d_%H%M%S'
#: keys of a training line that are bookkeeping, not curves
INDEX_KEYS = ('step', 'iter', 'epoch')


@dataclass
class RunLog:
    """The merged scalar log of one run.

    Attributes:
        name: the work dir (or file) it was read from.
        files: the ``scalars.json`` files read, oldest first.
        train: training lines sorted by ``iter``.
        evals: evaluation lines sorted by ``step``; lines of the same step are merged.
        wall_time_s: sum over the files of (last write − timestamp of the folder); ``None`` when
            a folder name is not an mmengine timestamp.
    """

    name: str
    files: list[str]
    train: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    wall_time_s: float | None = None

    @property
    def by_epoch(self) -> bool:
        """Whether training lines carry an epoch (so evaluation steps are epochs)."""
        return any('epoch' in line for line in self.train)

    def eval_series(self, key: str) -> list[tuple[int, float]]:
        """``(step, value)`` of an evaluation key, in step order."""
        return [(line['step'], line[key]) for line in self.evals if key in line]

    def train_keys(self) -> list[str]:
        keys: dict[str, None] = {}
        for line in self.train:
            keys.update(dict.fromkeys(k for k in line if k not in INDEX_KEYS))
        return list(keys)

    def eval_keys(self) -> list[str]:
        keys: dict[str, None] = {}
        for line in self.evals:
            keys.update(dict.fromkeys(k for k in line if k not in INDEX_KEYS))
        return list(keys)


def scalar_files(path: str) -> list[str]:
    """The ``scalars.json`` files of ``path``: the file itself, or a work dir's, oldest first.

    Raises:
        FileNotFoundError: naming ``path`` when it is neither a file nor a folder holding
            ``<timestamp>/vis_data/scalars.json``.
    """
    if osp.isfile(path):
        return [path]
    if osp.isdir(path):
        found = sorted(glob.glob(osp.join(glob.escape(path), '*', SCALARS)))
        if osp.isfile(osp.join(path, SCALARS)):  # a timestamp folder given directly
            found.append(osp.join(path, SCALARS))
        if found:
            return found
    raise FileNotFoundError(
        f'no scalars.json log in {path!r} (expected a scalars.json file or a '
        f'work dir holding <timestamp>/{SCALARS})'
    )


def _read_lines(path: str) -> list[dict]:
    lines = []
    with open(path, encoding='utf-8') as f:
        for number, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as error:
                raise ValueError(f'{path}:{number}: not a JSON line ({error.msg})') from None
            if not isinstance(line, dict) or 'step' not in line:
                raise ValueError(f'{path}:{number}: expected a JSON object with a "step"')
            lines.append(line)
    return lines


def _folder_duration(path: str) -> float | None:
    """Seconds from the timestamp folder's name to the last write of its ``scalars.json``."""
    stamp = osp.basename(osp.dirname(osp.dirname(osp.abspath(path))))
    try:
        start = datetime.datetime.strptime(stamp, TIMESTAMP_FORMAT).timestamp()
    except ValueError:
        return None
    return max(0.0, os.stat(path).st_mtime - start)


def read_run_log(path: str) -> RunLog:
    """Read and merge every ``scalars.json`` of a work dir (or one file). See the module doc."""
    files = scalar_files(path)
    train: dict[int, dict] = {}
    evals: dict[int, dict] = {}
    durations = []
    for file in files:
        lines = _read_lines(file)
        starts = [line for line in lines if 'iter' in line][:1]
        if starts:
            # A run resumed here restarts at this iteration (its epoch): what the earlier folders
            # logged from there on belongs to the run it abandoned, not to this one.
            start = starts[0]
            train = {i: line for i, line in train.items() if i < start['iter']}
            cut = start.get('epoch', start['iter'])
            evals = {step: line for step, line in evals.items() if step < cut}
        for line in lines:
            if 'iter' in line:
                train[line['iter']] = line
            else:
                evals.setdefault(line['step'], {}).update(line)
        durations.append(_folder_duration(file))
    wall = None if None in durations else sum(durations)
    return RunLog(
        name=path,
        files=files,
        train=[train[k] for k in sorted(train)],
        evals=[evals[k] for k in sorted(evals)],
        wall_time_s=wall,
    )


def dumped_config_path(work_dir: str) -> str:
    """The config mmengine dumped at the root of ``work_dir`` (the newest if there are several).

    Raises:
        FileNotFoundError: naming ``work_dir`` when it holds no ``*.py`` file.
    """
    candidates = glob.glob(osp.join(glob.escape(work_dir), '*.py'))
    if not candidates:
        raise FileNotFoundError(f'no dumped config (<config name>.py) in work dir {work_dir!r}')
    return max(candidates, key=os.path.getmtime)


def find_work_dirs(roots: list[str]) -> list[str]:
    """Every folder under ``roots`` (themselves included) that holds a run's ``scalars.json``."""
    found = []
    for root in roots:
        if not osp.isdir(root):
            raise FileNotFoundError(f'work dir not found: {root!r}')
        for folder, subdirs, _ in os.walk(root):
            subdirs.sort()
            if glob.glob(osp.join(glob.escape(folder), '*', SCALARS)):
                found.append(folder)
                subdirs[:] = []  # a run's own timestamp folders are not runs
    return found


#: A LossDiagnosticsHook record: ``diag/<term>/<stat>``.
DIAGNOSTIC_KEY = re.compile(r'^diag/(?P<term>loss[^/]*)/(?P<stat>[a-z_]+)$')


def read_diagnostics(run_dir: str) -> dict[int, dict[str, dict[str, float]]]:
    """``{step: {term: {stat: value}}}`` from the ``scalars.json`` logs of ``run_dir``: every
    timestamp folder of it, oldest first (a resumed run's too; a later step replaces an earlier
    one), else the newest log below it (a run trained in a sub-folder)."""
    try:
        files = scalar_files(run_dir)
    except FileNotFoundError:
        pattern = osp.join(glob.escape(run_dir), '**', SCALARS)
        files = sorted(glob.glob(pattern, recursive=True), key=osp.getmtime)[-1:]
    if not files:
        raise FileNotFoundError(f'no vis_data/scalars.json under {run_dir}')
    records: dict[int, dict] = defaultdict(lambda: defaultdict(dict))
    for file in files:
        for row in _read_lines(file):
            for key, value in row.items():
                match = DIAGNOSTIC_KEY.match(key)
                if match:
                    records[row['step']][match['term']][match['stat']] = value
    if not records:
        raise ValueError(f'{files[-1]} holds no diag/* scalars (was LossDiagnosticsHook on?)')
    return {step: dict(terms) for step, terms in sorted(records.items())}


def read_diagnostic_series(run_dir: str) -> dict:
    """:func:`read_diagnostics` by column: ``{'steps': [step, ...], 'terms': {term: {stat:
    [value at each step, None where not logged]}}}`` (JSON-serialisable, steps in order)."""
    records = read_diagnostics(run_dir)
    steps = list(records)
    terms = sorted({term for step in steps for term in records[step]})
    return {
        'steps': steps,
        'terms': {
            term: {
                stat: [records[step].get(term, {}).get(stat) for step in steps]
                for stat in sorted({s for step in steps for s in records[step].get(term, {})})
            }
            for term in terms
        },
    }
