"""Paired comparison of a benchmark's students with a baseline student of the same seed.

    python tools/analysis_tools/demo_paired.py work_dirs/demo/results.json \
        --out docs/demo_comparison          # writes .md (table) and .png (error bars)
    python tools/analysis_tools/demo_paired.py work_dirs/multi_teacher/results.json \
        --baselines L2D-0to6 L2D-3to9 --stages L2D-both L2D-both-bestAP --out OUT
    python tools/analysis_tools/demo_paired.py work_dirs/ranking/results.json \
        --claims 3D:L2D 3D:MLD 3D:teacher --metric mAP --out OUT

For every compared stage of ``results.json`` (``tools/demo.py``; default: every stage but the
baselines and the teachers, ``teacher*``) and every baseline (default: the plain ``student``),
over the seeds they share: test (``--split val``: val) ``--metric`` (default mAP; a
``MultiLabelMetric`` key or a ``DistillFidelity`` key such as ``fidelity/mAP_vs_teacher``) mean ±
std, and the paired difference ``stage − baseline`` (same seed: same initial weights and batches)
with its 95 % t-interval over the seeds, ``mean(d) ± t_{0.975, n−1} · std(d) / √n``. The
interval needs at least two seeds. A teacher trained once is the same baseline for every seed.
``--claims A:B ...`` reads instead each claim "A beats B": held (interval above 0), not held, or
inverted (below 0); :mod:`mlkd.apis.paired`.
"""

from __future__ import annotations

import argparse
import json
import sys

from mlkd.apis.paired import DEFAULT_METRIC, claim_rows, paired_rows, paired_table, plot_paired
from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, write_text


def build_parser() -> argparse.ArgumentParser:
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
        '--claims',
        nargs='+',
        metavar='A:B',
        help='claims "A beats B" to read (instead of --baselines / --stages)',
    )
    parser.add_argument(
        '--split',
        choices=('test', 'val'),
        default='test',
        help='the split compared (default: test)',
    )
    parser.add_argument(
        '--metric', default=DEFAULT_METRIC, help=f'the metric compared (default: {DEFAULT_METRIC})'
    )
    add_overwrite_argument(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    policy = dict(overwrite=args.overwrite, inputs=[args.results])
    check_outputs([args.out + '.md', args.out + '.png'], **policy)
    with open(args.results, encoding='utf-8') as f:
        saved = json.load(f)
    missing = saved.get('protocol', {}).get('missing')
    if missing:
        parser.error(
            f'{args.results} is a partial study results file ({len(missing)} runs not stored, '
            f'e.g. {missing[0]}): finish it (study.py --reuse {args.results}) before comparing'
        )
    results = saved['results']
    try:
        if args.claims:
            pairs = [tuple(claim.split(':')) for claim in args.claims]
            bad = [claim for claim, pair in zip(args.claims, pairs) if len(pair) != 2]
            if bad:
                raise ValueError(f'--claims: {bad} are not of the form A:B')
            rows = claim_rows(results, pairs, args.split, args.metric)
        else:
            stages = args.stages or [
                s for s in results if s not in args.baselines and not s.startswith('teacher')
            ]
            if not stages:
                raise ValueError(
                    f'no stage to compare with {args.baselines} (the default leaves out the '
                    f'baselines and teacher*; stages of {args.results}: {list(results)}); name '
                    'them with --stages'
                )
            rows = [
                row
                for baseline in args.baselines
                for row in paired_rows(results, args.split, baseline, stages, args.metric)
            ]
    except (KeyError, ValueError) as error:
        parser.error(f'{args.results}: ' + str(error).strip('"'))
    text = paired_table(results, rows, args.split)
    print(text)
    plot_paired(rows, args.out + '.png', args.split, **policy)  # the one that may fail, first
    write_text(args.out + '.md', text + '\n', **policy)
    return 0


if __name__ == '__main__':
    sys.exit(main())
