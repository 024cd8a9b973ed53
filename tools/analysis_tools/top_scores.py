"""Distribution of the top-k scores per image (the SCL paper's Fig. F.1) from a score dump.

Usage::

    python tools/analysis_tools/top_scores.py work_dirs/x/val_scores.npz [--k 4] [--bins 10] \
        [--out-dir work_dirs/x/top_scores]

Writes ``top_scores.md`` (per bin, the fraction of images whose r-th highest score falls in it;
also printed) and ``top_scores.png`` (one histogram per rank). Scores must be probabilities; the
dump is what ``tools/test.py --out`` writes.

SCL paper: T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (supplementary material).
"""

from __future__ import annotations

import argparse
import os.path as osp

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.evaluation.metrics.dump import load_score_dump
from mlkd.evaluation.score_distribution import top_score_histogram
from mlkd.utils.output_policy import add_overwrite_argument, open_output, output_paths, save_figure


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('dump', help='.npz written by tools/test.py --out')
    parser.add_argument('--k', type=int, default=4)
    parser.add_argument('--bins', type=int, default=10)
    parser.add_argument('--out-dir', help="default: the dump's folder")
    add_overwrite_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = args.out_dir or osp.dirname(osp.abspath(args.dump))
    policy = dict(inputs=[args.dump], overwrite=args.overwrite)
    outputs = output_paths(osp.join(out_dir, 'top_scores'), ['md', 'png'], **policy)
    scores = load_score_dump(args.dump)['scores']
    counts, edges = top_score_histogram(scores, args.k, args.bins)
    share = counts / len(scores)
    lines = [
        '| score | ' + ' | '.join(f'top-{r + 1}' for r in range(args.k)) + ' |',
        '|---|' + '---|' * args.k,
    ]
    lines += [
        f'| {edges[b]:.2f} - {edges[b + 1]:.2f} | '
        + ' | '.join(f'{share[r, b]:.3f}' for r in range(args.k))
        + ' |'
        for b in range(args.bins)
    ]
    table = '\n'.join(lines)
    print(table)
    with open_output(outputs['md'], **policy) as f:
        f.write(
            f'Top-{args.k} scores of {len(scores)} images: {args.dump} (fraction of images '
            f'per bin)\n\n{table}\n'
        )

    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, args.k, figsize=(2.6 * args.k, 2.6), sharey=True)
    for r, ax in enumerate(axes if args.k > 1 else [axes]):
        ax.bar(edges[:-1], share[r], width=edges[1] - edges[0], align='edge', color='tab:blue')
        ax.set_title(f'top-{r + 1} score')
        ax.set_xlim(0, 1)
    axes_first = axes[0] if args.k > 1 else axes
    axes_first.set_ylabel('fraction of images')
    save_figure(fig, outputs['png'], dpi=120, tight_layout=True, **policy)
    print(f'written to {out_dir}')


if __name__ == '__main__':
    main()
