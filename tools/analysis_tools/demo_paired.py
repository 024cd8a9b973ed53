"""Paired comparison of a benchmark's students with a baseline student of the same seed.

    python tools/analysis_tools/demo_paired.py work_dirs/demo/results.json \
        --out docs/demo_comparison          # writes .md (table) and .png (error bars)
    python tools/analysis_tools/demo_paired.py work_dirs/multi_teacher/results.json \
        --baselines L2D-0to6 L2D-3to9 --stages L2D-both L2D-both-bestAP --out OUT

For every compared stage of ``results.json`` (``tools/demo.py``; default: every stage but the
baselines and the teachers, ``teacher*``) and every baseline (default: the plain ``student``),
over the seeds they share: test (``--split val``: val) mAP mean ± std, and the paired difference
``stage − baseline``
(same seed: same initial weights and batches) with its 95 % t-interval over the seeds,
``mean(d) ± t_{0.975, n−1} · std(d) / √n``. The interval needs at least two seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, save_figure, write_text
from mlkd.utils.stats import paired_differences
from mlkd.utils.tables import format_mean_std, mean_std, render_table

METRIC = 'mAP'


def paired_rows(
    results: dict[str, list[dict]],
    split: str = 'test',
    baseline: str = 'student',
    stages: list[str] | None = None,
) -> list[dict]:
    """One row per compared stage: its scores and the paired differences with ``baseline``.

    Args:
        stages: the stages to compare (default: every stage but ``baseline`` and ``teacher*``).

    Returns:
        list of ``{'stage', 'baseline', 'seeds', 'scores', 'mean', 'std', 'diff_mean',
        'diff_low', 'diff_high'}`` (std and the interval are NaN with one seed).

    Raises:
        ValueError: no ``baseline`` results (or no plain student, the default baseline), an
            unknown stage, or a stage sharing no seed with the baseline.
    """
    if not results.get(baseline):
        raise ValueError(
            'results.json holds no plain student: the pairs need it'
            if baseline == 'student'
            else f'results.json holds no stage {baseline!r} (its stages: {list(results)})'
        )
    if stages is None:
        stages = [s for s in results if s != baseline and not s.startswith('teacher')]
    unknown = [stage for stage in stages if stage not in results]
    if unknown:
        raise ValueError(f'results.json holds no stages {unknown} (its stages: {list(results)})')
    base = {run['seed']: run[split][METRIC] for run in results[baseline]}
    rows = []
    for stage in stages:
        runs = results[stage]
        if not runs:
            continue
        scores = {run['seed']: run[split][METRIC] for run in runs if run['seed'] in base}
        if not scores:
            raise ValueError(f'stage {stage!r} shares no seed with {baseline!r}')
        seeds = sorted(scores)
        values = [scores[s] for s in seeds]
        paired = paired_differences(values, [base[s] for s in seeds])
        mean, std = mean_std(values)
        rows.append(
            dict(
                stage=stage,
                baseline=baseline,
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


def table(results: dict[str, list[dict]], rows: list[dict], split: str = 'test') -> str:
    """The Markdown table of ``split``: the teachers and the baselines, then each compared stage
    with its paired difference and interval (and its baseline, when there are several)."""
    baselines = list(dict.fromkeys(row['baseline'] for row in rows))
    several = len(baselines) > 1
    shown = [name for name in results if name.startswith('teacher')] + baselines
    lines = [
        [
            name,
            ','.join(str(r['seed']) for r in results[name]),
            format_mean_std([r[split][METRIC] for r in results[name]]),
            *([''] if several else []),
            '',
            '',
        ]
        for name in dict.fromkeys(shown)
        if results.get(name)
    ]
    for row in rows:
        interval = (
            ''
            if math.isnan(row['diff_low'])
            else f'[{row["diff_low"]:+.2f}, {row["diff_high"]:+.2f}]'
        )
        lines.append(
            [
                row['stage'],
                ','.join(map(str, row['seeds'])),
                format_mean_std(row['scores']),
                *([row['baseline']] if several else []),
                f'{row["diff_mean"]:+.2f}',
                interval,
            ]
        )
    return render_table(
        [
            'model',
            'seeds',
            f'{split} mAP (mean ± std)',
            *(['paired with'] if several else []),
            'Δ (paired)' if several else f'Δ vs {baselines[0]} (paired)',
            '95 % t-interval of Δ',
        ],
        lines,
    )


def plot(rows: list[dict], path: str, split: str = 'test', **policy) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

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
        f'{split} mAP difference (points)' if several else f'{split} mAP − {baselines[0]} (points)'
    )
    ax.set_title('paired over seeds: mean and 95 % t-interval', fontsize=10)
    save_figure(fig, path, dpi=120, tight_layout=True, **policy)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('results', help="tools/demo.py's results.json")
    parser.add_argument('--out', required=True, help='output prefix: writes OUT.md and OUT.png')
    parser.add_argument(
        '--baselines',
        nargs='+',
        default=['student'],
        help='the stage(s) each compared stage is paired with (default: the plain student)',
    )
    parser.add_argument(
        '--stages', nargs='+', help='the stages to compare (default: all but baselines, teachers)'
    )
    parser.add_argument(
        '--split',
        choices=('test', 'val'),
        default='test',
        help='the split compared (default: test)',
    )
    add_overwrite_argument(parser)
    args = parser.parse_args(argv)
    policy = dict(overwrite=args.overwrite, inputs=[args.results])
    check_outputs([args.out + '.md', args.out + '.png'], **policy)
    with open(args.results, encoding='utf-8') as f:
        results = json.load(f)['results']
    stages = args.stages
    if stages is None:
        stages = [s for s in results if s not in args.baselines and not s.startswith('teacher')]
    try:
        rows = [
            row
            for baseline in args.baselines
            for row in paired_rows(results, args.split, baseline=baseline, stages=stages)
        ]
    except ValueError as error:
        parser.error(str(error))
    text = table(results, rows, args.split)
    print(text)
    write_text(args.out + '.md', text + '\n', **policy)
    plot(rows, args.out + '.png', args.split, **policy)
    return 0


if __name__ == '__main__':
    sys.exit(main())
