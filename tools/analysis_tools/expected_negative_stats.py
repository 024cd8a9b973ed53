"""How well EN's left-out classes find the hidden positives, from a run's checkpoint.

For every ``ExpectedNegativeLoss`` of the config (``mlkd.apis.expected_negatives``): of the
non-annotated classes each training image leaves out of the negative term, the fraction that are
positives; of the hidden positives, the fraction left out; the fraction of the remaining
negatives that are positives, beside AN's (every non-annotated class a negative). The training
set must keep its complete labels (the generated datasets; any dataset with ``observed_labels``).

    python tools/analysis_tools/expected_negative_stats.py CONFIG CKPT [CKPT ...] [--out FILE.md]
        [--cfg-options ...]

CONFIG is the run's config (the one its work dir keeps has the seed that drew its labels).
"""

from __future__ import annotations

import argparse

from mlkd.apis import expected_negative_report, quality_table
from mlkd.utils.cli import add_cfg_options_argument, add_checkpoint_table_arguments, load_config
from mlkd.utils.output_policy import check_output, write_text


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_checkpoint_table_arguments(parser)
    add_cfg_options_argument(parser)
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    policy = dict(inputs=[args.config, *args.checkpoints], overwrite=args.overwrite)
    if args.out:
        check_output(args.out, **policy)  # before the work, not after
    cfg = load_config(args.config, args.cfg_options)
    rows = {
        f'{checkpoint} ({loss})': values
        for checkpoint, losses in expected_negative_report(cfg, args.checkpoints).items()
        for loss, values in losses.items()
    }
    table = quality_table(rows)
    print(table, end='')
    if args.out:
        write_text(args.out, table, **policy)


if __name__ == '__main__':
    main()
