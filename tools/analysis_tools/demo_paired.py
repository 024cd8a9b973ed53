"""Paired comparison of the demo's distilled students with the plain student of the same seed.

    python tools/analysis_tools/demo_paired.py work_dirs/demo/results.json \
        --out docs/demo_comparison          # writes .md (table) and .png (error bars)

For every distilled stage of ``results.json`` (``tools/demo.py``) and the seeds it shares with the
plain ``student``: test mAP mean ± std, and the paired difference ``stage − student`` (same seed:
same initial weights and batches) with its 95 % t-interval over the seeds,
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


def paired_rows(results: dict[str, list[dict]], split: str = 'test') -> list[dict]:
    """One row per distilled stage: its scores, the student's and the paired differences.

    Returns:
        list of ``{'stage', 'seeds', 'scores', 'mean', 'std', 'diff_mean', 'diff_low',
        'diff_high'}`` (std and the interval are NaN with one seed).

    Raises:
        ValueError: no plain ``student`` results, or a stage sharing no seed with it.
    """
    if not results.get('student'):
        raise ValueError('results.json holds no plain student: the pairs need it')
    base = {run['seed']: run[split][METRIC] for run in results['student']}
    rows = []
    for stage, runs in results.items():
        if stage in ('teacher', 'student') or not runs:
            continue
        scores = {run['seed']: run[split][METRIC] for run in runs if run['seed'] in base}
        if not scores:
            raise ValueError(f'stage {stage!r} shares no seed with the plain student')
        seeds = sorted(scores)
        values = [scores[s] for s in seeds]
        paired = paired_differences(values, [base[s] for s in seeds])
        mean, std = mean_std(values)
        rows.append(
            dict(
                stage=stage,
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


def table(results: dict[str, list[dict]], rows: list[dict]) -> str:
    """The Markdown table: teacher and student, then each distilled stage with its paired
    difference and interval."""
    lines = [
        [
            name,
            ','.join(str(r['seed']) for r in results[name]),
            format_mean_std([r['test'][METRIC] for r in results[name]]),
            '',
            '',
        ]
        for name in ('teacher', 'student')
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
                f'{row["diff_mean"]:+.2f}',
                interval,
            ]
        )
    return render_table(
        [
            'model',
            'seeds',
            'test mAP (mean ± std)',
            'Δ vs student (paired)',
            '95 % t-interval of Δ',
        ],
        lines,
    )


def plot(rows: list[dict], path: str, **policy) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.5 + 0.9 * len(rows), 3.4))
    for i, row in enumerate(rows):
        low = row['diff_mean'] - row['diff_low'] if not math.isnan(row['diff_low']) else 0.0
        ax.errorbar(i, row['diff_mean'], yerr=low, fmt='o', color='black', capsize=4)
    ax.axhline(0.0, color='grey', lw=0.8)
    ax.set_xticks(range(len(rows)), [row['stage'] for row in rows])
    ax.set_ylabel('test mAP − plain student (points)')
    ax.set_title('paired over seeds: mean and 95 % t-interval', fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=120, **policy)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('results', help="tools/demo.py's results.json")
    parser.add_argument('--out', required=True, help='output prefix: writes OUT.md and OUT.png')
    add_overwrite_argument(parser)
    args = parser.parse_args(argv)
    policy = dict(overwrite=args.overwrite, inputs=[args.results])
    check_outputs([args.out + '.md', args.out + '.png'], **policy)
    with open(args.results, encoding='utf-8') as f:
        results = json.load(f)['results']
    rows = paired_rows(results)
    text = table(results, rows)
    print(text)
    write_text(args.out + '.md', text + '\n', **policy)
    plot(rows, args.out + '.png', **policy)
    return 0


if __name__ == '__main__':
    sys.exit(main())
