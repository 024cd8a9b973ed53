"""Benchmark mlkd's vectorised multi-label metrics against scikit-learn and one torch.sort.

Computes, on a COCO-sized random problem (40,137 images x 80 classes, ~2.9 positives per image,
some tied scores):

* mlkd: mAP (per-class AP, grouped ties) + CP/CR/CF1/OP/OR/OF1 at threshold 0.5, and separately
  the oracle top-k (L2D) P/R/F1;
* scikit-learn: the same numbers from ``average_precision_score`` per class and
  ``multilabel_confusion_matrix`` counts (the oracle predictions are built with numpy);
* the floor: ONE ``torch.sort`` of the score matrix along dim 0.

Timings are medians over ``--repeats`` rounds; within a round the contenders run one after the
other, so a burst of load from other processes hits all of them alike. The script also checks
that every mlkd number agrees with scikit-learn within 1e-6 (as fractions).

Usage::

    python tools/benchmarks/benchmark_metrics.py [--n 40137] [--c 80] [--repeats 7] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from collections.abc import Callable

import numpy as np
import sklearn
import torch
from sklearn.metrics import average_precision_score, f1_score, multilabel_confusion_matrix

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.evaluation.metrics.functional import average_precision, mean_of_ap, multilabel_prf

KEYS = ('CP', 'CR', 'CF1', 'OP', 'OR', 'OF1')


def make_problem(
    n: int, c: int, pos_per_row: float, tie_frac: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores ``[n, c]`` float32 probabilities and targets ``[n, c]`` int64 {0, 1}.

    Class prevalences decay geometrically (one frequent class, a long tail, as on COCO) and are
    scaled to ``pos_per_row`` positives per image on average. Scores are sigmoids of a noisy,
    label-dependent logit, so AP and F1 sit in a realistic range; a ``tie_frac`` share of them
    is rounded to 2 decimals, which creates large tie groups.
    """
    gen = torch.Generator().manual_seed(seed)
    prevalence = torch.exp(-0.05 * torch.arange(c, dtype=torch.float64))
    prevalence = (prevalence * pos_per_row / prevalence.sum()).clamp(max=0.5)
    targets = (torch.rand(n, c, generator=gen, dtype=torch.float64) < prevalence).long()
    logits = 3.0 * targets - 2.5 + 1.3 * torch.randn(n, c, generator=gen)
    scores = torch.sigmoid(logits).float()
    rounded = torch.rand(n, c, generator=gen) < tie_frac
    scores = torch.where(rounded, torch.round(scores * 100) / 100, scores)
    return scores, targets


# ---------------------------------------------------------------------------------------------
# Contenders. Each returns a dict of numbers in percent.
# ---------------------------------------------------------------------------------------------


def mlkd_threshold(scores: torch.Tensor, targets: torch.Tensor) -> dict[str, float]:
    out = {'mAP': mean_of_ap(average_precision(scores, targets))}
    out.update(multilabel_prf(scores, targets, 'threshold', thr=0.5))
    return out


def mlkd_oracle(scores: torch.Tensor, targets: torch.Tensor) -> dict[str, float]:
    return multilabel_prf(scores, targets, 'oracle_topk')


def _prf_from_mcm(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    # multilabel_confusion_matrix[c] = [[TN, FP], [FN, TP]]
    mcm = multilabel_confusion_matrix(y_true, y_pred)
    tp, fp, fn = mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 1, 0]
    with np.errstate(divide='ignore', invalid='ignore'):
        cp = np.nan_to_num(tp / (tp + fp)).mean()
        cr = np.nan_to_num(tp / (tp + fn)).mean()
    cf1 = 2 * cp * cr / (cp + cr) if cp + cr > 0 else 0.0
    op = tp.sum() / max(tp.sum() + fp.sum(), 1)
    orec = tp.sum() / max(tp.sum() + fn.sum(), 1)
    of1 = 2 * op * orec / (op + orec) if op + orec > 0 else 0.0
    return {k: 100.0 * float(v) for k, v in zip(KEYS, (cp, cr, cf1, op, orec, of1))}


def sklearn_threshold(scores: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        aps = [
            average_precision_score(targets[:, j], scores[:, j]) for j in range(targets.shape[1])
        ]
    out = {'mAP': 100.0 * float(np.mean(aps))}
    out.update(_prf_from_mcm(targets, (scores >= 0.5).astype(np.int64)))
    return out


def sklearn_oracle(scores: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    # L2D's rule with numpy: thr_i = (k_i + 1)-th largest score, predict strictly greater.
    k = targets.sum(1)
    desc = -np.sort(-scores, axis=1)
    c = scores.shape[1]
    thr = np.take_along_axis(desc, np.minimum(k, c - 1)[:, None], axis=1)
    thr[k >= c] = -np.inf
    return _prf_from_mcm(targets, (scores > thr).astype(np.int64))


def torch_sort_floor(scores: torch.Tensor) -> None:
    torch.sort(scores, dim=0)


def time_round_robin(
    tasks: dict[str, Callable[[], object]], repeats: int
) -> dict[str, tuple[float, float]]:
    """(median, min) wall time in ms of each task; every round runs each task once, in turn."""
    samples: dict[str, list[float]] = {name: [] for name in tasks}
    for fn in tasks.values():  # warm-up (allocator, lazy imports)
        fn()
    for _ in range(repeats):
        for name, fn in tasks.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: (1e3 * float(np.median(v)), 1e3 * min(v)) for name, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--n', type=int, default=40137, help='images (COCO val2014: 40,137)')
    parser.add_argument('--c', type=int, default=80, help='classes')
    parser.add_argument('--pos-per-row', type=float, default=2.9)
    parser.add_argument(
        '--tie-frac', type=float, default=0.3, help='share of scores rounded to 2 decimals'
    )
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument(
        '--threads',
        type=int,
        default=os.cpu_count() or 1,
        help="torch intra-op threads (default: the machine's cores)",
    )
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    scores, targets = make_problem(args.n, args.c, args.pos_per_row, args.tie_frac, args.seed)
    np_scores, np_targets = scores.numpy(), targets.numpy()
    distinct = torch.unique(scores).numel()
    print(
        f'problem: {args.n} x {args.c}, {targets.sum(1).float().mean():.3f} positives/image, '
        f'{distinct} distinct scores in {scores.numel()} entries, '
        f'classes without positives: {int((targets.sum(0) == 0).sum())}'
    )
    print(
        f'machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, '
        f'torch {torch.__version__} ({torch.get_num_threads()} threads), '
        f'scikit-learn {sklearn.__version__}, numpy {np.__version__}, '
        f'load average {os.getloadavg()[0]:.2f}'
    )

    # Correctness first: every number must match scikit-learn within 1e-6 (as a fraction).
    ours, ref = mlkd_threshold(scores, targets), sklearn_threshold(np_scores, np_targets)
    ours_o, ref_o = mlkd_oracle(scores, targets), sklearn_oracle(np_scores, np_targets)
    per_class = average_precision(scores, targets).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        sk_per_class = np.array(
            [average_precision_score(np_targets[:, j], np_scores[:, j]) for j in range(args.c)]
        )
        sk_macro = f1_score(np_targets, (np_scores >= 0.5).astype(np.int64), average='macro')
    macro = multilabel_prf(scores, targets, 'threshold', cf1_mode='mean_of_class_f1')['CF1']
    diffs = {f'{k}_thr0.5': abs(ours[k] - ref[k]) / 100 for k in ref}
    diffs.update({f'{k}_oracle': abs(ours_o[k] - ref_o[k]) / 100 for k in ref_o})
    diffs['per-class AP (max)'] = float(np.abs(per_class - sk_per_class).max())
    diffs['CF1macro_thr0.5 vs f1_score(macro)'] = abs(macro / 100 - sk_macro)
    worst = max(diffs, key=diffs.get)
    agree = diffs[worst] <= 1e-6
    print('\nvalues (percent)      mlkd          scikit-learn')
    for k in ref:
        print(f'  {k + "_thr0.5":<18}{ours[k]:12.6f}  {ref[k]:12.6f}')
    for k in ref_o:
        print(f'  {k + "_oracle":<18}{ours_o[k]:12.6f}  {ref_o[k]:12.6f}')
    print(
        f'largest |difference| (fraction): {diffs[worst]:.2e} ({worst}) -> '
        f'{"agree" if agree else "DISAGREE"} within 1e-6'
    )

    times = time_round_robin(
        {
            'torch.sort dim 0 (floor)': lambda: torch_sort_floor(scores),
            'mlkd mAP + thr0.5 P/R/F1': lambda: mlkd_threshold(scores, targets),
            'sklearn mAP + thr0.5 P/R/F1': lambda: sklearn_threshold(np_scores, np_targets),
            'mlkd oracle P/R/F1': lambda: mlkd_oracle(scores, targets),
            'sklearn/numpy oracle P/R/F1': lambda: sklearn_oracle(np_scores, np_targets),
            'mlkd per-class AP only': lambda: average_precision(scores, targets),
        },
        args.repeats,
    )

    floor_min = times['torch.sort dim 0 (floor)'][1]
    mins = {name: t[1] for name, t in times.items()}
    times = {name: t[0] for name, t in times.items()}
    floor = times['torch.sort dim 0 (floor)']
    print(f'\n{args.repeats} rounds, {torch.get_num_threads()} torch threads; goals use the median')
    print(f'| {"task":<30} | {"median ms":>9} | {"x sort":>7} | {"min ms":>8} | {"x sort":>7} |')
    print(f'|{"-" * 32}|{"-" * 11}|{"-" * 9}|{"-" * 10}|{"-" * 9}|')
    for name, ms in times.items():
        print(
            f'| {name:<30} | {ms:9.1f} | {ms / floor:7.2f} | {mins[name]:8.1f} | '
            f'{mins[name] / floor_min:7.2f} |'
        )
    speedup = times['sklearn mAP + thr0.5 P/R/F1'] / times['mlkd mAP + thr0.5 P/R/F1']
    speedup_o = times['sklearn/numpy oracle P/R/F1'] / times['mlkd oracle P/R/F1']
    ratio = times['mlkd mAP + thr0.5 P/R/F1'] / floor
    print(
        f'\nspeed-up over scikit-learn (mAP + thr0.5): {speedup:.1f}x '
        f'(goal >= 3x: {"met" if speedup >= 3 else "NOT met"})'
    )
    print(
        f'mlkd (mAP + thr0.5) / one torch.sort: {ratio:.2f}x '
        f'(goal <= 2x: {"met" if ratio <= 2 else "NOT met"})'
    )
    print(
        f'oracle: speed-up over scikit-learn/numpy {speedup_o:.1f}x, '
        f'{times["mlkd oracle P/R/F1"] / floor:.2f}x one torch.sort'
    )
    print(f'load average after: {os.getloadavg()[0]:.2f}')
    if not agree:
        raise SystemExit('mlkd and scikit-learn disagree by more than 1e-6')


if __name__ == '__main__':
    main()
