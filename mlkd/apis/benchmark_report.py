"""What a benchmark call reports: its table (mean ± std over seeds), its bar chart and the check
of its ``results.json`` (:mod:`mlkd.apis.benchmark`).

``results`` below maps each stage to its runs, one per seed: ``{'seed', 'val': {metric: value},
'test': {...}, 'seconds' (None for a given checkpoint), 'cpu_seconds', 'checkpoint', ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mlkd.utils.output_policy import save_figure
from mlkd.utils.tables import format_mean_std, mean_std

__all__ = ['metric_label', 'plot_results', 'results_table', 'validate_results']

#: Fidelity columns of the table (DistillFidelity; the distilled stages, '-' for the others).
FIDELITY_COLUMNS = ('fidelity/mAP_vs_teacher', 'fidelity/label_agreement')


def fidelity_cell(runs: list[dict], key: str) -> str:
    """Mean ± std of a test fidelity key over ``runs``, '-' where a run has none."""
    values = [r.get('fidelity', {}).get('test', {}).get(key) for r in runs]
    return format_mean_std(values) if values and None not in values else '-'


def metric_label(key: str) -> str:
    """A metric's column name: ``'CF1_thr0.5'`` -> ``'CF1 (thr 0.5)'``."""
    return re.sub(r'_thr([0-9.]+)$', r' (thr \1)', key)


def results_table(results: dict[str, list[dict]], title: str, metrics: Sequence[str]) -> str:
    """The test ``metrics``, val mAP, test fidelity (:data:`FIDELITY_COLUMNS`) and wall / CPU
    time of each stage, mean ± std over its seeds, as a terminaltables table titled
    ``'<title>, <n> seed(s)'``; the fidelity columns only where a stage has a teacher."""
    from terminaltables import AsciiTable

    distilled = any('fidelity' in r for runs in results.values() for r in runs)
    fidelity = FIDELITY_COLUMNS if distilled else ()
    rows = [
        ['model']
        + [f'test {metric_label(key)}' for key in metrics]
        + ['val mAP', *(f'test {key}' for key in fidelity), 'wall time (s)', 'CPU time (s)']
    ]
    for name, runs in results.items():
        if runs:
            timed = [r for r in runs if r['seconds'] is not None]
            cpu = [r['cpu_seconds'] for r in timed if 'cpu_seconds' in r]
            rows.append(
                [name]
                + [format_mean_std([r['test'][k] for r in runs]) for k in metrics]
                + [
                    format_mean_std([r['val']['mAP'] for r in runs]),
                    *(fidelity_cell(runs, key) for key in fidelity),
                    format_mean_std([r['seconds'] for r in timed]) if timed else 'given',
                    format_mean_std(cpu) if cpu else '-',
                ]
            )
    seeds = max(len(runs) for runs in results.values())
    title = f'{title}, {seeds} seed(s)' + (' (mean ± std)' if seeds > 1 else '')
    return AsciiTable(rows, title=title).table


def plot_results(
    results: dict[str, list[dict]],
    path: str,
    title: str,
    teachers: Sequence[str] = ('teacher',),
    **policy,
) -> None:
    """Bar chart of the test mAP per stage (mean ± std, one dot per seed; the ``teachers``' stages
    in grey) at ``path``, under the output policy (``policy``: ``inputs``, ``overwrite``)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = [n for n, runs in results.items() if runs]
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(names), 3.6))
    for i, name in enumerate(names):
        values = [r['test']['mAP'] for r in results[name]]
        mean, std = mean_std(values)
        std = 0.0 if std is None else std
        ax.bar(i, mean, color='#bdbdbd' if name in teachers else '#9ecae1', yerr=std, capsize=4)
        ax.scatter([i] * len(values), values, color='black', s=12, zorder=3)
        ax.text(i, mean, f'{mean:.1f}', ha='center', va='bottom', fontsize=8)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel('test mAP (%)')
    low = min(r['test']['mAP'] for n in names for r in results[n])
    ax.set_ylim(max(0.0, low - 5.0), 100.0)
    ax.set_title(f'{title}: bars mean ± std, dots seeds', fontsize=10)
    save_figure(fig, path, dpi=120, tight_layout=True, **policy)


def validate_results(
    data: dict, metrics: Sequence[str], teachers: Sequence[str] = ('teacher',)
) -> None:
    """Check a ``results.json``: every stage's val and test ``metrics`` for every seed it ran
    (the ``teachers``' stages: the first seed only).

    Raises:
        ValueError: naming the stage, seed and key at fault.
    """
    for key in ('seeds', 'stages', 'protocol', 'teacher_ckpt', 'results'):
        if key not in data:
            raise ValueError(f'results.json: missing key {key!r}')
    for name in data['stages']:
        runs = data['results'].get(name)
        if runs is None:
            raise ValueError(f'results.json: stage {name!r} has no results')
        expected = data['seeds'][:1] if name in teachers else data['seeds']
        if [run.get('seed') for run in runs] != expected:
            raise ValueError(
                f'results.json: stage {name!r} has seeds '
                f'{[run.get("seed") for run in runs]}, expected {expected}'
            )
        for run in runs:
            for split in ('val', 'test'):
                values = run.get(split, {})
                missing = [m for m in metrics if not isinstance(values.get(m), float)]
                if missing:
                    raise ValueError(
                        f'results.json: stage {name!r} seed {run["seed"]}: '
                        f'{split} metrics {missing} missing or not numbers'
                    )
