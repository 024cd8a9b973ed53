"""Cost of a distillation training step beyond the two networks' own compute.

Measures, on the current device, for a 224x224 ResNet-34 -> ResNet-18 pair (linear multi-label
heads, 80 classes):
  (a) a plain student training step (forward, backward, Adam update) through mmengine's
      ``train_step``;
  (b) a teacher forward in eval mode under ``no_grad``;
  (c) for each method given, a distiller training step (teacher + student + taps + connectors +
      distillation losses) through ``train_step``.
The steps are timed interleaved (a, b, c_1, c_2, ..., a, b, c_1, ...), so that a change of machine
load touches every variant alike; each reports the median of its repeats after warm-up. Per method
the ratio ``c / a`` (the distillation step against the plain student step) and the overhead
``c / (a + b) - 1`` (goal: <= 10 %) are printed, with the throughput of (c). Runs on CUDA when
available (``--device`` to choose); ``--amp`` times everything under mixed precision
(``MixedPrecisionOptimWrapper``: float16 with loss scaling on CUDA, bfloat16 on CPU).
``--clock cpu`` (CPU only) measures the CPU seconds this process spends (``time.process_time``,
all its threads) instead of wall time: on a machine shared with other jobs the wall time of a step
depends on how many compete for the cores at that moment, its CPU time much less. With one torch
thread on an idle machine the two agree.

    python tools/benchmarks/benchmark_distill_step.py [--batch 16] [--repeats 5] [--warmup 2]
        [--method 3d [fitnet at ...]] [--device cuda] [--amp] [--clock cpu]
"""

from __future__ import annotations

import argparse
import time

import torch
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

import mlkd
from mlkd.benchmarks.common import config, method_cfg, net_cfg, random_batch, timed_interleaved
from mlkd.registry import MODELS
from mlkd.utils.cli import add_device_argument

#: Method bases timed (``configs/_base_/methods/<name>.py``). The feature methods read the
#: ResNet stage taps of ``configs/_base_/taps/resnet.py``; OFD needs pre-ReLU taps, which
#: mmpretrain's ResNet does not have (its blocks apply the last ReLU to the residual sum
#: inline), so it is not offered here.
METHODS = ('3d', 'mld', 'kd', 'rkd', 'pkt', 'crd', 'fitnet', 'at', 'vid', 'reviewkd')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--batch', type=int, default=16)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=2, help='untimed rounds first')
    parser.add_argument(
        '--method',
        nargs='+',
        default=['3d'],
        choices=METHODS,
        help='one or more method bases, timed interleaved',
    )
    add_device_argument(parser)
    parser.add_argument('--amp', action='store_true', help='mixed precision for every step')
    parser.add_argument(
        '--clock',
        default='wall',
        choices=['wall', 'cpu'],
        help="'cpu': CPU seconds of this process (CPU device only)",
    )
    args = parser.parse_args()
    if args.clock == 'cpu' and args.device != 'cpu':
        parser.error('--clock cpu times CPU work; on CUDA the step time is wall time')
    clock = time.process_time if args.clock == 'cpu' else time.perf_counter
    mlkd.register_all_modules()
    preprocessor = dict(
        type='ClsDataPreprocessor',
        num_classes=80,
        to_onehot=True,
        mean=[0, 0, 0],
        std=[255, 255, 255],
        to_rgb=True,
    )
    optim = dict(optimizer=dict(type='Adam', lr=1e-4, weight_decay=1e-4))
    if args.amp:
        optim.update(type='MixedPrecisionOptimWrapper', device=args.device)
    taps = config('_base_/taps/resnet.py').resnet_taps
    data = random_batch(args.batch, 224, 80)
    with DefaultScope.overwrite_default_scope('mlkd'):
        student = MODELS.build(dict(net_cfg('resnet18'), data_preprocessor=preprocessor))
        teacher = MODELS.build(dict(net_cfg('resnet34'), data_preprocessor=preprocessor)).eval()
        student, teacher = student.to(args.device), teacher.to(args.device)
        student_optim = build_optim_wrapper(student, optim)
        distillers = {}
        for name in args.method:
            distiller = MODELS.build(
                dict(
                    type='SingleTeacherDistiller',
                    allow_random_teacher=True,
                    student=net_cfg('resnet18'),
                    teacher=net_cfg('resnet34'),
                    student_taps=taps.to_dict(),
                    teacher_taps=taps.to_dict(),
                    **method_cfg(name),
                    data_preprocessor=preprocessor,
                    probe_input_size=(224, 224),
                )
            ).to(args.device)
            distiller.train()
            distillers[name] = (distiller, build_optim_wrapper(distiller, optim))
    student.train()
    # The teacher is timed under the same autocast as the distillers run it in.
    autocast_ref = next(iter(distillers.values()))

    def teacher_forward():
        with torch.no_grad(), autocast_ref[1].optim_context(autocast_ref[0]):
            inputs = teacher.data_preprocessor(data, False)['inputs']
            teacher(inputs, mode='tensor')

    steps = {'student': lambda: student.train_step(data, student_optim), 'teacher': teacher_forward}
    for name, (distiller, wrapper) in distillers.items():
        steps[name] = lambda d=distiller, w=wrapper: d.train_step(data, w)
    medians = timed_interleaved(steps, args.repeats, args.device, args.warmup, clock)
    t_student, t_teacher = medians['student'], medians['teacher']
    where = (
        torch.cuda.get_device_name()
        if args.device == 'cuda'
        else f'cpu, torch threads: {torch.get_num_threads()}'
    )
    precision = f'amp {autocast_ref[1].cast_dtype}' if args.amp else 'fp32'
    print(
        f'device: {where}, {precision}, batch {args.batch}, 224x224, ResNet-34 -> ResNet-18, '
        f'{args.clock} clock, median of {args.repeats} interleaved rounds after {args.warmup} '
        f'warm-up rounds'
    )
    print(f'(a) student train step        {t_student * 1e3:9.1f} ms')
    print(f'(b) teacher forward (no_grad) {t_teacher * 1e3:9.1f} ms')
    print(f'{"(c) distiller step":<20}{"ms":>10}{"c / a":>9}{"c/(a+b)-1":>12}{"images/s":>10}')
    for name in distillers:
        t_distill = medians[name]
        print(
            f'{name:<20}{t_distill * 1e3:10.1f}{t_distill / t_student:9.2f}'
            f'{100 * (t_distill / (t_student + t_teacher) - 1):+11.1f}%'
            f'{args.batch / t_distill:10.1f}'
        )


if __name__ == '__main__':
    main()
