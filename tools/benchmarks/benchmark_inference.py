"""Images per second of a student and its teacher, PyTorch eager vs ONNX Runtime, on this CPU.

    python tools/benchmarks/benchmark_inference.py [--student mlkd::demo/student.py]
        [--teacher mlkd::demo/teacher.py] [--student-checkpoint CKPT] [--teacher-checkpoint CKPT]
        [--batch-sizes 1 32] [--threads N] [--repeats 20] [--warmup 3] [--out results.json]

What is timed, per network x backend x batch size, is the graph that ``mlkd export-onnx`` writes
and ``mlkd infer`` runs: the batch of test-pipeline pixels (``[B, 3, H, W]``, the config's image
size) → normalisation → network → sigmoid scores. PyTorch eager runs
:class:`mlkd.deployment.ScoreModel` under ``torch.inference_mode()`` (inputs in the memory format
the config's data preprocessor gives, channels-last for the demo); ONNX Runtime runs the same
model exported in memory, with as many intra-op threads as torch uses (``--threads``, default
torch's, which follows ``OMP_NUM_THREADS``). Decoding image files is left out (the same for both
backends).

Weights do not change the speed of these networks, so without checkpoints the networks keep their
initial weights (the configs' bundled pretrained backbones are not even loaded). Every variant
runs ``--warmup`` untimed calls, then ``--repeats`` timed calls round-robin across all variants
(a change of machine load touches them alike); the median time per call gives images per second
(``batch / median``). Prints a table and the two ratios a deployer wants: the student's speed-up
over the teacher, and ONNX Runtime's over eager. Measure on a quiet machine: the numbers are only
as good as the machine is idle (docs/benchmarks/inference.md says how they were taken).
"""

from __future__ import annotations

import argparse
import json
import platform

import numpy as np
import torch

from mlkd.benchmarks.common import timed_interleaved
from mlkd.utils.cli import parse_checked_arguments
from mlkd.utils.output_policy import add_overwrite_argument, write_text


def build_score_model(config: str, checkpoint: str | None, shape: list[int] | None):
    """``(ScoreModel, input_shape, channels_last, parameters)`` of the network ``config``
    deploys, with ``checkpoint``'s weights or its initial ones; the input is ``shape`` (H, W),
    else the config's ``image_size``."""
    from mlkd.apis.inference import build_classifier, init_classifier
    from mlkd.deployment import Preprocessing, ScoreModel, score_activation

    if checkpoint:
        loaded = init_classifier(config, checkpoint)
        network, cfg = loaded.network, loaded.cfg
    else:
        network, cfg, _ = build_classifier(config)
    if shape is None:
        if 'image_size' not in cfg:
            raise ValueError(f'{config} sets no image_size: give --shape H W')
        size = cfg.image_size
        shape = [size, size] if isinstance(size, int) else list(size)
    preprocessor = network.data_preprocessor
    model = ScoreModel(
        network, Preprocessing.from_preprocessor(preprocessor), score_activation(network)
    ).eval()
    parameters = sum(p.numel() for p in network.parameters())
    channels_last = bool(getattr(preprocessor, 'channels_last', False))
    return model, (3, *shape), channels_last, parameters


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else the platform's word for it."""
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Inference images/s: student vs teacher, eager vs ORT'
    )
    parser.add_argument('--student', default='mlkd::demo/student.py', help='student config')
    parser.add_argument('--teacher', default='mlkd::demo/teacher.py', help='teacher config')
    parser.add_argument('--student-checkpoint', help='student weights (default: initial ones)')
    parser.add_argument('--teacher-checkpoint', help='teacher weights (default: initial ones)')
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=[1, 32])
    parser.add_argument('--shape', type=int, nargs=2, metavar=('H', 'W'), help='input size')
    parser.add_argument('--threads', type=int, help="threads of both backends (default: torch's)")
    parser.add_argument('--repeats', type=int, default=20, help='timed calls per variant')
    parser.add_argument('--warmup', type=int, default=3, help='untimed calls per variant first')
    parser.add_argument('--out', help='write the results as JSON')
    add_overwrite_argument(parser)
    return parse_checked_arguments(parser, argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    from mlkd.deployment import OnnxClassifier, export_onnx_bytes
    from mlkd.deployment.onnx_export import FORMAT_VERSION

    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    networks = {}
    for role, config, checkpoint in (
        ('student', args.student, args.student_checkpoint),
        ('teacher', args.teacher, args.teacher_checkpoint),
    ):
        model, shape, channels_last, parameters = build_score_model(config, checkpoint, args.shape)
        metadata = {
            'mlkd.format': FORMAT_VERSION,
            'mlkd.classes': [],
            'mlkd.input_shape': list(shape),
            'mlkd.test_pipeline': [],
            'mlkd.normalization': 'folded',
            'mlkd.mean': [],
            'mlkd.std': [],
            'mlkd.to_rgb': False,
        }
        session = OnnxClassifier(export_onnx_bytes(model, shape, metadata), threads=threads)
        networks[role] = dict(
            config=config, model=model, shape=shape, channels_last=channels_last,
            parameters=parameters, session=session,
        )  # fmt: skip

    calls = {}
    generator = torch.Generator().manual_seed(0)
    for role, net in networks.items():
        for batch in args.batch_sizes:
            pixels = torch.randint(0, 256, (batch, *net['shape']), generator=generator).float()
            eager_input = (
                pixels.contiguous(memory_format=torch.channels_last)
                if net['channels_last']
                else pixels
            )
            array = pixels.numpy()

            def eager(model=net['model'], x=eager_input):
                with torch.inference_mode():
                    return model(x)

            def onnx(session=net['session'], x=array):
                return session.scores(x)

            calls[(role, 'eager', batch)] = eager
            calls[(role, 'onnxruntime', batch)] = onnx
    medians = timed_interleaved(calls, args.repeats, 'cpu', args.warmup)
    rate = {key: key[2] / seconds for key, seconds in medians.items()}

    backends = ('eager', 'onnxruntime')
    lines = [
        f'CPU: {cpu_name()}, {threads} threads; torch '
        f'{torch.__version__}; {args.repeats} timed calls per cell after {args.warmup} warm-up',
        '',
        '| network | parameters | backend | ' + ' | '.join(f'batch {b} (img/s)' for b in args.batch_sizes) + ' |',
        '|---|---:|---|' + '---:|' * len(args.batch_sizes),
    ]  # fmt: skip
    for role, net in networks.items():
        for backend in backends:
            cells = ' | '.join(f'{rate[(role, backend, b)]:.1f}' for b in args.batch_sizes)
            lines.append(f'| {role} | {net["parameters"] / 1e6:.2f} M | {backend} | {cells} |')
    lines += ['', '| speed-up | ' + ' | '.join(f'batch {b}' for b in args.batch_sizes) + ' |']
    lines.append('|---|' + '---:|' * len(args.batch_sizes))
    for backend in backends:
        cells = ' | '.join(
            f'{rate[("student", backend, b)] / rate[("teacher", backend, b)]:.2f}x'
            for b in args.batch_sizes
        )
        lines.append(f'| student over teacher, {backend} | {cells} |')
    for role in networks:
        cells = ' | '.join(
            f'{rate[(role, "onnxruntime", b)] / rate[(role, "eager", b)]:.2f}x'
            for b in args.batch_sizes
        )
        lines.append(f'| ONNX Runtime over eager, {role} | {cells} |')
    print('\n'.join(lines))
    if args.out:
        results = dict(
            machine=dict(
                processor=cpu_name(),
                threads=threads,
                torch=torch.__version__,
                onnxruntime=__import__('onnxruntime').__version__,
            ),
            repeats=args.repeats,
            warmup=args.warmup,
            networks={
                role: dict(
                    config=net['config'],
                    parameters=net['parameters'],
                    input_shape=list(net['shape']),
                )
                for role, net in networks.items()
            },  # fmt: skip
            images_per_second=[
                dict(network=role, backend=backend, batch=batch, value=float(np.round(value, 3)))
                for (role, backend, batch), value in rate.items()
            ],
        )
        write_text(args.out, json.dumps(results, indent=1) + '\n', overwrite=args.overwrite)
        print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
