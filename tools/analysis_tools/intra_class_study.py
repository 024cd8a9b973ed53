"""The bundled-data study of the intra-class contrastive teacher (configs/intra_class/README.md).

"Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous ICLR
submission) claims that a teacher trained with ``CE + λ·L_intra`` teaches better than a plain one.
For each seed this trains, on single-label MultiDigits (configs/intra_class/multidigits/):

* the plain teacher (``teacher.py``) and the intra-class contrastive teacher
  (``teacher_intra_class.py``, λ = 0.02);
* the student alone (``student.py``);
* from each teacher, the student with KD (``kd.py`` / ``ours.py``) and with KD + RKD
  (``kd_rkd.py`` / ``ours_rkd.py``);

then evaluates every run's last checkpoint on the val and the test split (top-1). The protocol
(data, networks, recipe, λ, seeds) is fixed in the configs and here; nothing is selected on any
split. It writes ``intra_class_study.{md,csv,png,json}`` to ``--out-dir``: mean ± std (sample std)
over seeds per arm, and the paired differences intra-class − plain (same seed) with a 95 %
Student-t interval. Runs whose results are in ``<work-dir>/results.json`` are not trained again.

    OMP_NUM_THREADS=1 python tools/analysis_tools/intra_class_study.py \
        --seeds 0 1 2 --work-dir work_dirs/intra_class_study --out-dir configs/intra_class
"""

from __future__ import annotations

import argparse
import json
import os
import os.path as osp
import textwrap
import time

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt

from mlkd.utils.output_policy import (
    add_overwrite_argument,
    open_output,
    output_paths,
    save_figure,
)
from mlkd.utils.stats import paired_differences
from mlkd.utils.tables import format_mean_std, mean_std, render_table, write_csv

CONFIGS = osp.join(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))),
    'configs',
    'intra_class',
    'multidigits',
)
OUT_NAME = 'intra_class_study'
#: run name -> (its config, the run whose checkpoint is its teacher), in training order.
RUNS = {
    'teacher': ('teacher.py', None),
    'teacher_intra_class': ('teacher_intra_class.py', None),
    'student': ('student.py', None),
    'kd': ('kd.py', 'teacher'),
    'ours': ('ours.py', 'teacher_intra_class'),
    'kd_rkd': ('kd_rkd.py', 'teacher'),
    'ours_rkd': ('ours_rkd.py', 'teacher_intra_class'),
}
#: arm label of each run in the tables
LABELS = {
    'teacher': 'plain teacher',
    'teacher_intra_class': 'intra-class teacher',
    'student': 'student alone',
    'kd': 'KD ← plain teacher',
    'ours': 'KD ← intra-class teacher ("Ours")',
    'kd_rkd': 'KD+RKD ← plain teacher',
    'ours_rkd': 'KD+RKD ← intra-class teacher ("Ours+RKD")',
}
#: paired comparisons: (label, intra-class run, plain run)
PAIRS = [
    ('teacher: intra-class − plain', 'teacher_intra_class', 'teacher'),
    ('KD student: from intra-class − from plain', 'ours', 'kd'),
    ('KD+RKD student: from intra-class − from plain', 'ours_rkd', 'kd_rkd'),
]
SPLITS = ('val', 'test')


def paired_interval(
    treated: list[float], control: list[float], level: float = 0.95
) -> tuple[float, float, float]:
    """Mean of ``treated − control`` (paired) and its Student-t ``level`` interval
    (:func:`mlkd.utils.stats.paired_differences`)."""
    paired = paired_differences(treated, control, level)
    return paired.mean, paired.low, paired.high


def summarize(
    results: dict[str, dict[str, dict[str, float]]], seeds: list[int]
) -> tuple[list[dict], list[dict]]:
    """Per-arm rows (the per-seed values of each split) and paired rows (mean difference and
    its interval per split) from ``results[seed][run][split]`` (top-1, %)."""
    keys = [str(s) for s in seeds]
    arms = []
    for run in RUNS:
        row = {'arm': LABELS[run], 'run': run}
        for split in SPLITS:
            row[split] = [results[k][run][split] for k in keys]
        arms.append(row)
    pairs = []
    for label, treated, control in PAIRS:
        row = {'comparison': label}
        for split in SPLITS:
            row[split] = paired_interval(
                [results[k][treated][split] for k in keys],
                [results[k][control][split] for k in keys],
            )
        pairs.append(row)
    return arms, pairs


def _interval(values: tuple[float, float, float]) -> str:
    return f'{values[0]:+.2f} [{values[1]:+.2f}, {values[2]:+.2f}]'


def render(arms: list[dict], pairs: list[dict], seeds: list[int]) -> str:
    first = render_table(
        ['arm', 'val top-1 (%)', 'test top-1 (%)', 'test, per seed'],
        [
            [
                a['arm'],
                format_mean_std(a['val']),
                format_mean_std(a['test']),
                ', '.join(f'{v:.1f}' for v in a['test']),
            ]
            for a in arms
        ],
    )
    second = render_table(
        ['paired difference (same seed)', 'val: mean [95 % CI]', 'test: mean [95 % CI]'],
        [[p['comparison'], _interval(p['val']), _interval(p['test'])] for p in pairs],
    )
    return (
        f'{first}\n\nMean ± sample std over seeds {", ".join(map(str, seeds))}.\n\n'
        f'{second}\n\nDifferences in top-1 points; 95 % Student-t interval with '
        f'{len(seeds) - 1} degrees of freedom.\n'
    )


def plot(arms: list[dict], pairs: list[dict], path: str, **policy) -> None:
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), layout='constrained')
    for i, arm in enumerate(arms):
        values = arm['test']
        left.bar(
            i,
            mean_std(values)[0],
            color='tab:orange' if 'intra' in arm['arm'] else 'tab:blue',
            alpha=0.5,
        )
        left.plot([i] * len(values), values, 'k.', markersize=6)
    left.set_xticks(range(len(arms)), [textwrap.fill(a['arm'], 14) for a in arms], fontsize=7)
    low = min(min(a['test']) for a in arms)
    left.set_ylim(max(0.0, low - 3), 100)
    left.set_ylabel('test top-1 (%)')
    left.set_title('every arm: mean (bar) and seeds (dots)', fontsize=9)
    for i, pair in enumerate(pairs):
        for offset, split, color in ((-0.1, 'val', 'tab:gray'), (0.1, 'test', 'tab:red')):
            mean, lo, hi = pair[split]
            right.errorbar(
                i + offset,
                mean,
                yerr=[[mean - lo], [hi - mean]],
                fmt='o',
                color=color,
                capsize=4,
                label=split if i == 0 else None,
            )
    right.axhline(0, color='k', linewidth=0.8)
    right.set_xticks(
        range(len(pairs)), [p['comparison'].replace(': ', ':\n') for p in pairs], fontsize=7
    )
    right.set_ylabel('intra-class − plain (top-1 points)')
    right.set_title('paired differences, 95 % t-interval', fontsize=9)
    right.legend(fontsize=8)
    save_figure(figure, path, dpi=120, **policy)
    plt.close(figure)


def train_and_evaluate(run: str, seed: int, work_dir: str, epochs: int | None) -> dict:
    """Train ``run`` for ``seed`` in this process; top-1 of its last weights on val and test."""
    from mmengine.config import Config

    from mlkd.engine import build_runner

    config, teacher = RUNS[run]
    cfg = Config.fromfile(osp.join(CONFIGS, config))
    cfg.work_dir = osp.join(work_dir, f'seed{seed}', run)
    cfg.experiment_name = f'{OUT_NAME}_seed{seed}_{run}'
    cfg.randomness = dict(seed=seed, deterministic=False)
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[key].num_workers = 0
        cfg[key].persistent_workers = False
    if teacher is not None:
        cfg.model.teacher_ckpt = osp.join(work_dir, f'seed{seed}', teacher)
    if epochs is not None:  # a shorter run of the same recipe (for trying the tool out)
        for scheduler in cfg.param_scheduler:
            scheduler.update(total_steps=epochs, end=epochs)
        cfg.train_cfg.update(max_epochs=epochs, val_interval=epochs)
    cfg.default_hooks.checkpoint = dict(
        type='CheckpointHook', interval=cfg.train_cfg.max_epochs, max_keep_ckpts=1
    )
    cfg.train_cfg.val_interval = cfg.train_cfg.max_epochs + 1  # evaluated once, below
    runner = build_runner(cfg)
    runner.train()
    return {
        'val': float(runner.val()['accuracy/top1']),
        'test': float(runner.test()['accuracy/top1']),
    }


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    parser.add_argument(
        '--work-dir',
        default='work_dirs/intra_class_study',
        help='runs and results.json (finished runs are reused)',
    )
    parser.add_argument(
        '--out-dir',
        default='work_dirs/intra_class_study',
        help=f'where {OUT_NAME}.md / .csv / .png / .json go',
    )
    parser.add_argument(
        '--epochs',
        type=int,
        help="train every run for this many epochs instead of the configs' 8 "
        '(for trying the tool out; the study uses the configs)',
    )
    add_overwrite_argument(parser)
    return parser.parse_args(argv)


def main(argv=None) -> tuple[list[dict], list[dict]]:
    args = parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds) or len(args.seeds) < 2:
        raise SystemExit(f'--seeds: give at least two distinct seeds, got {args.seeds}')
    policy = dict(overwrite=args.overwrite)
    outputs = output_paths(osp.join(args.out_dir, OUT_NAME), ['md', 'csv', 'png', 'json'], **policy)
    import mlkd  # noqa: F401  (registers mlkd's modules; imported late so that --help is fast)

    os.makedirs(args.work_dir, exist_ok=True)
    store = osp.join(args.work_dir, 'results.json')
    results = {}
    if osp.exists(store):
        with open(store, encoding='utf-8') as file:
            results = json.load(file)
    total = len(args.seeds) * len(RUNS)
    done = 0
    for seed in args.seeds:
        for run in RUNS:
            done += 1
            if run in results.get(str(seed), {}):
                print(f'[{done}/{total}] seed {seed} {run}: reused {results[str(seed)][run]}')
                continue
            start = time.process_time()
            metrics = train_and_evaluate(run, seed, args.work_dir, args.epochs)
            metrics['cpu_seconds'] = time.process_time() - start
            results.setdefault(str(seed), {})[run] = metrics
            with open(store, 'w', encoding='utf-8') as file:
                json.dump(results, file, indent=1)
            print(f'[{done}/{total}] seed {seed} {run}: {metrics}', flush=True)
    arms, pairs = summarize(results, args.seeds)
    os.makedirs(args.out_dir, exist_ok=True)
    text = render(arms, pairs, args.seeds)
    with open_output(outputs['md'], **policy) as file:
        file.write(text)
    write_csv(
        outputs['csv'],
        ['run', 'seed', 'val', 'test', 'cpu_seconds'],
        [
            [
                run,
                seed,
                results[str(seed)][run]['val'],
                results[str(seed)][run]['test'],
                round(results[str(seed)][run]['cpu_seconds'], 1),
            ]
            for seed in args.seeds
            for run in RUNS
        ],
        **policy,
    )
    with open_output(outputs['json'], **policy) as file:
        json.dump({str(s): results[str(s)] for s in args.seeds}, file, indent=1)
    plot(arms, pairs, outputs['png'], **policy)
    print(text)
    print(f'wrote {", ".join(outputs.values())}')
    return arms, pairs


if __name__ == '__main__':
    main()
