"""The main job: distillation on the bundled MultiDigits data, end to end, on one CPU.

    python tools/demo.py [--work-dir work_dirs/demo] [--seeds 0] [--stages teacher student 3D L2D]

Trains an ML-Decoder teacher and a plain student, distils the student with 3D and with L2D, and
prints a comparison (mAP, CF1, OF1 at threshold 0.5, wall time). With several seeds it prints
mean ± std over them. Every stage is an ordinary config run through mmengine's Runner; the same
configs work with tools/train.py.
"""
from __future__ import annotations

import argparse
import logging
import os.path as osp
import statistics
import time
import uuid

import mlkd  # noqa: F401
from mmengine.config import Config
from mmengine.runner import Runner

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
STAGES = {
    'teacher': 'configs/multidigits/mldecoder_teacher.py',
    'student': 'configs/multidigits/mldecoder_student.py',
    '3D': 'configs/3d/3d_multidigits.py',
    'L2D': 'configs/l2d/l2d_multidigits.py',
}
METRICS = ('mAP', 'CF1_thr0.5', 'OF1_thr0.5')


def run_stage(name: str, work_dir: str, seed: int, teacher_ckpt: str | None,
              verbose: bool) -> tuple[dict, float, str]:
    """Train one stage; returns (final validation metrics, seconds, last checkpoint)."""
    cfg = Config.fromfile(osp.join(ROOT, STAGES[name]))
    cfg.work_dir = osp.join(work_dir, f'seed{seed}', name)
    cfg.experiment_name = f'{name}_seed{seed}_{uuid.uuid4().hex[:6]}'
    cfg.randomness = dict(seed=seed, deterministic=False)
    if not verbose:
        cfg.log_level = 'WARNING'
    if cfg.model.type == 'SingleTeacherDistiller':
        cfg.model.teacher_ckpt = teacher_ckpt
    start = time.perf_counter()
    runner = Runner.from_cfg(cfg)
    runner.train()
    seconds = time.perf_counter() - start
    scalars = runner.message_hub.log_scalars
    missing = [key for key in METRICS if f'val/{key}' not in scalars]
    if missing:
        raise RuntimeError(f'{name}: final validation metrics {missing} were not logged')
    metrics = {key: float(scalars[f'val/{key}'].current()) for key in METRICS}
    ckpt = osp.join(cfg.work_dir, f'epoch_{cfg.train_cfg.max_epochs}.pth')
    return metrics, seconds, ckpt


def summarise(results: dict[str, list[tuple[dict, float]]]) -> str:
    from terminaltables import AsciiTable

    def cell(values):
        if len(values) == 1:
            return f'{values[0]:.2f}'
        return f'{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}'

    rows = [['model', 'mAP', 'CF1 (thr 0.5)', 'OF1 (thr 0.5)', 'wall time (s)']]
    for name, runs in results.items():
        rows.append([name] + [cell([m[k] for m, _ in runs]) for k in METRICS]
                    + [cell([s for _, s in runs])])
    seeds = len(next(iter(results.values())))
    title = f'MultiDigits val, {seeds} seed(s)' + (' (mean ± std)' if seeds > 1 else '')
    return AsciiTable(rows, title=title).table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--work-dir', default='work_dirs/demo')
    parser.add_argument('--seeds', type=int, nargs='+', default=[0])
    parser.add_argument('--stages', nargs='+', default=list(STAGES), choices=list(STAGES))
    parser.add_argument('--verbose', action='store_true', help='show the training logs')
    args = parser.parse_args()
    if not args.verbose:
        logging.getLogger('mmengine').setLevel(logging.WARNING)

    results: dict[str, list] = {name: [] for name in args.stages}
    total = time.perf_counter()
    for seed in args.seeds:
        teacher_ckpt = None
        for name in args.stages:
            if name not in ('teacher', 'student') and teacher_ckpt is None:
                teacher_ckpt = osp.join(args.work_dir, f'seed{seed}', 'teacher', 'epoch_12.pth')
                if not osp.isfile(teacher_ckpt):
                    raise FileNotFoundError(f'{name} needs a teacher: run the teacher stage '
                                            f'first ({teacher_ckpt} is missing)')
            print(f'[seed {seed}] {name} ...', flush=True)
            metrics, seconds, ckpt = run_stage(name, args.work_dir, seed, teacher_ckpt,
                                               args.verbose)
            if name == 'teacher':
                teacher_ckpt = ckpt
            results[name].append((metrics, seconds))
            print(f'[seed {seed}] {name}: ' + '  '.join(f'{k} {v:.2f}' for k, v in
                                                         metrics.items())
                  + f'  ({seconds:.0f} s)', flush=True)
    print(summarise(results))
    print(f'total wall time: {time.perf_counter() - total:.0f} s')


if __name__ == '__main__':
    main()
