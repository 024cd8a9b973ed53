"""A study of configs: each config trained on its own for every seed, chosen on val, read on test.

The runs of a comparison without a teacher (task losses, single-positive losses: each a config
of its own) as a :class:`~mlkd.apis.study.Study` (:func:`config_study`): a run per config, named
by its file's stem, every stored result reused only for the config that made it. A call with
``test=False`` reads val only (the calls that choose a regime or a setting); a later call that
reads test in the same work dir reads it on the same networks' checkpoints, training nothing it
has (:func:`~mlkd.apis.study.run_study`). :func:`study_results` writes the results in the format
of a benchmark's ``results.json`` (``{'results': {run: [per-seed result]}, ...}``), which
``tools/analysis_tools/demo_paired.py`` compares (paired differences, claims) on either split.
``tools/analysis_tools/study.py`` is the command line.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Mapping, Sequence
from typing import Any

from mlkd.apis.runs import METRICS
from mlkd.apis.study import Study, StudyRequestError, StudyRun
from mlkd.utils.tables import format_mean_std, render_table

__all__ = ['config_study', 'render_results', 'study_results']


def config_study(
    configs: Sequence[str],
    *,
    test: bool = True,
    metrics: Sequence[str] = METRICS,
    options: Mapping[str, Any] | None = None,
) -> Study:
    """The study of ``configs`` (paths or ``mlkd::`` names), one run per config named by its
    file's stem; ``test=False``: no run reads test; ``options``: ``--cfg-options`` of every run.

    Raises:
        StudyRequestError: two configs of the same stem, or none.
    """
    if not configs:
        raise StudyRequestError('give at least one config')
    names = [osp.splitext(osp.basename(config))[0] for config in configs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise StudyRequestError(f'configs of the same file name {twice}: each run is named by it')
    return Study(
        name='the study',
        runs={name: StudyRun(config, test=test) for name, config in zip(names, configs)},
        metrics=tuple(metrics),
        options=dict(options or {}),
    )


def study_results(
    runs: Mapping[int, Mapping[str, dict]],
    seeds: Sequence[int],
    commit: str,
    names: Sequence[str] | None = None,
) -> dict:
    """``run_study``'s ``{seed: {run: result}}`` as a benchmark's ``results.json``:
    ``{'results': {run: [result with 'seed', per seed]}, 'seeds', 'stages', 'protocol':
    {'commit', 'configs': {run: [fingerprint per seed]}}}`` (each result keeps its own
    ``config_sha256``).

    ``names``: the runs (default: every run of any seed, in the order first met). Where a run of
    a seed is missing (a call that trained nothing, ``run_study(stored_only=True)``), its list
    skips that seed and ``protocol['missing']`` names it (``'run of seed S'``): a partial file,
    to continue from (``run_study(reuse=...)``), not to compare."""
    if names is None:
        names = list(dict.fromkeys(name for seed in seeds for name in runs[seed]))
    results = {
        name: [dict(runs[seed][name], seed=seed) for seed in seeds if name in runs[seed]]
        for name in names
    }
    configs = {name: [r['config_sha256'] for r in results[name]] for name in names}
    protocol = dict(commit=commit, configs=configs)
    missing = [
        f'{name} of seed {seed}' for seed in seeds for name in names if name not in runs[seed]
    ]
    if missing:
        protocol['missing'] = missing
    return dict(protocol=protocol, results=results, seeds=list(seeds), stages=list(names))


def render_results(saved: Mapping, metrics: Sequence[str] = METRICS) -> str:
    """Each run's ``metrics`` on each split it read, mean ± std over the seeds, and its CPU
    time (Markdown)."""
    results = saved['results']
    splits = [s for s in ('val', 'test') if all(s in r for runs in results.values() for r in runs)]
    header = ['run', *(f'{split} {metric}' for split in splits for metric in metrics), 'CPU (s)']
    rows = [
        [
            name,
            *(
                format_mean_std([r[split][metric] for r in runs])
                for split in splits
                for metric in metrics
            ),
            format_mean_std([r['cpu_seconds'] for r in runs], digits=0),
        ]
        for name, runs in results.items()
    ]
    seeds = ', '.join(map(str, saved['seeds']))
    missing = saved['protocol'].get('missing', [])
    more = f', and {len(missing) - 5} more' if len(missing) > 5 else ''
    partial = (
        f' Partial, each run over its stored seeds: {len(missing)} runs not stored '
        f'({", ".join(missing[:5])}{more}).'
        if missing
        else ''
    )
    return f'{render_table(header, rows)}\n\nMean ± sample std over seeds {seeds}.{partial}\n'
