"""Training throughput at paper scale, and the data pipeline's speed per loader worker.

Part 'steps' (mlkd/benchmarks/train_throughput.py): images/s and peak memory of a training step,
ResNet-101 ML-Decoder teacher -> ResNet-34 student (configs/_base_/pairs/coco_resnet101_to_
resnet34.py) at 224 px batch 64 and 448 px batch 32: the student alone, live distillation (3D,
L2D, MLD) and cached distillation (teacher cache), fp32 and AMP; ratios to the student step,
cached to live, AMP to fp32.

Part 'data' (mlkd/benchmarks/data_pipeline.py): images/s of one worker (one thread) decoding
generated COCO-format JPEGs (or --data-root: MS-COCO itself) through the shipped COCO train
pipelines (configs/_base_/datasets/coco2014_*.py) with their decoder and the other, through
torchvision transforms.v2 pipelines with the same crops (decoded by torchvision.io, PIL or
OpenCV), and decoders alone (nvJPEG too on CUDA); --workers times real DataLoaders.

With both parts, the workers a GPU needs: step images/s / one worker's images/s. Prints
Markdown tables; --out writes everything as JSON. --tiny: a quick run, the suite's (MultiDigits
pair at 32 px, batch 4; one timed step or pass after one; 8 images).

    python tools/benchmarks/benchmark_train_throughput.py [--part steps data] [--tiny]
        [--device cuda] [--shapes 224x64 448x32] [--method 3d l2d mld] [--precision fp32 amp]
        [--images 300] [--pipelines l2d two_views two_way spml] [--clock cpu] [--out r.json]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import mlkd
from mlkd.benchmarks import data_pipeline, train_throughput
from mlkd.benchmarks.common import environment, markdown_table, mib, warnings_only, write_json
from mlkd.utils.cli import add_device_argument, parse_checked_arguments
from mlkd.utils.output_policy import add_overwrite_argument


def shape(text: str) -> tuple[int, int]:
    size, _, batch = text.partition('x')
    try:
        return int(size), int(batch)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'expected SIZExBATCH such as 224x64, got {text!r}'
        ) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--part',
        nargs='+',
        default=['steps', 'data'],
        choices=['steps', 'data'],
        help='training steps and / or the data pipeline (default both)',
    )
    parser.add_argument('--tiny', action='store_true', help="the suite's shapes (see above)")
    add_device_argument(parser)
    steps = parser.add_argument_group('steps')
    steps.add_argument('--shapes', nargs='+', type=shape, help='SIZExBATCH (default 224x64 448x32)')
    steps.add_argument(
        '--method',
        nargs='+',
        default=list(train_throughput.METHODS),
        help='method bases of configs/_base_/methods, live and cached (default 3d l2d mld)',
    )
    steps.add_argument(
        '--precision',
        nargs='+',
        default=['fp32', 'amp'],
        choices=['fp32', 'amp'],
        help='amp: float16 + loss scaling on CUDA, bfloat16 on CPU',
    )
    steps.add_argument('--no-cached', action='store_true', help='skip the cached variants')
    steps.add_argument('--repeats', type=int, default=10, help='timed steps (median)')
    steps.add_argument('--warmup', type=int, default=3, help='untimed steps first')
    data = parser.add_argument_group('data')
    data.add_argument('--images', type=int, help='images generated and read (default 300)')
    data.add_argument(
        '--data-root', help='read this COCO-2014 folder instead of generated images (MS-COCO)'
    )
    data.add_argument(
        '--pipelines',
        nargs='+',
        default=list(data_pipeline.PIPELINES),
        choices=list(data_pipeline.PIPELINES),
        help='shipped COCO train pipelines (configs/_base_/datasets/coco2014_<name>.py)',
    )
    data.add_argument('--data-repeats', type=int, default=3, help='timed passes per variant')
    data.add_argument(
        '--workers', nargs='*', type=int, default=[], help='also time DataLoaders with N workers'
    )
    parser.add_argument(
        '--clock',
        default='wall',
        choices=['wall', 'cpu'],
        help="'cpu': CPU seconds of this process (data part, and steps on CPU)",
    )
    parser.add_argument('--out', help='write every number (and the environment) to this JSON')
    add_overwrite_argument(parser)
    args = parse_checked_arguments(parser, argv)
    if args.clock == 'cpu' and args.device == 'cuda' and 'steps' in args.part:
        parser.error('--clock cpu times CPU work; a CUDA step is timed by the wall clock')
    if args.tiny:
        args.shapes = args.shapes or list(train_throughput.TINY['shapes'])
        args.images = args.images or 8
        args.repeats, args.warmup, args.data_repeats = 1, 1, 1
    args.shapes = args.shapes or list(train_throughput.SHAPES)
    args.images = args.images or 300
    return args


def steps_part(args, clock, progress) -> list[dict]:
    results = train_throughput.run_steps(
        args.device,
        pair=train_throughput.TINY['pair'] if args.tiny else train_throughput.PAIR,
        shapes=tuple(args.shapes),
        methods=tuple(args.method),
        precisions=tuple(args.precision),
        cached=not args.no_cached,
        repeats=args.repeats,
        warmup=args.warmup,
        clock=clock,
        progress=progress,
    )
    rows = train_throughput.ratios(results)

    def ratio(value):
        return '' if value is None else f'{value:.2f}'

    print(
        markdown_table(
            (
                'size, batch',
                'precision',
                'variant',
                'images/s',
                'step ms',
                'step / student step',
                'cached / live',
                'AMP / fp32 (step time)',
                'peak memory',
            ),
            [
                (
                    f'{r["image_size"]} px, {r["batch"]}',
                    r['precision'],
                    r['variant'],
                    f'{r["images_per_second"]:.1f}',
                    f'{r["step_ms"]:.1f}',
                    ratio(r['vs_student']),
                    ratio(r['cached_vs_live']),
                    ratio(r['amp_vs_fp32']),
                    mib(r['peak_bytes']),
                )
                for r in rows
            ],
        )
    )
    return rows


def data_part(args, clock, progress) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        root = args.data_root or folder
        if args.data_root is None:
            progress(f'writing {args.images} COCO-format JPEGs')
            data_pipeline.write_coco(root, args.images)
        files = data_pipeline.image_files(root, args.images)
        out['images'] = dict(
            data_root=args.data_root or 'generated',
            count=len(files),
            mean_bytes=sum(map(os.path.getsize, files)) / max(len(files), 1),
        )
        progress('pipelines: one worker, passes interleaved')
        variants = data_pipeline.pipeline_variants(root, args.pipelines, args.images)
        rates = data_pipeline.measure(variants, len(files), args.data_repeats, 1, clock)
        out['pipelines'] = [
            dict(pipeline=p, implementation=i, decoder=d, images_per_second=v)
            for (p, i, d), v in rates.items()
        ]
        progress('decoders alone')
        decoders = data_pipeline.measure(
            data_pipeline.decoder_variants(root, args.images),
            len(files),
            args.data_repeats,
            1,
            clock,
        )
        out['decoders'] = [dict(decoder=k, images_per_second=v) for k, v in decoders.items()]
        gpu = data_pipeline.cuda_decode_rate(root, args.images) if args.device == 'cuda' else None
        if gpu is not None:
            out['decoders'].append(
                dict(
                    decoder='torchvision.io.decode_jpeg on CUDA (batches of 64)',
                    images_per_second=gpu,
                )
            )
        out['dataloaders'] = []
        for workers in args.workers:
            for name in args.pipelines:
                progress(f'DataLoader, {workers} workers: {name}')
                dataset = data_pipeline.shipped_dataset(name, root, images=args.images)
                out['dataloaders'].append(
                    dict(
                        pipeline=name,
                        workers=workers,
                        images_per_second=data_pipeline.dataloader_rate(dataset, workers),
                    )
                )
    shipped = {
        r['pipeline']: r['images_per_second']
        for r in out['pipelines']
        if r['implementation'].startswith('shipped') and 'as shipped' in r['decoder']
    }
    print(
        f'\nOne worker (one thread), {out["images"]["count"]} images '
        f'({out["images"]["mean_bytes"] / 1e3:.0f} kB mean), median of '
        f'{args.data_repeats} pass(es), {args.clock} clock:'
    )
    print(
        markdown_table(
            ('pipeline', 'implementation', 'decoder', 'images/s per worker', 'vs shipped'),
            [
                (
                    r['pipeline'],
                    r['implementation'],
                    r['decoder'],
                    f'{r["images_per_second"]:.1f}',
                    f'x{r["images_per_second"] / shipped[r["pipeline"]]:.2f}',
                )
                for r in out['pipelines']
            ],
        )
    )
    print()
    print(
        markdown_table(
            ('decoder (bytes in memory)', 'images/s'),
            [(r['decoder'], f'{r["images_per_second"]:.1f}') for r in out['decoders']],
        )
    )
    if out['dataloaders']:
        print()
        print(
            markdown_table(
                ('pipeline', 'DataLoader workers', 'images/s'),
                [
                    (r['pipeline'], r['workers'], f'{r["images_per_second"]:.1f}')
                    for r in out['dataloaders']
                ],
            )
        )
    out['shipped_per_worker'] = shipped
    return out


def workers_needed(steps: list[dict], data: dict) -> list[dict]:
    """For each step measured, the workers of each shipped pipeline of its image size that keep
    up with it: ``ceil(step images/s / one worker's images/s)``."""
    sizes = {name: data_pipeline.decoded_size(name) for name in data['shipped_per_worker']}
    rows = []
    for step in steps:
        # The pipelines that make the step's images (all of them for the --tiny shapes).
        names = [n for n in sizes if sizes[n] == step['image_size']] or list(sizes)
        for name in names:
            rate = data['shipped_per_worker'][name]
            rows.append(
                dict(
                    step=f'{step["variant"]} ({step["precision"]}, {step["image_size"]} px)',
                    pipeline=f'{name} ({sizes[name]} px)',
                    step_images_per_second=step['images_per_second'],
                    worker_images_per_second=rate,
                    workers=math.ceil(step['images_per_second'] / rate),
                )
            )
    return rows


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    mlkd.register_all_modules()
    clock = time.process_time if args.clock == 'cpu' else time.perf_counter
    start = time.perf_counter()

    def progress(what: str) -> None:
        print(f'[{time.perf_counter() - start:6.1f} s] {what}', flush=True)

    env = environment(args.device)
    print(
        f'device: {env["device"]} (torch {env["torch"]}, CUDA {env.get("cuda")}, driver '
        f'{env.get("driver")}); {env["cpu_count"]} CPUs, {env["torch_threads"]} torch threads',
        flush=True,
    )
    results: dict = dict(environment=env, arguments=vars(args))
    with warnings_only():
        if 'steps' in args.part:
            results['steps'] = steps_part(args, clock, progress)
        if 'data' in args.part:
            results['data'] = data_part(args, clock, progress)
    if 'steps' in results and 'data' in results:
        results['workers_needed'] = workers_needed(results['steps'], results['data'])
        print()
        print(
            markdown_table(
                ('training step', 'pipeline', 'step images/s', 'one worker images/s', 'workers'),
                [
                    (
                        r['step'],
                        r['pipeline'],
                        f'{r["step_images_per_second"]:.1f}',
                        f'{r["worker_images_per_second"]:.1f}',
                        r['workers'],
                    )
                    for r in results['workers_needed']
                ],
            )
        )
    if args.out:
        write_json(args.out, results, overwrite=args.overwrite)
    return results


if __name__ == '__main__':
    main()
