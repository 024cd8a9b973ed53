"""Check that distillation runs right on this device (CUDA, or CPU): a pass/fail table.

For each method (3D, L2D, FitNet, CRD; distillers of the shipped configs, random teacher):
an fp16-autocast step with dynamic loss scaling against an fp32 step, recovery from an injected
loss-scale overflow, a teacher-cache step bit-identical to the live one, channels-last, peak
memory; then metrics of device tensors against CPU, and DDP steps of 1 and 2 processes (NCCL on
>= 2 GPUs, gloo on CPU) against one process on the whole batch. Every row reports what it
measured (mlkd/benchmarks/device_checks.py says what each compares). Exit code 0 only if no check
fails ('skip': not possible here, e.g. 2 processes on 1 GPU).

Sizes: 'full' (default on CUDA) is the paper pair, ResNet-101 ML-Decoder teacher -> ResNet-34
student at 224 px, batch 32; 'tiny' (default on CPU) the MultiDigits pair at 32 px, batch 4.

    python tools/benchmarks/gpu_check.py [--device cuda|cpu] [--size full|tiny]
        [--method 3d l2d fitnet crd] [--batch 32] [--repeats 3] [--out gpu_check.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import mlkd
from mlkd.benchmarks.common import environment, markdown_table, warnings_only, write_json
from mlkd.benchmarks.device_checks import METHODS, SIZES, Setup, run_checks
from mlkd.utils.cli import add_device_argument, parse_checked_arguments
from mlkd.utils.output_policy import add_overwrite_argument


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_device_argument(parser)
    parser.add_argument(
        '--size', choices=sorted(SIZES), help="'full' (default on CUDA) or 'tiny' (default on CPU)"
    )
    parser.add_argument(
        '--method',
        nargs='+',
        default=list(METHODS),
        choices=METHODS,
        help='method bases of configs/_base_/methods checked (default: all four)',
    )
    parser.add_argument('--batch', type=int, help='global batch, even (default: the size preset)')
    parser.add_argument('--image-size', type=int, help="image side (default: the pair's)")
    parser.add_argument('--repeats', type=int, default=3, help='timed steps per timing (median)')
    parser.add_argument(
        '--processes', type=int, default=2, help='processes of the multi-process DDP check'
    )
    parser.add_argument(
        '--init-scale',
        type=float,
        default=2.0**16,
        help='loss scale the fp16 steps start from (default 65536, as training)',
    )
    parser.add_argument('--out', help='write the results (environment and checks) to this JSON')
    add_overwrite_argument(parser)
    args = parse_checked_arguments(parser, argv)
    args.size = args.size or ('full' if args.device == 'cuda' else 'tiny')
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # cuBLAS is deterministic (teacher-cache check) only with this set before it starts.
    os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
    mlkd.register_all_modules()
    setup = Setup(
        device=args.device,
        size=args.size,
        methods=tuple(args.method),
        batch=args.batch,
        image_size=args.image_size,
        repeats=args.repeats,
        processes=args.processes,
        init_scale=args.init_scale,
    )
    env = environment(args.device)
    print(
        f'device: {env["device"]} (torch {env["torch"]}, CUDA {env.get("cuda")}, driver '
        f'{env.get("driver")}); pair {setup.pair}, {setup.image_size} px, batch {setup.batch}',
        flush=True,
    )
    start = time.perf_counter()
    with warnings_only():
        checks = run_checks(
            setup, lambda what: print(f'[{time.perf_counter() - start:6.1f} s] {what}', flush=True)
        )
    print(
        markdown_table(
            ('check', 'method', 'result', 'measured'),
            [(c.name, c.method, c.status.upper(), c.measured) for c in checks],
        )
    )
    failed = [c for c in checks if c.status == 'fail']
    counts = {s: sum(c.status == s for c in checks) for s in ('pass', 'fail', 'skip', 'info')}
    print(
        ', '.join(f'{n} {s}' for s, n in counts.items()) + f'; {time.perf_counter() - start:.0f} s'
    )
    if args.out:
        write_json(
            args.out,
            dict(
                environment=env,
                setup=dict(
                    pair=setup.pair,
                    size=setup.size,
                    batch=setup.batch,
                    image_size=setup.image_size,
                    methods=setup.methods,
                ),
                checks=[vars(c) for c in checks],
            ),
            overwrite=args.overwrite,
        )
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
