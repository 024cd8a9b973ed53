"""Print the LossDiagnosticsHook records of a run as a Markdown table.

    python tools/analysis_tools/diagnostics_table.py work_dirs/demo/seed0/L2D-paper [--every 3]

Reads ``diag/<term>/<stat>`` from the run's ``vis_data/scalars.json`` (the newest one under the
folder) and prints, per diagnostic step, each distillation term's weighted value, its gradient
norm on the hook's layer relative to the task term's (``×task``) and the cosine between the two.
"""

from __future__ import annotations

import argparse

from mlkd.utils.run_logs import read_diagnostics


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
