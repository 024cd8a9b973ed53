"""Fill a teacher-output cache for a distillation config without training a student.

    python tools/cache_teacher.py CONFIG --cache-dir DIR --epochs N [--amp float16|bfloat16]
        [--channels-last] [--device cuda] [--teacher NAME] [--cfg-options model.teacher_ckpt=T]
    python tools/train.py CONFIG --cfg-options model.teacher_ckpt=T \\
        model.teacher_cache.dir=DIR model.teacher_cache.mode=read        # then train from it

A multi-teacher config (``MultiTeacherDistiller``) has a cache per teacher: fill each with
``--teacher NAME`` and train with ``model.teachers.NAME.cache.dir=DIR
model.teachers.NAME.cache.mode=read``.

Runs only the teacher over the config's training batches, epoch by epoch, and stores the outputs
its losses read (:func:`mlkd.apis.fill_teacher_cache`, which says when a run reads them
bit-identically: same device and precision, ``--amp`` as the run's). Epochs already in the cache
are skipped, so a larger ``--epochs`` extends a cache.
"""

from __future__ import annotations

import argparse
import os
import os.path as osp

import mlkd  # noqa: F401
from mlkd.apis import AMP_DTYPES, fill_teacher_cache
from mlkd.utils.cli import add_cfg_options_argument, add_device_argument, load_config


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        'config', help='a distillation config (SingleTeacherDistiller or MultiTeacherDistiller)'
    )
    parser.add_argument(
        '--teacher',
        help="the teacher to cache (a key of a MultiTeacherDistiller's model.teachers; not needed "
        'with one teacher)',
    )
    parser.add_argument('--cache-dir', required=True, help='the cache folder (new or a cache)')
    parser.add_argument(
        '--epochs',
        type=int,
        required=True,
        help='epochs to cache: 0 .. N-1 (the training run reads epoch e)',
    )
    parser.add_argument(
        '--dtype',
        default='float32',
        choices=['float32', 'float16', 'bfloat16'],
        help='storage dtype (float32 is exact)',
    )
    parser.add_argument(
        '--amp',
        choices=sorted(AMP_DTYPES),
        help='run the teacher under autocast (match the training run)',
    )
    parser.add_argument(
        '--channels-last',
        action='store_true',
        help='channels-last teacher inputs (recorded; see the module doc)',
    )
    add_device_argument(parser, help=None, choices=None)
    add_cfg_options_argument(parser, help='override config entries, e.g. model.teacher_ckpt=T')
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error(f'--epochs must be at least 1, got {args.epochs}')
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    cache = fill_teacher_cache(
        cfg,
        args.cache_dir,
        args.epochs,
        dtype=args.dtype,
        amp=args.amp,
        channels_last=args.channels_last,
        device=args.device,
        teacher=args.teacher,
        log=lambda text: print(text, flush=True),
    )
    size = sum(
        osp.getsize(osp.join(d, f)) for d, _, files in os.walk(args.cache_dir) for f in files
    )
    print(f'done: epochs {cache.epochs_written} in {args.cache_dir} ({size / 2**20:.1f} MiB)')


if __name__ == '__main__':
    main()
