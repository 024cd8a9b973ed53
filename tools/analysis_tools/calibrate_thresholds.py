"""Per-class decision thresholds chosen on the validation split, and what they change.

    python tools/analysis_tools/calibrate_thresholds.py CONFIG CHECKPOINT --out thresholds.json
        [--default 0.5] [--cfg-options ...] [--overwrite]

For each class, the threshold that maximises its F1 on the config's val split (ties: the highest
threshold; between two scores: the midpoint; classes without positives keep ``--default``, listed;
rules in ``mlkd/evaluation/thresholds.py``). Writes a JSON file with the class names, the
thresholds and their provenance (config, its fingerprint, checkpoint), and prints CP / CR / CF1 /
OP / OR / OF1 of val and test at ``--default`` and at the calibrated thresholds, and the
per-class table. A distillation config calibrates its student. Use the file with
``tools/infer.py --thresholds`` or ``MultiLabelMetrics(thresholds=...)``, e.g.
``tools/test.py CONFIG CKPT --cfg-options test_evaluator.thresholds=thresholds.json``.
"""

import argparse

from terminaltables import AsciiTable

from mlkd.apis import calibrate_thresholds
from mlkd.utils.cli import add_cfg_options_argument, add_trust_checkpoint_argument, probability
from mlkd.utils.output_policy import add_overwrite_argument

COLUMNS = ('CP', 'CR', 'CF1', 'CF1macro', 'OP', 'OR', 'OF1')


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Calibrate per-class thresholds on val')
    parser.add_argument('config', help='config file (a distillation config calibrates its student)')
    parser.add_argument('checkpoint', help='checkpoint file or work dir (its last checkpoint)')
    parser.add_argument('--out', required=True, help='the thresholds JSON file to write')
    parser.add_argument(
        '--default',
        type=probability,
        default=0.5,
        help='threshold of classes without positives on val',
    )
    add_cfg_options_argument(parser, help='override config entries')
    add_overwrite_argument(parser)
    add_trust_checkpoint_argument(parser)
    return parser.parse_args(argv)


def summary_table(record: dict, default: float) -> str:
    rows = [['split', 'thresholds', *COLUMNS]]
    for split, by_rule in record['metrics'].items():
        for rule, label in (('default', f'{default:g}'), ('calibrated', 'calibrated')):
            rows.append([split, label, *(f'{by_rule[rule][c]:.2f}' for c in COLUMNS)])
    return AsciiTable(rows, title='thresholded metrics (%)').table


def class_table(record: dict) -> str:
    rows = [['class', 'threshold', 'val F1 (%)', 'val positives']]
    for name, thr, f1, positives, calibrated in zip(
        record['classes'],
        record['thresholds'],
        record['val_f1'],
        record['num_positives'],
        record['calibrated'],
    ):
        shown = f'{thr:.4f}' if calibrated else f'{thr:g} (default: no positives)'
        rows.append([name, shown, '-' if f1 is None else f'{100 * f1:.2f}', positives])
    return AsciiTable(rows, title=f'per-class thresholds ({record["split"]})').table


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    record = calibrate_thresholds(
        args.config,
        args.checkpoint,
        args.out,
        cfg_options=args.cfg_options,
        default=args.default,
        overwrite=args.overwrite,
    )
    print(class_table(record))
    print(summary_table(record, args.default))
    for split, why in record.get('not_reported', {}).items():
        print(f'{split}: not reported, its dataset is {why}')
    missing = [c for c, ok in zip(record['classes'], record['calibrated']) if not ok]
    if missing:
        print(f'no positives on {record["split"]} (default {args.default:g} kept): {missing}')
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
