"""Loss-weight sensitivity: train a config over a grid of two config keys and several seeds.

    python tools/analysis_tools/sweep.py configs/demo/3d.py \\
        --x model.distill_losses.pd.loss_weight 1 10 100 \\
        --y model.distill_losses.ndd.loss_weight 1 10 \\
        --seeds 0 1 --work-dir work_dirs/sweep_3d \\
        --cfg-options model.teacher_ckpt=work_dirs/demo/seed0/teacher/epoch_12.pth

Every cell (x value, y value, seed) is one training run of the config with the two keys set (as
``--cfg-options`` would set them; list entries by index, ``model.losses.0.loss_weight``) and the
seed; its validation metrics go to ``<work-dir>/results/<cell>.json``, so a sweep started again
skips the finished cells. Outputs, refreshed after every cell: ``sweep.md``, ``sweep.csv`` and
``sweep.png`` (validation only, never test). With ``--cfg-options model.teacher_cache.dir=DIR``
the teacher runs once per seed. The rules (what is refused, what is reused) are those of
:mod:`mlkd.apis.sweep`.
"""

from __future__ import annotations

import argparse
import ast

import mlkd  # noqa: F401
from mlkd.apis.runs import METRICS
from mlkd.apis.sweep import SweepRequestError, run_sweep
from mlkd.utils.cli import add_cfg_options_argument
from mlkd.utils.output_policy import add_overwrite_argument


def parse_value(text: str):
    """``'10'`` -> 10, ``'0.5'`` -> 0.5, ``'True'`` -> True; anything else stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('config')
    for axis, table_lines in (('x', 'columns'), ('y', 'rows')):
        parser.add_argument(
            f'--{axis}',
            nargs='+',
            required=True,
            metavar=('KEY', 'VALUE'),
            help=f'config key of the {table_lines}, then its values',
        )
    parser.add_argument('--seeds', type=int, nargs='+', default=[0])
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--metric', default='mAP', choices=list(METRICS))
    add_cfg_options_argument(parser, help='other config overrides applied to every cell')
    parser.add_argument('--verbose', action='store_true', help='show the training logs')
    add_overwrite_argument(
        parser,
        help='replace what an earlier sweep of another config or grid '
        'left in the work dir (its tables, and cells it finished with another '
        'config, which are trained again)',
    )
    args = parser.parse_args(argv)
    grid = {}
    for axis in ('x', 'y'):
        key, *values = getattr(args, axis)
        if not values:
            parser.error(f'--{axis} needs a config key and at least one value')
        grid[axis] = key, [parse_value(v) for v in values]
    try:
        run_sweep(
            args.config,
            grid['x'],
            grid['y'],
            args.work_dir,
            seeds=args.seeds,
            metric=args.metric,
            options=args.cfg_options,
            verbose=args.verbose,
            overwrite=args.overwrite,
        )
    except SweepRequestError as error:
        parser.error(str(error))


if __name__ == '__main__':
    main()
