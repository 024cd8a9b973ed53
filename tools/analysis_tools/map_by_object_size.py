"""mAP by object size on COCO (the SCL paper's Fig. D.1) from a ``tools/test.py --out`` dump.

Usage::

    python tools/test.py CONFIG CKPT --out work_dirs/x/val_scores.npz
    python tools/analysis_tools/map_by_object_size.py work_dirs/x/val_scores.npz \
        data/coco/annotations/instances_val2014.json --class-order alphabetical \
        [--num-bins 5] [--out-dir work_dirs/x/object_size]

Writes ``map_by_object_size.md`` (the table, also printed) and ``map_by_object_size.png``. The
binning rule is in :mod:`mlkd.evaluation.object_size`; ``--class-order`` / ``--keep-unlabeled``
must match the evaluated dataset's, so that the dump's rows and columns are the json's.

SCL paper: T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (supplementary material).
"""

from __future__ import annotations

import argparse
import os.path as osp

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.evaluation.metrics.dump import load_score_dump
from mlkd.evaluation.object_size import coco_positive_areas, map_by_object_size, size_bin_edges
from mlkd.utils.output_policy import add_overwrite_argument, open_output, output_paths, save_figure


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('dump', help='.npz written by tools/test.py --out')
    parser.add_argument('ann_file', help='COCO instances json of the evaluated split')
    parser.add_argument(
        '--class-order', default='alphabetical', choices=['alphabetical', 'category_id']
    )
    parser.add_argument('--keep-unlabeled', action='store_true')
    add_overwrite_argument(parser)
    parser.add_argument('--num-bins', type=int, default=5)
    parser.add_argument('--out-dir', help="default: the dump's folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = args.out_dir or osp.dirname(osp.abspath(args.dump))
    policy = dict(inputs=[args.dump, args.ann_file], overwrite=args.overwrite)
    outputs = output_paths(osp.join(out_dir, 'map_by_object_size'), ['md', 'png'], **policy)
    dump = load_score_dump(args.dump)
    areas = coco_positive_areas(args.ann_file, args.class_order, args.keep_unlabeled)
    if areas.shape != dump['scores'].shape:
        raise ValueError(
            f'{args.dump} holds scores {dump["scores"].shape} but {args.ann_file} '
            f'gives {areas.shape} (images x classes): not the same split, or '
            f"--keep-unlabeled differs from the dataset's"
        )
    rows = map_by_object_size(
        dump['scores'], dump['labels'], areas, size_bin_edges(areas, args.num_bins)
    )
    lines = ['| bin | relative box area | positives | mAP (%) |', '|---|---|---|---|']
    lines += [
        f'| {b + 1} | {r["low"]:.4f} - {r["high"]:.4f} | {r["num_positives"]} | {r["mAP"]:.2f} |'
        for b, r in enumerate(rows)
    ]
    table = '\n'.join(lines)
    print(table)
    with open_output(outputs['md'], **policy) as f:
        f.write(f'mAP by object size: {args.dump} on {args.ann_file}\n\n{table}\n')

    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f'{r["low"]:.3f}-\n{r["high"]:.3f}' for r in rows]
    ax.bar(range(len(rows)), [r['mAP'] for r in rows], color='tab:blue')
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_xlabel('relative box area of the positive (equal-count bins)')
    ax.set_ylabel('mAP (%)')
    ax.set_title(osp.basename(args.dump))
    save_figure(fig, outputs['png'], dpi=120, tight_layout=True, **policy)
    print(f'written to {out_dir}')


if __name__ == '__main__':
    main()
