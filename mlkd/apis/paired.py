"""Paired comparisons of a benchmark's results (``results.json`` of ``tools/demo.py``): each stage
against a baseline of the same seed, and claims of the form "A beats B", each with its 95 %
t-interval over the seeds (``tools/analysis_tools/demo_paired.py`` is their command line).

A stage's runs are ``{'seed', <split>: {metric: value}, 'fidelity': {<split>: {key: value}}}``;
a metric is a ``MultiLabelMetric`` key of the split (``mAP``, ``CF1_thr0.5``...) or a
``DistillFidelity`` key (``fidelity/mAP_vs_teacher``...). A pair is one seed: the same initial
weights and batches, so the seed-to-seed spread of both cancels. A baseline trained once (a
benchmark's teacher, one run) is the same baseline for every seed: its difference is then
``stage(seed) − baseline``, with the stage's spread alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from mlkd.utils.stats import paired_differences
from mlkd.utils.tables import format_mean_std, mean_std, render_table

__all__ = [
    'DEFAULT_METRIC',
    'claim_rows',
    'paired_rows',
    'paired_table',
    'plot_paired',
    'stage_score',
    'verdict',
]

#: The metric a comparison reads unless told otherwise.
DEFAULT_METRIC = 'mAP'


def stage_score(run: Mapping, split: str, metric: str, stage: str | None = None) -> float:
    """One run's ``metric`` on ``split`` (a fidelity key from the run's ``fidelity``).

    Raises:
        KeyError: naming the stage (where given), seed, split and metric missing.
    """
    scores = (run.get('fidelity') or {}) if metric.startswith('fidelity/') else run
    scores = scores.get(split) or {}
    if metric not in scores:
        where = f'stage {stage!r}, ' if stage is not None else ''
        raise KeyError(
            f'{where}seed {run.get("seed")}: no {metric!r} on {split} (it has {sorted(scores)})'
        )
    return scores[metric]


def _seed_scores(results: Mapping[str, list], stage: str, split: str, metric: str) -> dict:
    """Seed -> ``stage``'s score; refuses a seed listed twice (which would pair one of them)."""
    scores: dict[int, float] = {}
    for run in results[stage]:
        if run['seed'] in scores:
            raise ValueError(f'stage {stage!r} lists seed {run["seed"]} twice')
        scores[run['seed']] = stage_score(run, split, metric, stage)
    return scores


def _baseline_scores(
    results: Mapping[str, list], baseline: str, split: str, metric: str
) -> dict[int, float] | float:
    """Seed -> the baseline's score; a single number for a baseline trained once (one run)."""
    if not results.get(baseline):
        raise ValueError(
            'the results hold no plain student: the pairs need it'
            if baseline == 'student'
            else f'the results hold no stage {baseline!r} (their stages: {list(results)})'
        )
    runs = results[baseline]
    if len(runs) == 1 and baseline.startswith('teacher'):
        return float(stage_score(runs[0], split, metric, baseline))
    return _seed_scores(results, baseline, split, metric)


def paired_rows(
    results: Mapping[str, list],
    split: str = 'test',
    baseline: str = 'student',
    stages: Sequence[str] | None = None,
    metric: str = DEFAULT_METRIC,
) -> list[dict]:
    """One row per compared stage: its scores and the paired differences with ``baseline``.

    Args:
        results: stage -> its runs (``results.json``'s ``results``).
        stages: the stages to compare (default: every stage with runs but ``baseline`` and
            ``teacher*``).

    Returns:
        list of ``{'stage', 'baseline', 'metric', 'seeds', 'scores', 'mean', 'std',
        'diff_mean', 'diff_low', 'diff_high'}`` (std and the interval are NaN with one seed).

    Raises:
        ValueError: no ``baseline`` results (or no plain student, the default baseline), an
            unknown stage or one without runs, a stage sharing no seed with the baseline, or a
            seed listed twice in a stage.
        KeyError: a run without the metric on ``split``, naming its stage and seed.
    """
    base = _baseline_scores(results, baseline, split, metric)
    if stages is None:
        stages = [
            s for s in results if s != baseline and not s.startswith('teacher') and results[s]
        ]
    unknown = [stage for stage in stages if stage not in results]
    if unknown:
        raise ValueError(f'the results hold no stages {unknown} (their stages: {list(results)})')
    rows = []
    for stage in stages:
        if not results[stage]:
            raise ValueError(f'stage {stage!r} has no runs')
        scores = _seed_scores(results, stage, split, metric)
        if isinstance(base, dict):
            scores = {seed: score for seed, score in scores.items() if seed in base}
        if not scores:
            raise ValueError(f'stage {stage!r} shares no seed with {baseline!r}')
        seeds = sorted(scores)
        values = [scores[s] for s in seeds]
        control = [base[s] if isinstance(base, dict) else base for s in seeds]
        paired = paired_differences(values, control)
        mean, std = mean_std(values)
        rows.append(
            dict(
                stage=stage,
                baseline=baseline,
                metric=metric,
                seeds=seeds,
                scores=values,
                mean=mean,
                std=math.nan if std is None else std,
                diff_mean=paired.mean,
                diff_low=paired.low,
                diff_high=paired.high,
            )
        )
    return rows


def verdict(low: float, high: float) -> str:
    """A claim "treated beats control" read off the interval of ``treated − control``:
    ``'held'`` (entirely above 0), ``'inverted'`` (entirely below 0), ``'not held'`` (it holds 0,
    or there is no interval: one seed)."""
    if math.isnan(low) or math.isnan(high):
        return 'not held'
    return 'held' if low > 0 else 'inverted' if high < 0 else 'not held'


def claim_rows(
    results: Mapping[str, list],
    claims: Sequence[tuple[str, str]],
    split: str = 'test',
    metric: str = DEFAULT_METRIC,
) -> list[dict]:
    """One row per claim ``(treated, control)``, "treated beats control": the paired row
    (:func:`paired_rows`) with its :func:`verdict` under ``'verdict'``."""
    rows = []
    for treated, control in claims:
        row = paired_rows(results, split, baseline=control, stages=[treated], metric=metric)[0]
        rows.append(dict(row, verdict=verdict(row['diff_low'], row['diff_high'])))
    return rows


def _score_cell(runs: list, split: str, metric: str) -> str:
    """Mean ± std of a shown stage's ``metric``; '-' where a run lacks it (a teacher has no
    fidelity, nor a plain stage of a benchmark that scores none)."""
    try:
        return format_mean_std([stage_score(r, split, metric) for r in runs])
    except KeyError:
        return '-'


def _interval(row: Mapping) -> str:
    if math.isnan(row['diff_low']):
        return ''
    return f'[{row["diff_low"]:+.2f}, {row["diff_high"]:+.2f}]'


def paired_table(results: Mapping[str, list], rows: list[dict], split: str = 'test') -> str:
    """The Markdown table of ``split``: the teachers and the baselines (a baseline over the seeds
    its pairs use), then each compared stage with its paired difference and interval (its
    baseline, when there are several; its verdict, for claim rows)."""
    metric = rows[0]['metric'] if rows else DEFAULT_METRIC
    baselines = list(dict.fromkeys(row['baseline'] for row in rows))
    several = len(baselines) > 1
    claims = any('verdict' in row for row in rows)
    extra = (1 if several else 0) + (1 if claims else 0)
    shown = [name for name in results if name.startswith('teacher')] + baselines
    paired_seeds: dict[str, set] = {}  # a baseline's row: over the seeds its pairs use
    for row in rows:
        paired_seeds.setdefault(row['baseline'], set()).update(row['seeds'])

    def runs_shown(name: str) -> list:
        runs = results[name]
        if name not in paired_seeds or (len(runs) == 1 and name.startswith('teacher')):
            return runs  # a teacher trained once is every seed's baseline
        return [run for run in runs if run['seed'] in paired_seeds[name]]

    lines = [
        [
            name,
            ','.join(str(r['seed']) for r in runs_shown(name)),
            _score_cell(runs_shown(name), split, metric),
            *([''] * extra),
            '',
            '',
        ]
        for name in dict.fromkeys(shown)
        if results.get(name)
    ]
    for row in rows:
        lines.append(
            [
                row['stage'],
                ','.join(map(str, row['seeds'])),
                format_mean_std(row['scores']),
                *([row['baseline']] if several else []),
                f'{row["diff_mean"]:+.2f}',
                _interval(row),
                *([row.get('verdict', '')] if claims else []),
            ]
        )
    return render_table(
        [
            'model',
            'seeds',
            f'{split} {metric} (mean ± std)',
            *(['paired with'] if several else []),
            'Δ (paired)' if several else f'Δ vs {baselines[0]} (paired)',
            '95 % t-interval of Δ',
            *(['claim'] if claims else []),
        ],
        lines,
    )


def plot_paired(rows: list[dict], path: str, split: str = 'test', **policy) -> None:
    """Each row's paired difference with its interval (``policy``: the output policy's
    ``overwrite`` / ``inputs``)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from mlkd.utils.output_policy import save_figure

    metric = rows[0]['metric'] if rows else DEFAULT_METRIC
    baselines = list(dict.fromkeys(row['baseline'] for row in rows))
    several = len(baselines) > 1
    fig, ax = plt.subplots(figsize=(1.5 + (1.3 if several else 0.9) * len(rows), 3.4))
    for i, row in enumerate(rows):
        low = row['diff_mean'] - row['diff_low'] if not math.isnan(row['diff_low']) else 0.0
        ax.errorbar(i, row['diff_mean'], yerr=low, fmt='o', color='black', capsize=4)
    ax.axhline(0.0, color='grey', lw=0.8)
    labels = [f'{row["stage"]}\n− {row["baseline"]}' if several else row['stage'] for row in rows]
    ax.set_xticks(range(len(rows)), labels, fontsize=8 if several else None)
    ax.set_ylabel(
        f'{split} {metric} difference (points)'
        if several
        else f'{split} {metric} − {baselines[0]} (points)'
    )
    ax.set_title('paired over seeds: mean and 95 % t-interval', fontsize=10)
    save_figure(fig, path, dpi=120, tight_layout=True, **policy)
