"""Per-class AP of a ``tools/test.py --out`` dump, or of two dumps side by side.

    python tools/analysis_tools/per_class_ap.py student.npz --config CONFIG --out per_class_ap.png
    # class by class: B - A for every class, sorted by the difference
    python tools/analysis_tools/per_class_ap.py student.npz teacher.npz --names student teacher \
        --config CONFIG --sort diff --out student_vs_teacher.png

AP is mlkd's :func:`mlkd.evaluation.metrics.functional.average_precision` (the one behind the
logged mAP; ``--empty-policy`` as in ``MultiLabelMetrics``). Class names come from the test
dataset of ``--config``, from ``--classes`` (a file, one name per line), or are the indices. Two
dumps must cover the same images (matched by ``sample_idx``) with the same labels. Writes a bar
chart (PNG) and prints a table; ``--csv`` writes the numbers.
"""

from __future__ import annotations

import argparse
import os.path as osp

import numpy as np
import torch

from mlkd.evaluation.metrics.functional import average_precision, mean_of_ap
from mlkd.utils.cli import run_tool
from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, save_figure
from mlkd.utils.tables import TABLE_STYLES, render_table, write_csv


def load_dump(path: str) -> dict[str, np.ndarray]:
    """``scores [N, C]``, ``labels [N, C]`` (1 / 0 / -1; ``[N]`` indices are one-hot encoded) and
    ``sample_idx [N]`` of a DumpScores file, rows sorted by ``sample_idx``.

    Raises:
        FileNotFoundError / ValueError: naming the file and the missing key or bad shape.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f'dump not found: {path!r}')
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in ('scores', 'labels') if k not in data.files]
        if missing:
            raise ValueError(
                f'{path}: no {", ".join(missing)} array (has {", ".join(data.files)});'
                ' expected a tools/test.py --out dump'
            )
        scores, labels = data['scores'], data['labels']
        sample_idx = data['sample_idx'] if 'sample_idx' in data.files else np.arange(len(scores))
    if scores.ndim != 2:
        raise ValueError(f'{path}: scores must be [N, C], got shape {scores.shape}')
    if labels.ndim == 1:  # single-label class indices
        labels = np.eye(scores.shape[1], dtype=np.float32)[labels.astype(np.int64)]
    if labels.shape != scores.shape or sample_idx.shape != (len(scores),):
        raise ValueError(
            f'{path}: scores {scores.shape}, labels {labels.shape} and sample_idx '
            f'{sample_idx.shape} do not match'
        )
    order = np.argsort(sample_idx, kind='stable')
    return dict(scores=scores[order], labels=labels[order], sample_idx=sample_idx[order])


def check_same_images(first: dict, second: dict, paths: list[str]) -> None:
    if not np.array_equal(first['sample_idx'], second['sample_idx']):
        raise ValueError(f'{paths[0]} and {paths[1]} cover different images (sample_idx differ)')
    if not np.array_equal(first['labels'], second['labels']):
        raise ValueError(f'{paths[0]} and {paths[1]} have different labels for the same images')


def class_names_from_config(config: str, num_classes: int) -> list[str]:
    """Class names of the test dataset of ``config`` (its metainfo, else its class's METAINFO,
    else the built dataset's)."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope

    from mlkd.registry import DATASETS
    from mlkd.utils.config_paths import resolve_config_path

    cfg = Config.fromfile(resolve_config_path(config))
    dataset = cfg.test_dataloader.dataset
    classes = (dataset.get('metainfo') or {}).get('classes')
    if classes is None:
        init_default_scope(cfg.get('default_scope', 'mlkd'))
        dataset_class = DATASETS.get(dataset.type)
        classes = getattr(dataset_class, 'METAINFO', {}).get('classes')
        if classes is None or len(classes) != num_classes:
            # A dataset whose classes follow its arguments (DigitObjects: num_colours x 10) has
            # its own in the instance, not in the class's METAINFO.
            classes = DATASETS.build(dataset).metainfo['classes']
    if len(classes) != num_classes:
        raise ValueError(
            f'{config}: the test dataset has {len(classes)} classes but the dump '
            f'has {num_classes} score columns'
        )
    return [str(c) for c in classes]


def class_names_from_file(path: str, num_classes: int) -> list[str]:
    with open(path, encoding='utf-8') as f:
        names = [line.strip() for line in f if line.strip()]
    if len(names) != num_classes:
        raise ValueError(f'{path}: {len(names)} class names but the dump has {num_classes} classes')
    return names


def plot(
    names: list[str],
    runs: list[str],
    aps: np.ndarray,
    order: np.ndarray,
    out: str,
    maps: list[float],
    **policy,
) -> None:
    """Horizontal bars of ``aps [R, C]`` (percent), classes in ``order``; with two runs a second
    panel shows the difference."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    num_classes = len(order)
    height = max(3.0, 0.28 * num_classes + 1.5)
    panels = 2 if len(runs) == 2 else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, height), squeeze=False, sharey=True)
    ypos = np.arange(num_classes)
    width = 0.8 / len(runs)
    values = np.nan_to_num(aps[:, order], nan=0.0)
    for r, run in enumerate(runs):
        axes[0, 0].barh(
            ypos + (r - (len(runs) - 1) / 2) * width,
            values[r],
            height=width,
            label=f'{run} (mAP {maps[r]:.2f})',
        )
    axes[0, 0].set_yticks(ypos, [names[i] for i in order], fontsize='small')
    axes[0, 0].invert_yaxis()
    axes[0, 0].set_xlabel('AP (%)')
    axes[0, 0].set_xlim(0, 100)
    axes[0, 0].legend(fontsize='small', loc='lower right')
    if panels == 2:
        diff = values[1] - values[0]
        axes[0, 1].barh(ypos, diff, color=np.where(diff >= 0, 'tab:green', 'tab:red'))
        axes[0, 1].axvline(0, color='black', linewidth=0.8)
        axes[0, 1].set_xlabel(f'AP {runs[1]} - {runs[0]} (points)')
    for ax in axes.flat:
        ax.grid(axis='x', alpha=0.3)
    save_figure(fig, out, dpi=100, tight_layout=True, **policy)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Per-class AP of one or two test.py dumps')
    parser.add_argument('dumps', nargs='+', help='one or two .npz files from tools/test.py --out')
    parser.add_argument('--names', nargs='+', help='one name per dump (default: file names)')
    names = parser.add_mutually_exclusive_group()
    names.add_argument('--config', help='config whose test dataset gives the class names')
    names.add_argument('--classes', help='file with one class name per line')
    parser.add_argument(
        '--sort',
        choices=['index', 'ap', 'diff'],
        default='index',
        help='row order: class index, AP of the last dump (descending), or the '
        'difference last - first (descending)',
    )
    parser.add_argument(
        '--empty-policy',
        choices=['zero', 'exclude'],
        default='zero',
        help='AP of a class without positives: 0 (as the logged mAP) or n/a',
    )
    parser.add_argument('--style', choices=TABLE_STYLES, default='ascii')
    parser.add_argument('--out', default='per_class_ap.png', help='bar chart to write')
    parser.add_argument('--csv', help='also write the table as CSV')
    add_overwrite_argument(parser)
    args = parser.parse_args(argv)
    if len(args.dumps) > 2:
        parser.error('give one dump, or two to compare')
    if args.names and len(args.names) != len(args.dumps):
        parser.error(f'--names gives {len(args.names)} names for {len(args.dumps)} dumps')
    if args.sort == 'diff' and len(args.dumps) != 2:
        parser.error('--sort diff needs two dumps')
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    policy = dict(inputs=[*args.dumps, args.config, args.classes], overwrite=args.overwrite)
    check_outputs([args.out, args.csv], **policy)
    dumps = [load_dump(path) for path in args.dumps]
    if len(dumps) == 2:
        check_same_images(dumps[0], dumps[1], args.dumps)
    runs = args.names or [osp.splitext(osp.basename(p))[0] for p in args.dumps]
    labels = dumps[0]['labels']
    num_classes = labels.shape[1]
    if args.config:
        names = class_names_from_config(args.config, num_classes)
    elif args.classes:
        names = class_names_from_file(args.classes, num_classes)
    else:
        names = [str(i) for i in range(num_classes)]
    targets = torch.from_numpy(labels)
    ap = torch.stack(
        [
            average_precision(
                torch.from_numpy(d['scores']), targets, empty_policy=args.empty_policy
            )
            for d in dumps
        ]
    )
    maps = [mean_of_ap(row) for row in ap]
    percent = ap.numpy() * 100.0
    if args.sort == 'ap':
        order = np.argsort(-np.nan_to_num(percent[-1], nan=-1.0), kind='stable')
    elif args.sort == 'diff':
        order = np.argsort(-np.nan_to_num(percent[1] - percent[0], nan=-np.inf), kind='stable')
    else:
        order = np.arange(num_classes)
    positives = (labels > 0).sum(axis=0)

    def cell(value: float) -> str:
        return 'n/a' if np.isnan(value) else f'{value:.2f}'

    header = ['class', 'positives'] + [f'AP {run} (%)' for run in runs]
    if len(runs) == 2:
        header.append(f'{runs[1]} - {runs[0]}')
    rows = []
    for c in order:
        row = [names[c], int(positives[c])] + [cell(percent[r, c]) for r in range(len(runs))]
        if len(runs) == 2:
            row.append(cell(percent[1, c] - percent[0, c]))
        rows.append(row)
    summary = ['mAP', int(positives.sum())] + [cell(m) for m in maps]
    if len(runs) == 2:
        summary.append(cell(maps[1] - maps[0]))
    print(render_table(header, rows + [summary], args.style, title='per-class AP'))
    plot(names, runs, percent, order, args.out, maps, **policy)
    print(f'bar chart written to {args.out}')
    if args.csv:
        write_csv(args.csv, header, rows + [summary], **policy)


if __name__ == '__main__':
    run_tool(main)
