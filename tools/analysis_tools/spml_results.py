"""Table and chart of the single-positive / partial-label MultiDigits runs (configs/spml/README.md).

Each run is a work dir ``<root>/<config name>_seed<S>`` trained with ``tools/train.py`` and
evaluated with ``tools/test.py <config> <work dir>/epoch_12.pth --work-dir <work dir>/test``. The
script reads the test metrics (``test/<timestamp>/<timestamp>.json``, the latest) and the last
validation metrics of the training log (``<timestamp>/vis_data/scalars.json``), and writes a
markdown table (mean ± sample std over the seeds found, the seeds listed) and a PNG with one
point per seed and the mean.

    python tools/analysis_tools/spml_results.py work_dirs/spml_results --out configs/spml/results
"""

from __future__ import annotations

import argparse
import glob
import json
import os.path as osp
import re
from collections import defaultdict

from mlkd.utils.output_policy import add_overwrite_argument, check_outputs, save_figure, write_text
from mlkd.utils.tables import format_mean_std, mean_std, render_table

#: (group, config name, label) in table order. Groups: labels observed per training image.
ROWS = (
    ('full labels', 'full_labels', 'BCE on the clean labels'),
    ('single positive', 'an', 'AN'),
    ('single positive', 'an_ls', 'AN-LS'),
    ('single positive', 'wan', 'WAN'),
    ('single positive', 'epr', 'EPR'),
    ('single positive', 'role', 'ROLE'),
    ('single positive', 'en', 'EN'),
    ('single positive', 'cl', 'EN + CL'),
    ('single positive', 'scl', 'EN + SCL'),
    ('75 % of positives', 'an_partial75', 'AN'),
    ('75 % of positives', 'en_partial75', 'EN'),
    ('75 % of positives', 'scl_partial75', 'EN + SCL'),
    ('40 % of positives', 'an_partial40', 'AN'),
    ('40 % of positives', 'en_partial40', 'EN'),
    ('40 % of positives', 'scl_partial40', 'EN + SCL'),
)
METRICS = (
    ('mAP', 'test mAP'),
    ('CF1_oracle', 'test CF1 (top-k)'),
    ('OF1_oracle', 'test OF1 (top-k)'),
)


def _latest(pattern: str) -> str | None:
    paths = sorted(glob.glob(pattern))
    return paths[-1] if paths else None


def read_run(work_dir: str) -> dict | None:
    """Test metrics and the last val mAP of one run; ``None`` if it has no test result."""
    test = _latest(osp.join(work_dir, 'test', '*', '*.json'))
    if test is None:
        return None
    with open(test) as f:
        result = json.load(f)
    scalars = _latest(osp.join(work_dir, '[0-9]*', 'vis_data', 'scalars.json'))
    val = None
    if scalars is not None:
        with open(scalars) as f:
            for line in f:
                entry = json.loads(line)
                if 'mAP' in entry:
                    val = entry['mAP']
    result['val_mAP'] = val
    return result


def collect(root: str) -> dict[str, dict[int, dict]]:
    runs = defaultdict(dict)
    for work_dir in sorted(glob.glob(osp.join(root, '*_seed*'))):
        match = re.fullmatch(r'(.+)_seed(\d+)', osp.basename(work_dir))
        result = read_run(work_dir) if match and osp.isdir(work_dir) else None
        if result is not None:
            # Work dirs are named after the config file (``en_multidigits_seed0``) or its row.
            name = re.sub(r'_multidigits$', '', match.group(1))
            runs[name][int(match.group(2))] = result
    return runs


def table(runs: dict) -> str:
    header = ['labels', 'method', 'config', 'seeds', *[title for _, title in METRICS], 'val mAP']
    rows = []
    for group, name, label in ROWS:
        if name not in runs:
            continue
        seeds = sorted(runs[name])
        values = [[runs[name][s][key] for s in seeds] for key, _ in METRICS]
        val = [runs[name][s]['val_mAP'] for s in seeds if runs[name][s]['val_mAP'] is not None]
        folder = 'partial/' if 'partial' in name else ''
        rows.append(
            [
                group,
                label,
                f'`{folder}{name}_multidigits.py`',
                ','.join(map(str, seeds)),
                *[format_mean_std(v) for v in values],
                format_mean_std(val),
            ]
        )
    return render_table(header, rows)


def chart(runs: dict, path: str, **policy) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    present = [(group, name, label) for group, name, label in ROWS if name in runs]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(present) + 1.2))
    colours = {}
    for row, (group, name, _label) in enumerate(present):
        first = group not in colours
        colour = colours.setdefault(group, f'C{len(colours)}')
        seeds = sorted(runs[name])
        values = [runs[name][s]['mAP'] for s in seeds]
        y = len(present) - 1 - row
        ax.scatter(
            values, [y] * len(values), color=colour, s=22, zorder=3, label=group if first else None
        )
        mean, _ = mean_std(values)
        ax.plot([mean, mean], [y - 0.3, y + 0.3], color='black', lw=1.5, zorder=4)
    ax.set_yticks(range(len(present)))
    ax.set_yticklabels([f'{label} ({group})' for group, _, label in reversed(present)])
    ax.set_xlabel('test mAP (%): one dot per seed, bar = mean')
    ax.set_title('MultiDigits, held-out test split (1000 mosaics)')
    ax.grid(axis='x', alpha=0.3)
    ax.legend(loc='best', fontsize=8)
    save_figure(fig, path, dpi=120, tight_layout=True, **policy)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('root', help='folder holding <config>_seed<S> work dirs')
    parser.add_argument('--out', help='prefix of <out>.md and <out>.png')
    add_overwrite_argument(parser)
    args = parser.parse_args(argv)
    policy = dict(inputs=[args.root], overwrite=args.overwrite)
    if args.out:
        check_outputs([args.out + '.md', args.out + '.png'], **policy)
    runs = collect(args.root)
    if not runs:
        raise SystemExit(f'no run with a test result under {args.root!r}')
    text = table(runs)
    print(text)
    if args.out:
        write_text(args.out + '.md', text + '\n', **policy)
        chart(runs, args.out + '.png', **policy)
        print(f'wrote {args.out}.md and {args.out}.png')


if __name__ == '__main__':
    main()
