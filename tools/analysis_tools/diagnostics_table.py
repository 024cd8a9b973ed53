"""Print the LossDiagnosticsHook records of a run as a Markdown table.

    python tools/analysis_tools/diagnostics_table.py work_dirs/demo/seed0/L2D-paper [--every 3]

Reads ``diag/<term>/<stat>`` from the run's ``vis_data/scalars.json`` (the newest one under the
folder) and prints, per diagnostic step, each distillation term's weighted value, its gradient
norm on the hook's layer relative to the task term's (``×task``) and the cosine between the two.
"""

from __future__ import annotations

import argparse
import glob
import json
import os.path as osp
import re
from collections import defaultdict

KEY = re.compile(r'^diag/(?P<term>loss[^/]*)/(?P<stat>[a-z_]+)$')


def read_diagnostics(run_dir: str) -> dict[int, dict[str, dict[str, float]]]:
    """``{step: {term: {stat: value}}}`` from the newest ``scalars.json`` under ``run_dir``."""
    files = sorted(
        glob.glob(osp.join(run_dir, '**', 'vis_data', 'scalars.json'), recursive=True),
        key=osp.getmtime,
    )
    if not files:
        raise FileNotFoundError(f'no vis_data/scalars.json under {run_dir}')
    records: dict[int, dict] = defaultdict(lambda: defaultdict(dict))
    with open(files[-1], encoding='utf-8') as f:
        for line in f:
            row = json.loads(line)
            for key, value in row.items():
                match = KEY.match(key)
                if match:
                    records[row['step']][match['term']][match['stat']] = value
    if not records:
        raise ValueError(f'{files[-1]} holds no diag/* scalars (was LossDiagnosticsHook on?)')
    return {step: dict(terms) for step, terms in sorted(records.items())}


def markdown(records: dict[int, dict], every: int = 1, task_key: str = 'loss_cls') -> str:
    steps = list(records)
    shown = steps[::every] + ([steps[-1]] if (len(steps) - 1) % every else [])
    terms = [t for t in records[steps[0]] if t != task_key]
    lines = [
        '| step | '
        + ' | '.join(
            f'{task_key} value' if t == task_key else f'{t}: value / ×task grad / cos'
            for t in [task_key] + terms
        )
        + ' |',
        '|---:|' + '---:|' * (len(terms) + 1),
    ]
    for step in shown:
        row = records[step]
        cells = [f'{row[task_key]["value"]:.4g}']
        cells += [
            f'{row[t]["value"]:.4g} / {row[t]["grad_ratio"]:.3g} / {row[t]["cos"]:+.2f}'
            for t in terms
        ]
        lines.append(f'| {step} | ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('run_dir')
    parser.add_argument('--every', type=int, default=1, help='show every n-th record')
    args = parser.parse_args()
    print(markdown(read_diagnostics(args.run_dir), max(args.every, 1)))


if __name__ == '__main__':
    main()
