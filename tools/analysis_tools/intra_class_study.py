"""The bundled-data study of the intra-class contrastive teacher (configs/intra_class/README.md).

"Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous ICLR
submission) claims that a teacher trained with ``CE + λ·L_intra`` teaches better than a plain one.
For each seed this trains, on single-label MultiDigits (configs/intra_class/multidigits/):

* the plain teacher (``teacher.py``) and the intra-class contrastive teacher
  (``teacher_intra_class.py``, λ = 0.02);
* the student alone (``student.py``);
* from each teacher, the student with KD (``kd.py`` / ``ours.py``) and with KD + RKD
  (``kd_rkd.py`` / ``ours_rkd.py``, at the RKD loss weight chosen on val by the search below);

then evaluates every run's last checkpoint on the val and the test split (top-1). The protocol
(data, networks, recipe, λ, seeds) is fixed in the configs and here; nothing is selected on the
test split. It writes ``intra_class_study.{md,csv,png,json}`` to ``--out-dir``: mean ± std
(sample std) over seeds per arm, and the paired differences (same seed) intra-class − plain and
distilled − student alone with a 95 % Student-t interval. Runs whose results are in
``<work-dir>/results.json`` are not trained again.

    OMP_NUM_THREADS=1 python tools/analysis_tools/intra_class_study.py \
        --seeds 0 1 2 --work-dir work_dirs/intra_class_study --out-dir configs/intra_class

With ``--search-rkd-weights W ...`` it runs, instead, the validation search of the RKD loss
weight of the KD+RKD runs (from the plain teacher, every seed, val only, per-term loss and
gradient diagnostics, agreement with the teacher; ``intra_class_rkd_search.{md,csv,png,json}``):

    OMP_NUM_THREADS=1 python tools/analysis_tools/intra_class_study.py --seeds 0 1 2 \
        --search-rkd-weights 1 0.1 0.03 0.01 0.001 \
        --work-dir work_dirs/intra_class_study --out-dir configs/intra_class
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
from mlkd.utils.run_logs import read_diagnostics
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
#: paired comparisons: (label, treated run, control run)
PAIRS = [
    ('teacher: intra-class − plain', 'teacher_intra_class', 'teacher'),
    ('KD student: from intra-class − from plain', 'ours', 'kd'),
    ('KD+RKD student: from intra-class − from plain', 'ours_rkd', 'kd_rkd'),
    ('KD ← plain teacher − student alone', 'kd', 'student'),
    ('KD+RKD ← plain teacher − student alone', 'kd_rkd', 'student'),
    ('KD+RKD ← intra-class teacher − student alone', 'ours_rkd', 'student'),
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
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, 4.8), layout='constrained')
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
        range(len(pairs)), [textwrap.fill(p['comparison'], 16) for p in pairs], fontsize=7
    )
    right.set_ylabel('paired difference (top-1 points)')
    right.set_title('paired differences, 95 % t-interval', fontsize=9)
    right.legend(fontsize=8)
    save_figure(figure, path, dpi=120, **policy)
    plt.close(figure)


def study_config(run: str, seed: int, work_dir: str, epochs: int | None, config: str | None = None):
    """The config of ``run`` for ``seed`` as the study trains it (work dir
    ``<work_dir>/seed<seed>/<run>``, its teacher the same seed's run, loaders in-process, one
    checkpoint, no validation during training); ``config`` replaces the run's config file."""
    from mmengine.config import Config

    run_config, teacher = RUNS[run]
    cfg = Config.fromfile(osp.join(CONFIGS, config or run_config))
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
    cfg.train_cfg.val_interval = cfg.train_cfg.max_epochs + 1  # evaluated once, after training
    return cfg


def train_and_evaluate(run: str, seed: int, work_dir: str, epochs: int | None) -> dict:
    """Train ``run`` for ``seed`` in this process; top-1 of its last weights on val and test."""
    from mlkd.engine import build_runner

    runner = build_runner(study_config(run, seed, work_dir, epochs))
    runner.train()
    return {
        'val': float(runner.val()['accuracy/top1']),
        'test': float(runner.test()['accuracy/top1']),
    }


# ----------------------------------------------------------------------------- RKD weight search
#: The RKD loss of the KD+RKD runs in the study configs, and the terms it is split into for the
#: search's diagnostics: RKDLoss(d, a) = RKDLoss(d, 0) + RKDLoss(0, a), the same loss.
RKD_LOSS = 'rkd'
RKD_TERMS = {'rkd_distance': dict(angle_weight=0.0), 'rkd_angle': dict(distance_weight=0.0)}
#: The run whose RKD weight is searched (from the plain teacher), the config the searched weight
#: multiplies (the paper's RKD weight: distance 25, angle 50, loss weight 1), and the baseline.
SEARCH_RUN, SEARCH_CONFIG, SEARCH_BASELINE = 'kd_rkd', 'kd_rkd_paper_weight.py', 'student'
SEARCH_NAME = 'intra_class_rkd_search'
#: Log keys of the terms, in plotting order.
TERM_KEYS = ('loss_cls', 'loss_kd', 'loss_rkd_distance', 'loss_rkd_angle')


def split_rkd(distill_losses: dict, weight: float) -> dict:
    """``distill_losses`` with ``rkd`` scaled by ``weight`` and split into its distance and angle
    terms (``rkd_distance``, ``rkd_angle``), so that each term's gradient is logged on its own."""
    losses = {k: v for k, v in distill_losses.items() if k != RKD_LOSS}
    rkd = dict(distill_losses[RKD_LOSS])
    rkd['loss_weight'] = rkd.get('loss_weight', 1.0) * weight
    for name, zeroed in RKD_TERMS.items():
        losses[name] = dict(rkd, **zeroed)
    return losses


def prediction_agreement(runner) -> float:
    """Top-1 agreement (%) of the distiller's student with its teacher on the val split."""
    import torch

    model = runner.model
    model.eval()
    agree = total = 0
    with torch.no_grad():
        for batch in runner.val_dataloader:
            inputs = model.data_preprocessor(batch, False)['inputs']
            student = [s.pred_label for s in model(inputs, None, mode='predict')]
            teacher = [s.pred_label for s in model.teacher_predict(inputs)]
            agree += int((torch.cat(student) == torch.cat(teacher)).sum())
            total += len(student)
    return 100.0 * agree / total


def search_run(seed: int, weight: float, work_dir: str, epochs: int | None, interval: int) -> dict:
    """Train the study's KD+RKD (plain teacher of ``seed``) with the RKD loss weight ``weight``
    times the paper's (``SEARCH_CONFIG``); its val top-1, its val agreement with the teacher
    and, every ``interval`` iterations, each term's weighted value and gradient norm on all the student's parameters
    (``LossDiagnosticsHook``). Never evaluates test."""
    from mlkd.engine import build_runner

    cfg = study_config(SEARCH_RUN, seed, work_dir, epochs, SEARCH_CONFIG)
    cfg.work_dir = osp.join(work_dir, 'rkd_search', f'seed{seed}', f'w{weight:g}')
    cfg.experiment_name = f'{SEARCH_NAME}_seed{seed}_w{weight:g}'
    cfg.model.distill_losses = split_rkd(cfg.model.distill_losses, weight)
    cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
        dict(type='LossDiagnosticsHook', interval=interval, module='student')
    ]
    runner = build_runner(cfg)
    runner.train()
    val = float(runner.val()['accuracy/top1'])
    records = read_diagnostics(cfg.work_dir)
    steps = list(records)
    return {
        'val': val,
        'agreement': prediction_agreement(runner),
        'steps': steps,
        'terms': {
            term: {
                stat: [records[step][term][stat] for step in steps]
                for stat in ('value', 'grad_norm')
            }
            for term in TERM_KEYS
        },
    }


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def summarize_search(
    search: dict, baseline: dict, seeds: list[int], weights: list[float]
) -> list[dict]:
    """One row per weight: val top-1 per seed, the paired difference to the student alone (same
    seed) with its 95 % t-interval, the agreement with the teacher per seed, and per term the
    median (over the diagnostic steps of every seed) of its weighted value and gradient norm."""
    rows = []
    for weight in weights:
        cells = [search[str(s)][f'{weight:g}'] for s in seeds]
        row = {
            'weight': weight,
            'val': [c['val'] for c in cells],
            'agreement': [c['agreement'] for c in cells],
            'vs_student': paired_interval(
                [c['val'] for c in cells], [baseline[str(s)] for s in seeds]
            ),
        }
        for term in TERM_KEYS:
            for stat in ('value', 'grad_norm'):
                row[f'{term}/{stat}'] = median([v for c in cells for v in c['terms'][term][stat]])
        rows.append(row)
    return rows


def chosen_weight(rows: list[dict]) -> float:
    """The rule fixed before the search ran: the weight of the highest mean val top-1."""
    return max(rows, key=lambda row: mean_std(row['val'])[0])['weight']


def render_search(rows: list[dict], seeds: list[int], student: list[float]) -> str:
    header = [
        'RKD loss weight',
        '(distance, angle)',
        'val top-1 (%)',
        '− student alone [95 % CI]',
        'agreement with teacher (%)',
        *[f'‖∇ {t[5:]}‖' for t in TERM_KEYS],
        *[f'{t[5:]} value' for t in TERM_KEYS],
    ]
    table = render_table(
        header,
        [
            [
                f'{r["weight"]:g}' + (' (paper)' if r['weight'] == 1 else ''),
                f'({25 * r["weight"]:g}, {50 * r["weight"]:g})',
                format_mean_std(r['val']),
                _interval(r['vs_student']),
                format_mean_std(r['agreement']),
                *[f'{r[f"{t}/grad_norm"]:.3g}' for t in TERM_KEYS],
                *[f'{r[f"{t}/value"]:.3g}' for t in TERM_KEYS],
            ]
            for r in rows
        ],
    )
    best = chosen_weight(rows)
    return (
        f'{table}\n\nKD+RKD ← plain teacher, val split, seeds {", ".join(map(str, seeds))}; '
        f'student alone {format_mean_std(student)}. Mean ± sample std over seeds; the difference '
        f'is paired by seed with a 95 % Student-t interval ({len(seeds) - 1} degrees of freedom). '
        "‖∇ term‖: L2 norm of the weighted term's gradient on all the student's parameters, "
        'and value: the weighted term, each the median over the diagnostic steps of every seed.'
        f'\n\nChosen (highest mean val top-1): RKD loss weight {best:g}.\n'
    )


def plot_search(rows: list[dict], search: dict, seeds: list[int], path: str, **policy) -> None:
    figure, axes = plt.subplots(2, 3, figsize=(15, 8), layout='constrained')
    best = chosen_weight(rows)
    seed = str(seeds[0])
    colors = dict(zip(TERM_KEYS, ('tab:blue', 'tab:green', 'tab:orange', 'tab:red')))
    for ax, weight, stat, title in (
        (axes[0, 0], 1.0, 'value', 'weighted loss per term'),
        (axes[0, 1], 1.0, 'grad_norm', '‖∇θ_student‖ per term'),
        (axes[0, 2], best, 'grad_norm', '‖∇θ_student‖ per term'),
    ):
        cell = search[seed].get(f'{weight:g}')
        if cell is None:
            ax.axis('off')
            continue
        for term in TERM_KEYS:
            ax.plot(cell['steps'], cell['terms'][term][stat], color=colors[term], label=term[5:])
        ax.set_yscale('log')
        ax.set_xlabel('iteration')
        ax.set_title(f'{title}: RKD weight {weight:g}, seed {seed}', fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    shared = axes[0, 1].get_ylim(), axes[0, 2].get_ylim()
    limits = (min(shared[0][0], shared[1][0]), max(shared[0][1], shared[1][1]))
    axes[0, 1].set_ylim(limits)
    axes[0, 2].set_ylim(limits)
    xs = range(len(rows))
    labels = [f'{r["weight"]:g}' for r in rows]
    ax = axes[1, 0]
    for i, r in enumerate(rows):
        mean, lo, hi = r['vs_student']
        ax.errorbar(i, mean, yerr=[[mean - lo], [hi - mean]], fmt='o', color='k', capsize=4)
    ax.axhline(0, color='k', linewidth=0.8)
    ax.set_xticks(xs, labels)
    ax.set_xlabel('RKD loss weight (1 = distance 25, angle 50)')
    ax.set_ylabel('val top-1: KD+RKD − student alone')
    ax.set_title('paired difference, 95 % t-interval', fontsize=9)
    for ax, key, label in (
        (axes[1, 1], 'val', 'val top-1 (%)'),
        (axes[1, 2], 'agreement', 'val top-1 agreement with teacher (%)'),
    ):
        for i, r in enumerate(rows):
            ax.bar(i, mean_std(r[key])[0], color='tab:blue', alpha=0.4)
            ax.plot([i] * len(r[key]), r[key], 'k.', markersize=6)
        ax.set_xticks(xs, labels)
        ax.set_xlabel('RKD loss weight')
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis='y')
    figure.suptitle(
        'KD+RKD ← plain teacher on MultiDigits (val): RKD loss weight search', fontsize=10
    )
    save_figure(figure, path, dpi=110, **policy)
    plt.close(figure)


def search_main(args: argparse.Namespace) -> list[dict]:
    """Train the search's runs (val only), then write its table, CSV, JSON and PNG."""
    weights = args.search_rkd_weights
    if len(set(weights)) != len(weights) or min(weights) <= 0:
        raise SystemExit(f'--search-rkd-weights: give distinct positive weights, got {weights}')
    policy = dict(overwrite=args.overwrite)
    outputs = output_paths(
        osp.join(args.out_dir, SEARCH_NAME), ['md', 'csv', 'png', 'json'], **policy
    )
    import mlkd  # noqa: F401

    study = _load_json(osp.join(args.work_dir, 'results.json'))
    store = osp.join(args.work_dir, 'rkd_search', 'results.json')
    search = _load_json(store)
    for seed in args.seeds:
        for run in ('teacher', SEARCH_BASELINE):  # the study's own runs, trained as the study does
            if run not in study.get(str(seed), {}):
                study.setdefault(str(seed), {})[run] = _timed(
                    train_and_evaluate, run, seed, args.work_dir, args.epochs
                )
                _save_json(osp.join(args.work_dir, 'results.json'), study)
        for weight in weights:
            if f'{weight:g}' in search.get(str(seed), {}):
                continue
            result = _timed(
                search_run, seed, weight, args.work_dir, args.epochs, args.diagnostics_interval
            )
            search.setdefault(str(seed), {})[f'{weight:g}'] = result
            _save_json(store, search)
            print(
                f'seed {seed}, RKD weight {weight:g}: val {result["val"]:.2f}, agreement '
                f'{result["agreement"]:.2f}',
                flush=True,
            )
    student = {str(s): study[str(s)][SEARCH_BASELINE]['val'] for s in args.seeds}
    rows = summarize_search(search, student, args.seeds, weights)
    text = render_search(rows, args.seeds, list(student.values()))
    os.makedirs(args.out_dir, exist_ok=True)
    with open_output(outputs['md'], **policy) as file:
        file.write(text)
    write_csv(
        outputs['csv'],
        ['weight', 'seed', 'val', 'student_val', 'agreement', 'cpu_seconds'],
        [
            [
                w,
                s,
                search[str(s)][f'{w:g}']['val'],
                student[str(s)],
                search[str(s)][f'{w:g}']['agreement'],
                round(search[str(s)][f'{w:g}']['cpu_seconds'], 1),
            ]
            for s in args.seeds
            for w in weights
        ],
        **policy,
    )
    with open_output(outputs['json'], **policy) as file:
        json.dump(
            {'student_val': student, 'runs': {str(s): search[str(s)] for s in args.seeds}},
            file,
            indent=1,
        )
    plot_search(rows, search, args.seeds, outputs['png'], **policy)
    print(text)
    print(f'wrote {", ".join(outputs.values())}')
    return rows


def _load_json(path: str) -> dict:
    if not osp.exists(path):
        return {}
    with open(path, encoding='utf-8') as file:
        return json.load(file)


def _save_json(path: str, value: dict) -> None:
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as file:
        json.dump(value, file, indent=1)


def _timed(function, *args) -> dict:
    start = time.process_time()
    result = function(*args)
    result['cpu_seconds'] = time.process_time() - start
    return result


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
    parser.add_argument(
        '--search-rkd-weights',
        type=float,
        nargs='+',
        metavar='W',
        help='instead of the study: train KD+RKD from the plain teacher with each RKD loss weight '
        f"(1 = the paper's distance 25, angle 50) on every seed, read val only, and write "
        f'{SEARCH_NAME}.md / .csv / .png / .json (the weight of the highest mean val top-1 is the '
        'chosen one)',
    )
    parser.add_argument(
        '--diagnostics-interval',
        type=int,
        default=8,
        help='iterations between two per-term loss / gradient records of the search runs',
    )
    add_overwrite_argument(parser)
    return parser.parse_args(argv)


def main(argv=None) -> tuple[list[dict], list[dict]] | list[dict]:
    """The study (its arms and paired rows), or with ``--search-rkd-weights`` the search's rows."""
    args = parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds) or len(args.seeds) < 2:
        raise SystemExit(f'--seeds: give at least two distinct seeds, got {args.seeds}')
    if args.search_rkd_weights:
        return search_main(args)
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
