"""Collect the results of many runs into one table (the format of the method READMEs).

    python tools/analysis_tools/collect_results.py work_dirs/            # every run below
    python tools/analysis_tools/collect_results.py work_dirs/a work_dirs/b \
        --metrics mAP CF1_oracle --out results.md                       # + results.csv

A run is a folder holding ``<timestamp>/vis_data/scalars.json`` and the config mmengine dumped.
Runs of the same config, teacher, student and method are one row (mean ± sample std over their
seeds; runs that differ in more than the seed are refused unless ``--allow-mixed``); "last" is the
metric of the last evaluated epoch, "best" the highest over epochs. How runs are read and grouped:
:mod:`mlkd.apis.results`.
"""

from __future__ import annotations

import argparse
import os.path as osp

from mlkd.apis.results import group_runs, grouped_table, per_run_table, read_run
from mlkd.utils.cli import run_tool
from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, open_output
from mlkd.utils.run_logs import find_work_dirs
from mlkd.utils.tables import TABLE_STYLES, render_table, write_csv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Collect the results of runs into a table')
    parser.add_argument('work_dirs', nargs='+', help='work dirs, or folders searched for them')
    parser.add_argument(
        '--metrics', nargs='+', default=['mAP'], help='evaluation keys to report (default: mAP)'
    )
    parser.add_argument(
        '--per-run',
        action='store_true',
        help='one row per run (with the best epoch) instead of seed groups',
    )
    parser.add_argument('--style', choices=TABLE_STYLES, default='markdown')
    parser.add_argument(
        '--out', help='also write the table to this .md file and the numbers to a .csv beside it'
    )
    add_overwrite_argument(parser)
    parser.add_argument(
        '--allow-mixed',
        action='store_true',
        help='average runs of one config name that differ in more than the seed '
        '(refused by default)',
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    base = osp.splitext(args.out)[0] if args.out else None
    policy = dict(inputs=args.work_dirs, overwrite=args.overwrite)
    if base:
        check_outputs([base + '.md', base + '.csv'], **policy)
    work_dirs = find_work_dirs(args.work_dirs)
    if not work_dirs:
        raise FileNotFoundError(
            f'no run (<timestamp>/vis_data/scalars.json) under {", ".join(args.work_dirs)}'
        )
    runs = [read_run(work_dir) for work_dir in work_dirs]
    logged = {k for run in runs for k in run.log.eval_keys()}
    missing = [key for key in args.metrics if key not in logged]
    if missing:
        raise ValueError(
            f'no run logged {", ".join(missing)}; evaluation keys logged: '
            f'{", ".join(sorted(logged))}'
        )
    if args.per_run:
        header, rows = per_run_table(runs, args.metrics)
        csv_header, csv_rows = header, rows
    else:
        header, rows, csv_header, csv_rows = grouped_table(
            group_runs(runs, args.allow_mixed), args.metrics
        )
    print(render_table(header, rows, args.style))
    if base:
        with open_output(base + '.md', **policy) as f:
            f.write(render_table(header, rows, 'markdown') + '\n')
        write_csv(base + '.csv', csv_header, csv_rows, **policy)
        print(f'{len(rows)} rows written to {base}.md and {base}.csv')


if __name__ == '__main__':
    run_tool(main)
