"""Curves and train-time statistics from mmengine's ``scalars.json`` logs.

    # every loss term (loss, loss_cls, loss_<name>...) and mAP of two runs in one PNG
    python tools/analysis_tools/analyze_logs.py plot_curve work_dirs/3d_x work_dirs/kd_x \
        --out curves.png
    # chosen keys, losses against the epoch (per-epoch mean of the logged values)
    python tools/analysis_tools/analyze_logs.py plot_curve RUN --keys loss_pd loss_ndd mAP \
        --xaxis epoch
    # mean / slowest / fastest iteration time
    python tools/analysis_tools/analyze_logs.py cal_train_time work_dirs/3d_x

A RUN is a work dir (all its ``<timestamp>/vis_data/scalars.json``, merged) or one
``scalars.json``. Every key gets its own panel with one line per run; training keys are plotted
against the iteration (or the epoch), evaluation keys against their logged step (the epoch). The
plotted points are also written to a CSV beside the PNG.
"""

from __future__ import annotations

import argparse
import os.path as osp
import statistics
from collections import defaultdict

from mlkd.utils.cli import run_tool
from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, save_figure
from mlkd.utils.run_logs import RunLog, read_run_log
from mlkd.utils.tables import TABLE_STYLES, render_table, write_csv


def default_keys(runs: list[RunLog]) -> list[str]:
    """Every loss term of the training lines, then ``mAP``, else ``accuracy/top1`` (single
    label), else the first metric the runs evaluated (not a timing, not a teacher's)."""
    keys: dict[str, None] = {}
    for run in runs:
        keys.update(dict.fromkeys(k for k in run.train_keys() if k.startswith('loss')))
    metrics = [
        k
        for run in runs
        for k in run.eval_keys()
        if k not in ('time', 'data_time') and not k.startswith('teacher/')
    ]
    first = next((k for k in ('mAP', 'accuracy/top1') if k in metrics), None)
    if first or metrics:
        keys[first or metrics[0]] = None
    return list(keys)


def series(run: RunLog, key: str, xaxis: str) -> tuple[list[float], list[float], str] | None:
    """``(x, y, x label)`` of ``key`` in ``run``, or ``None`` when the run did not log it."""
    if any(key in line for line in run.train):
        lines = [line for line in run.train if key in line]
        if xaxis == 'iter':
            return [line['iter'] for line in lines], [line[key] for line in lines], 'iteration'
        if not run.by_epoch:
            raise ValueError(
                f'{run.name}: --xaxis epoch needs a run trained by epoch '
                '(its training lines carry no "epoch")'
            )
        per_epoch = defaultdict(list)
        for line in lines:
            per_epoch[line['epoch']].append(line[key])
        epochs = sorted(per_epoch)
        means = [statistics.fmean(per_epoch[e]) for e in epochs]
        return epochs, means, 'epoch (mean of the logged values)'
    points = run.eval_series(key)
    if not points:
        return None
    return (
        [s for s, _ in points],
        [v for _, v in points],
        'epoch' if run.by_epoch else 'iteration',
    )


def plot_curve(
    runs: list[RunLog],
    keys: list[str],
    legend: list[str],
    xaxis: str,
    out: str,
    title: str | None,
    overwrite: bool = False,
) -> None:
    """One panel per key into the PNG ``out`` and its points into the CSV beside it; existing
    files are refused unless ``overwrite`` (:mod:`mlkd.utils.output_policy`)."""
    points = osp.splitext(out)[0] + '.csv'
    policy = dict(inputs=[f for run in runs for f in run.files], overwrite=overwrite)
    check_outputs([out, points], **policy)
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    panels = []
    for key in keys:
        curves = [(name, series(run, key, xaxis)) for name, run in zip(legend, runs)]
        curves = [(name, curve) for name, curve in curves if curve is not None]
        if not curves:
            available = sorted({k for run in runs for k in run.train_keys() + run.eval_keys()})
            raise ValueError(f'no run logged {key!r}; logged keys: {", ".join(available)}')
        panels.append((key, curves))
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, (key, curves) in zip(axes.flat, panels):
        for name, (x, y, xlabel) in curves:  # noqa: B007 - the panel takes the last x label
            ax.plot(x, y, marker='o' if len(x) < 30 else None, markersize=3, label=name)
        ax.set_title(key)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        if len(runs) > 1:
            ax.legend(fontsize='small')
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis('off')
    if title:
        fig.suptitle(title)
    save_figure(fig, out, dpi=100, tight_layout=True, **policy)
    write_csv(
        points,
        ['run', 'key', 'x', 'y'],
        [
            [name, key, x, y]
            for key, curves in panels
            for name, (xs, ys, _) in curves
            for x, y in zip(xs, ys)
        ],
        **policy,
    )
    print(
        f'{len(panels)} curve panels ({", ".join(keys)}) of {len(runs)} run(s) written to '
        f'{out}, their points to {points}'
    )


def train_time_stats(run: RunLog, include_outliers: bool = False) -> dict:
    """Iteration-time statistics of one run from its training lines' ``time`` and ``data_time``.

    Without ``include_outliers`` the first logged line of every epoch (start-up, data-loader
    workers spawning) is left out, unless it is the epoch's only line.
    """
    lines = [line for line in run.train if 'time' in line]
    if not lines:
        raise ValueError(f'{run.name}: no training line with a "time" entry')
    per_epoch = defaultdict(list)
    for line in lines:
        per_epoch[line.get('epoch', 1)].append(line)
    if not include_outliers:
        per_epoch = {e: group[1:] if len(group) > 1 else group for e, group in per_epoch.items()}
    kept = [line for e in sorted(per_epoch) for line in per_epoch[e]]
    epoch_means = {
        e: statistics.fmean(line['time'] for line in group) for e, group in per_epoch.items()
    }
    slowest = max(kept, key=lambda line: line['time'])
    fastest = min(kept, key=lambda line: line['time'])
    data_times = [line['data_time'] for line in kept if 'data_time' in line]
    return dict(
        lines=len(kept),
        mean_time=statistics.fmean(line['time'] for line in kept),
        mean_data_time=statistics.fmean(data_times) if data_times else None,
        slowest_iter=(slowest['iter'], slowest['time']),
        fastest_iter=(fastest['iter'], fastest['time']),
        slowest_epoch=max(epoch_means.items(), key=lambda item: item[1]),
        fastest_epoch=min(epoch_means.items(), key=lambda item: item[1]),
        epoch_std=statistics.pstdev(epoch_means.values()),
    )


def cal_train_time(
    runs: list[RunLog], legend: list[str], include_outliers: bool, style: str
) -> None:
    header = [
        'run',
        'iters',
        's/iter',
        'data s/iter',
        'slowest iter',
        'fastest iter',
        'slowest epoch',
        'fastest epoch',
        'std over epochs',
    ]
    rows = []
    for name, run in zip(legend, runs):
        s = train_time_stats(run, include_outliers)
        data = '-' if s['mean_data_time'] is None else f'{s["mean_data_time"]:.4f}'
        rows.append(
            [
                name,
                s['lines'],
                f'{s["mean_time"]:.4f}',
                data,
                f'{s["slowest_iter"][1]:.4f} (iter {s["slowest_iter"][0]})',
                f'{s["fastest_iter"][1]:.4f} (iter {s["fastest_iter"][0]})',
                f'{s["slowest_epoch"][1]:.4f} (epoch {s["slowest_epoch"][0]})',
                f'{s["fastest_epoch"][1]:.4f} (epoch {s["fastest_epoch"][0]})',
                f'{s["epoch_std"]:.4f}',
            ]
        )
    note = (
        'all logged iterations'
        if include_outliers
        else 'first logged iteration of each epoch left out'
    )
    print(render_table(header, rows, style, title=f'train time, seconds per iteration ({note})'))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Analyse mmengine scalars.json logs')
    sub = parser.add_subparsers(dest='task', required=True)
    plot = sub.add_parser('plot_curve', help='plot loss terms and metrics of runs into a PNG')
    plot.add_argument('runs', nargs='+', help='work dirs or scalars.json files')
    plot.add_argument(
        '--keys', nargs='+', help='logged keys, one panel each (default: every loss term and mAP)'
    )
    plot.add_argument('--legend', nargs='+', help='one name per run (default: the paths)')
    plot.add_argument(
        '--xaxis', choices=['iter', 'epoch'], default='iter', help='x axis of the training keys'
    )
    plot.add_argument('--title', help='figure title')
    plot.add_argument(
        '--out', default='curves.png', help='PNG file to write (and a CSV of the points beside it)'
    )
    add_overwrite_argument(plot)
    timing = sub.add_parser('cal_train_time', help='iteration-time statistics of runs')
    timing.add_argument('runs', nargs='+', help='work dirs or scalars.json files')
    timing.add_argument('--legend', nargs='+', help='one name per run (default: the paths)')
    timing.add_argument(
        '--include-outliers',
        action='store_true',
        help='keep the first logged iteration of each epoch',
    )
    timing.add_argument('--style', choices=TABLE_STYLES, default='ascii')
    args = parser.parse_args(argv)
    if args.legend and len(args.legend) != len(args.runs):
        parser.error(f'--legend names {len(args.legend)} runs but {len(args.runs)} were given')
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runs = [read_run_log(path) for path in args.runs]
    legend = args.legend or [path.rstrip('/') for path in args.runs]
    if args.task == 'plot_curve':
        plot_curve(
            runs,
            args.keys or default_keys(runs),
            legend,
            args.xaxis,
            args.out,
            args.title,
            args.overwrite,
        )
    else:
        cal_train_time(runs, legend, args.include_outliers, args.style)


if __name__ == '__main__':
    run_tool(main)
