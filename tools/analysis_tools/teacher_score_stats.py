"""A trained teacher's scores on its training split: Table C.4 of the 3D paper.

C. Li, G. Cheng, "Positive Divide and Negative Discrepancy: A New Perspective on Multi-Label Logit
Distillation", supplement Table C.4 (ResNet-101 teachers on MS-COCO, PASCAL-VOC, NUS-WIDE): the
per-label accuracy at threshold 0.5, the mean score on positive labels and the mean score on
negative labels, computed on the training split used for distillation. It supports the paper's
Assumption 3.1 (the teacher is confident and correct on negative labels).

    python tools/analysis_tools/teacher_score_stats.py configs/teachers/coco_resnet101_mldecoder.py \
        work_dirs/teachers/coco_resnet101_mldecoder --out-dir work_dirs/table_c4/coco \
        [--split train|test] [--threshold 0.5] [--bins 20] [--max-samples N] \
        [--batch-size 64] [--num-workers 4] [--device cuda] [--overwrite] [--cfg-options ...]

CONFIG is the teacher's config (its ``model`` and data); CHECKPOINT a file or a work dir (its last
checkpoint; loaded strictly; a distiller checkpoint gives its student). ``--split train`` (the
default) runs the training images through the test pipeline (no augmentation), with the training
dataset's labels (VOC: L2D's difficult-as-positive policy); scores are the sigmoid of the logits;
entries whose target is -1 (ignored) count nowhere. Math: :func:`mlkd.evaluation.score_distribution.
label_score_statistics` (averages over (image, label) entries, and over classes as a second
reading) and :func:`~mlkd.evaluation.score_distribution.label_score_histograms`.

Writes, in ``--out-dir`` (existing files refused unless ``--overwrite``):
``teacher_score_stats.md`` (the table, in the paper's layout: accuracy in %, scores in [0, 1]),
``teacher_score_stats.csv`` and ``teacher_score_stats.png`` (the score histograms on positive and
on negative labels, log-scale counts).
"""

from __future__ import annotations

import argparse
import os.path as osp

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import torch
from mmengine.registry import init_default_scope

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.apis.classifier_outputs import (
    build_loader,
    collect_logits_and_targets,
    load_classifier,
)
from mlkd.evaluation.score_distribution import (
    label_score_histograms,
    label_score_statistics,
)
from mlkd.utils.cli import add_cfg_options_argument, add_device_argument, load_config
from mlkd.utils.output_policy import (
    add_overwrite_argument,
    open_output,
    output_paths,
    save_figure,
)
from mlkd.utils.tables import render_table, write_csv

OUT_NAME = 'teacher_score_stats'
#: (key of the statistics, row name of the paper's table, scale for the Markdown table, digits)
ROWS = (
    ('accuracy', 'Accuracy (%)', 100.0, 2),
    ('positive_score', 'P. Score', 1.0, 4),
    ('negative_score', 'N. Score', 1.0, 4),
)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help="the teacher's config (model and data)")
    parser.add_argument('checkpoint', help='checkpoint file or work dir (its last checkpoint)')
    parser.add_argument('--out-dir', required=True)
    parser.add_argument(
        '--split',
        choices=('train', 'test'),
        default='train',
        help='train (default, as the paper): the training images through the test '
        'pipeline; test: the test dataloader',
    )
    parser.add_argument(
        '--threshold',
        type=float,
        default=0.5,
        help='a score at or above it predicts positive (accuracy)',
    )
    parser.add_argument('--bins', type=int, default=20, help='histogram bins on [0, 1]')
    parser.add_argument('--max-samples', type=int, help='only the first N images of the split')
    parser.add_argument('--batch-size', type=int)
    parser.add_argument('--num-workers', type=int)
    add_device_argument(parser, help=None, choices=None)
    add_overwrite_argument(parser)
    add_cfg_options_argument(parser)
    return parser.parse_args(argv)


def plot(
    positive: np.ndarray, negative: np.ndarray, edges: np.ndarray, path: str, title: str, **policy
) -> None:
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for axis, counts, name, colour in (
        (axes[0], positive, 'positive labels', 'tab:green'),
        (axes[1], negative, 'negative labels', 'tab:red'),
    ):
        axis.bar(
            edges[:-1], np.maximum(counts, 0), width=edges[1] - edges[0], align='edge', color=colour
        )
        axis.set_yscale('symlog', linthresh=1)
        axis.set_xlim(0, 1)
        axis.set_xlabel('score (sigmoid)')
        axis.set_title(f'{name} ({int(counts.sum())} entries)', fontsize=9)
    axes[0].set_ylabel('entries (log scale)')
    figure.suptitle(title, fontsize=9)
    save_figure(figure, path, dpi=120, tight_layout=True, **policy)


def main(argv=None) -> dict[str, float]:
    args = parse_args(argv)
    if not 0 < args.threshold < 1:
        raise SystemExit(f'--threshold must be in (0, 1), got {args.threshold}')
    if args.max_samples is not None and args.max_samples < 1:
        raise SystemExit(f'--max-samples must be >= 1, got {args.max_samples}')
    policy = dict(inputs=[args.config, args.checkpoint], overwrite=args.overwrite)
    outputs = output_paths(osp.join(args.out_dir, OUT_NAME), ['md', 'csv', 'png'], **policy)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    device = torch.device(args.device)
    loader = build_loader(cfg, args.split, args.batch_size, args.num_workers)
    model = load_classifier(cfg, args.checkpoint, 'teacher', device)
    logits, targets = collect_logits_and_targets(model, loader, args.max_samples, device)
    scores = torch.sigmoid(logits.double()).numpy()
    stats = label_score_statistics(scores, targets.numpy(), args.threshold)
    positive, negative, edges = label_score_histograms(scores, targets.numpy(), args.bins)

    setting = (
        f'{osp.basename(args.config)}, {args.split} split, {stats["num_images"]} images, '
        f'{stats["num_positive"]} positive / {stats["num_negative"]} negative entries, '
        f'threshold {args.threshold:g}'
    )
    table = render_table(
        ['', 'averaged over entries', 'averaged over classes'],
        [
            [
                name,
                f'{stats[key] * scale:.{digits}f}',
                f'{stats["class_" + key] * scale:.{digits}f}',
            ]
            for key, name, scale, digits in ROWS
        ],
    )
    with open_output(outputs['md'], **policy) as file:
        file.write(
            f"{table}\n\n{setting}; checkpoint {args.checkpoint}. The 3D paper's Table C.4 "
            'compares with the "averaged over entries" column.\n'
        )
    write_csv(outputs['csv'], list(stats), [list(stats.values())], **policy)
    plot(positive, negative, edges, outputs['png'], f'Teacher scores: {setting}', **policy)
    print(table)
    print(f'wrote {", ".join(outputs.values())}')
    return stats


if __name__ == '__main__':
    main()
