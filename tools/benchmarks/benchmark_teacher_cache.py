"""What a teacher-output cache saves: student step, live distillation step, cached step, writes.

Measures, side by side on the current device, for one teacher-student pair and each method given:
  (a) a plain student training step (``train_step``: forward, backward, optimizer update);
  (b) a distillation step with the live teacher;
  (c) the same distillation step reading the teacher's outputs from a cache on disk
      (``model.teacher_cache`` in ``'read'`` mode; memory-mapped rows, copied to the device);
  (d) cache writing: the teacher forward of ``tools/cache_teacher.py`` (``torch.inference_mode``)
      plus the append to the shard, in samples per second, in fp32 and with channels-last / AMP.
The steps (a)-(c) are timed interleaved, round-robin (median of ``--repeats`` after ``--warmup``
untimed rounds), so a change of machine load touches each alike. Also printed: the bytes a cache
stores per sample and epoch (index, logits and each tap), and how far the distillation loss moves
when the cache stores float16 / bfloat16 instead of float32 (the loss of one batch, relative).

Pairs: ``demo`` (the MultiDigits ML-Decoder teacher and student of ``configs/demo``, 32 px, batch
64, 10 classes) and ``r34_r18`` (ResNet-34 -> ResNet-18, linear heads, 224 px, 80 classes, batch
16). Images are random (timing does not depend on them); networks are randomly initialised.

    python tools/benchmarks/benchmark_teacher_cache.py [--pair demo|r34_r18] [--method kd fitnet]
        [--batch B] [--repeats 5] [--warmup 2] [--device cuda] [--clock cpu]
"""

from __future__ import annotations

import argparse
import os.path as osp
import tempfile
import time

import numpy as np
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

import mlkd
from mlkd.apis.teacher_cache import TeacherCacheWriter
from mlkd.benchmarks.common import method_cfg, net_cfg, random_batch, timed_interleaved
from mlkd.registry import MODELS
from mlkd.teacher_cache import CACHE_DTYPES, TeacherOutputCache
from mlkd.utils.cli import add_device_argument

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

#: The logit and the feature method timed by default (configs/_base_/methods/<name>.py).
METHODS = ('kd', 'mld', 'fitnet', 'at', 'rkd')
#: A fingerprint for the benchmark's throw-away caches (nothing is checked against a run).
FINGERPRINT = dict(benchmark=True)


def pair_cfg(pair: str) -> dict:
    """Student / teacher configs, taps, input size, classes, preprocessor and batch of a pair."""
    if pair == 'demo':
        models = osp.join(ROOT, 'configs', 'multidigits')
        taps = Config.fromfile(
            osp.join(ROOT, 'configs', '_base_', 'taps', 'digits_resnet.py')
        ).digits_resnet_taps.to_dict()
        data = Config.fromfile(osp.join(ROOT, 'configs', '_base_', 'datasets', 'multidigits.py'))
        return dict(
            student=osp.join(models, 'mldecoder_student.py'),
            teacher=osp.join(models, 'mldecoder_teacher.py'),
            taps=taps,
            size=data.image_size,
            classes=data.num_classes,
            batch=64,
            preprocessor=data.data_preprocessor.to_dict(),
            title='MultiDigits ML-Decoder teacher -> student (configs/demo), 32 px',
        )
    taps = Config.fromfile(
        osp.join(ROOT, 'configs', '_base_', 'taps', 'resnet.py')
    ).resnet_taps.to_dict()
    return dict(
        student=net_cfg('resnet18'),
        teacher=net_cfg('resnet34'),
        taps=taps,
        size=224,
        classes=80,
        batch=16,
        title='ResNet-34 -> ResNet-18, linear heads, 224 px',
        preprocessor=dict(
            type='MultiLabelDataPreprocessor',
            num_classes=80,
            mean=[0, 0, 0],
            std=[255, 255, 255],
            to_rgb=True,
            to_onehot=True,
        ),
    )


def row_bytes(cache: TeacherOutputCache) -> dict[str, int]:
    """Bytes per sample and epoch of a cache: the index and each stored tensor."""
    item = np.dtype(CACHE_DTYPES[cache.dtype][0]).itemsize
    out = {'index': 8}
    for name, spec in cache.manifest['taps'].items():
        out[name] = int(np.prod(spec['shape'], dtype=np.int64)) * item
    return out


def fill_cache(
    folder: str,
    distiller,
    data: dict,
    device: str,
    dtype: str = 'float32',
    amp_dtype: torch.dtype | None = None,
    channels_last: bool = False,
    batches: int = 1,
    clock=time.perf_counter,
) -> tuple[TeacherOutputCache, float]:
    """Write epoch 0 of a cache from ``batches`` passes over ``data``; returns the cache reopened
    for reading (epoch 0 begun) and the write time per batch (seconds, median)."""
    cache = TeacherOutputCache(folder, 'write', dtype)
    cache.open(FINGERPRINT, distiller.teacher_outputs)
    writer = TeacherCacheWriter(distiller, None, cache, device, amp_dtype, channels_last)
    cache.begin_epoch(0, len(data['data_samples']) * batches)
    seconds = []
    for _ in range(batches):
        if device == 'cuda':
            torch.cuda.synchronize()
        start = clock()
        writer.write_batch(data)
        if device == 'cuda':
            torch.cuda.synchronize()
        seconds.append(clock() - start)
    cache.end_epoch()
    if channels_last:
        distiller.teacher.to(memory_format=torch.contiguous_format)
    reader = TeacherOutputCache(folder, 'read', dtype)
    reader.open(FINGERPRINT, distiller.teacher_outputs)
    reader.begin_epoch(0, len(data['data_samples']))
    return reader, float(np.median(seconds[1:] if len(seconds) > 1 else seconds))


def loss_shift(distiller, data: dict, caches: dict[str, TeacherOutputCache]) -> dict[str, float]:
    """Relative change of the summed distillation loss of one batch, per storage dtype, against
    the float32 cache (the student's weights are those of the moment, not trained further)."""
    values = {}
    with torch.no_grad():
        processed = distiller.data_preprocessor(data, True)
        for dtype, cache in caches.items():
            distiller.serve_teacher_from(cache)
            losses = distiller.loss(processed['inputs'], processed['data_samples'])
            values[dtype] = sum(
                v for k, v in losses.items() if k.startswith('loss_') and k != 'loss_cls'
            ).item()
    distiller.serve_teacher_from(None)
    reference = values['float32']
    return {
        d: abs(v - reference) / max(abs(reference), 1e-12)
        for d, v in values.items()
        if d != 'float32'
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--pair', default='demo', choices=['demo', 'r34_r18'])
    parser.add_argument('--method', nargs='+', default=['kd', 'fitnet'], choices=METHODS)
    parser.add_argument('--batch', type=int, help="batch size (default: the pair's)")
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=2, help='untimed rounds first')
    parser.add_argument(
        '--write-batches',
        type=int,
        default=3,
        help='batches written per write variant (the first is untimed)',
    )
    add_device_argument(parser)
    parser.add_argument(
        '--clock',
        default='wall',
        choices=['wall', 'cpu'],
        help="'cpu': CPU seconds of this process (CPU device only; steadier than "
        'wall time on a machine shared with other jobs)',
    )
    parser.add_argument(
        '--cache-root',
        help='folder for the throw-away caches (default: a temporary folder, removed at the end)',
    )
    args = parser.parse_args(argv)
    if args.clock == 'cpu' and args.device != 'cpu':
        parser.error('--clock cpu times CPU work; on CUDA the step time is wall time')
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    mlkd.register_all_modules()
    pair = pair_cfg(args.pair)
    size = args.batch or pair['batch']
    data = random_batch(size, pair['size'], pair['classes'])
    optim = dict(optimizer=dict(type='Adam', lr=1e-4, weight_decay=1e-4))
    amp_dtype = torch.float16 if args.device == 'cuda' else torch.bfloat16
    clock = time.process_time if args.clock == 'cpu' else time.perf_counter
    results: dict = dict(pair=pair['title'], batch=size, methods={})
    with (
        tempfile.TemporaryDirectory(dir=args.cache_root) as root,
        DefaultScope.overwrite_default_scope('mlkd'),
    ):
        student = _student_with_preprocessor(pair)
        student = student.to(args.device).train()
        steps = {
            'student': (lambda w=build_optim_wrapper(student, optim): student.train_step(data, w))  # noqa: B008
        }
        distillers = {}
        for name in args.method:
            distiller = (
                MODELS.build(
                    dict(
                        type='SingleTeacherDistiller',
                        allow_random_teacher=True,
                        student=pair['student'],
                        teacher=pair['teacher'],
                        student_taps=pair['taps'],
                        teacher_taps=pair['taps'],
                        **method_cfg(name),
                        data_preprocessor=pair['preprocessor'],
                        probe_input_size=(pair['size'], pair['size']),
                    )
                )
                .to(args.device)
                .train()
            )
            wrapper = build_optim_wrapper(distiller, optim)
            writes = {}
            caches = {}
            for variant, kwargs in (
                ('fp32', {}),
                ('channels_last', dict(channels_last=True)),
                ('amp', dict(amp_dtype=amp_dtype)),
            ):
                folder = osp.join(root, f'{name}_{variant}')
                cache, seconds = fill_cache(
                    folder,
                    distiller,
                    data,
                    args.device,
                    batches=args.write_batches,
                    clock=clock,
                    **kwargs,
                )
                writes[variant] = size / seconds
                if variant == 'fp32':
                    caches['float32'] = cache
            for dtype in ('float16', 'bfloat16'):
                caches[dtype], _ = fill_cache(
                    osp.join(root, f'{name}_{dtype}'), distiller, data, args.device, dtype=dtype
                )
            shift = loss_shift(distiller, data, caches)
            reader = caches['float32']

            def live(d=distiller, w=wrapper):
                d.serve_teacher_from(None)
                return d.train_step(data, w)

            def cached(d=distiller, w=wrapper, c=reader):
                d.serve_teacher_from(c)
                out = d.train_step(data, w)
                d.serve_teacher_from(None)
                return out

            steps[f'{name} live'] = live
            steps[f'{name} cached'] = cached
            distillers[name] = dict(writes=writes, bytes=row_bytes(reader), loss_shift=shift)
        medians = timed_interleaved(steps, args.repeats, args.device, args.warmup, clock)
    where = (
        torch.cuda.get_device_name()
        if args.device == 'cuda'
        else f'cpu, torch threads: {torch.get_num_threads()}'
    )
    t_student = medians['student']
    print(
        f'device: {where}; pair: {pair["title"]}; batch {size}; median of {args.repeats} '
        f'interleaved rounds after {args.warmup} warm-up rounds; {args.clock} clock'
    )
    print(f'(a) student step: {t_student * 1e3:.1f} ms')
    print(
        '| method | (b) live step ms | b / a | (c) cached step ms | c / a | (d) write fp32 '
        'samples/s | channels-last | AMP | bytes / sample / epoch | loss shift fp16 | bf16 |'
    )
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for name, info in distillers.items():
        t_live, t_cached = medians[f'{name} live'], medians[f'{name} cached']
        parts = ', '.join(f'{k} {v}' for k, v in info['bytes'].items())
        w = info['writes']
        print(
            f'| {name} | {t_live * 1e3:.1f} | {t_live / t_student:.2f} | {t_cached * 1e3:.1f} | '
            f'{t_cached / t_student:.2f} | {w["fp32"]:.0f} | {w["channels_last"]:.0f} | '
            f'{w["amp"]:.0f} | {sum(info["bytes"].values())} ({parts}) | '
            f'{info["loss_shift"]["float16"]:.1e} | {info["loss_shift"]["bfloat16"]:.1e} |'
        )
        info.update(live=t_live, cached=t_cached)
    results.update(student=t_student, methods=distillers, device=where)
    return results


def _student_with_preprocessor(pair: dict):
    """The pair's student as a plain classifier with the distiller's data preprocessor."""
    cfg = pair['student']
    if isinstance(cfg, str):
        cfg = Config.fromfile(cfg).model.to_dict()
    return MODELS.build(dict(cfg, data_preprocessor=pair['preprocessor']))


if __name__ == '__main__':
    main()
