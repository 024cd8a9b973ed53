"""Benchmark mlkd's logit-distillation losses (forward + backward) against brute-force loops.

Problem: ``B x C`` student / teacher logits (default 64 x 80, the 3D batch on COCO's classes) and
``{1, 0}`` labels with about ``--pos-per-row`` positives per row (COCO: ~2.9), class prevalences
decaying geometrically as on COCO, a few entries set to ``-1`` (ignored).

For every loss the script times one forward + backward of the module on fresh ``requires_grad``
student logits (the task losses ASL and Two-way are called as a head calls them, on the student
logits and the labels): the median over ``--repeats`` calls after warm-up, best of ``--rounds`` rounds that
visit every loss in turn (other processes on a small shared machine cause bursts of load; the best
round shows the loss's own cost).

With ``--references FILE`` (in a source checkout: ``tests/loss_references.py``, the brute-force
transcriptions of the definitions that the unit tests compare against; they are test code and
are not installed with mlkd) it also times those references, median of ``--ref-repeats`` calls,
and checks that value and gradient agree: for partial softmax (PSM), positive divide (L_PD) and
negative discrepancy (L_NDD, each switch setting) Python loops over samples / positives / pairs;
for ASL a loop over the ``B·C`` entries; for Two-way a loop over the class and sample sets.

Usage::

    python tools/benchmarks/benchmark_losses.py [--batch 64] [--classes 80] [--repeats 30]
        [--rounds 5] [--ref-repeats 3] [--threads N] [--references tests/loss_references.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import os.path as osp
import platform
import statistics
import time
from collections.abc import Callable

import torch

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.models.losses import (
    AsymmetricMultiLabelLoss,
    BinaryCrossEntropySumLoss,
    MSEDistillLoss,
    MultiLabelKDLoss,
    MultiLabelLogitDistillLoss,
    NegativeDiscrepancyLoss,
    PartialSoftmaxLoss,
    PositiveDivideLoss,
    SoftmaxKDLoss,
    TaskLoss,
    TwoWayMultiLabelLoss,
)

#: The functions ``--references FILE`` must define.
REFERENCE_FUNCTIONS = (
    'asymmetric_reference',
    'negative_discrepancy_reference',
    'partial_softmax_reference',
    'two_way_reference',
)


def load_references(path: str):
    """The module of brute-force references in ``path``, checked to define what is timed."""
    if not osp.isfile(path):
        raise FileNotFoundError(f'--references {path!r}: no such file')
    spec = importlib.util.spec_from_file_location('loss_references', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [name for name in REFERENCE_FUNCTIONS if not hasattr(module, name)]
    if missing:
        raise AttributeError(f'--references {path!r} does not define {", ".join(missing)}')
    return module


def make_problem(
    batch: int, classes: int, pos_per_row: float, ignore_frac: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Student logits, teacher logits (fp32 ``[B, C]``) and ``{1, 0, -1}`` labels."""
    gen = torch.Generator().manual_seed(seed)
    prevalence = torch.exp(-0.05 * torch.arange(classes, dtype=torch.float64))
    prevalence = (prevalence * pos_per_row / prevalence.sum()).clamp(max=0.5)
    gt = (torch.rand(batch, classes, generator=gen, dtype=torch.float64) < prevalence).float()
    gt[torch.rand(batch, classes, generator=gen) < ignore_frac] = -1
    t_logits = 4.0 * (gt == 1).float() - 3.0 + 1.5 * torch.randn(batch, classes, generator=gen)
    s_logits = t_logits + torch.randn(batch, classes, generator=gen)
    return s_logits, t_logits, gt


def time_fwd_bwd(
    fn: Callable[[torch.Tensor], torch.Tensor], s_logits: torch.Tensor, repeats: int, warmup: int
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """Median seconds of ``fn(s).backward()``; also returns the last value and gradient."""
    times = []
    for k in range(warmup + repeats):
        s = s_logits.clone().requires_grad_()
        start = time.perf_counter()
        out = fn(s)
        out.backward()
        elapsed = time.perf_counter() - start
        if k >= warmup:
            times.append(elapsed)
    return statistics.median(times), out.detach(), s.grad


def _fmt_ms(seconds: float | None) -> str:
    return '–' if seconds is None else f'{seconds * 1e3:.3f}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--classes', type=int, default=80)
    parser.add_argument('--pos-per-row', type=float, default=2.9)
    parser.add_argument('--ignore-frac', type=float, default=0.01)
    parser.add_argument('--repeats', type=int, default=30)
    parser.add_argument(
        '--rounds',
        type=int,
        default=5,
        help='rounds of --repeats for the vectorised losses; best median kept',
    )
    parser.add_argument(
        '--references',
        metavar='FILE',
        default=None,
        help='also time the brute-force references in FILE (a source checkout has them in '
        'tests/loss_references.py) and check value and gradient against them',
    )
    parser.add_argument('--ref-repeats', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument(
        '--threads', type=int, default=None, help="torch threads (default: leave torch's default)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        ref = load_references(args.references) if args.references else None
    except (FileNotFoundError, AttributeError) as error:
        parser.error(str(error))

    s_logits, t_logits, gt = make_problem(
        args.batch, args.classes, args.pos_per_row, args.ignore_frac, args.seed
    )
    pos_rows = (gt == 1).sum(1).float()
    print(
        f'torch {torch.__version__}, {platform.processor() or platform.machine()}, '
        f'threads={torch.get_num_threads()}, B={args.batch}, C={args.classes}, '
        f'positives/row={pos_rows.mean():.2f} (rows without positive: '
        f'{int((pos_rows == 0).sum())}), ignored entries={int((gt == -1).sum())}'
    )

    def ndd(**kw):
        module = NegativeDiscrepancyLoss(**kw)
        # The reference takes every switch: the module's, defaults included.
        switches = {name: getattr(module, name) for name in module.repr_fields}
        return (
            f'NegativeDiscrepancyLoss({", ".join(f"{k}={v!r}" for k, v in kw.items())})',
            module,
            lambda s: ref.negative_discrepancy_reference(s, t_logits, gt, **switches),
        )

    cases = [
        ('BinaryCrossEntropySumLoss()', BinaryCrossEntropySumLoss(), None),
        (
            'AsymmetricMultiLabelLoss()',
            AsymmetricMultiLabelLoss(),
            lambda s: ref.asymmetric_reference(s, gt),
        ),
        (
            'AsymmetricMultiLabelLoss(gamma_pos=1, detach_focal_weight=False)',
            AsymmetricMultiLabelLoss(gamma_pos=1, detach_focal_weight=False),
            lambda s: ref.asymmetric_reference(s, gt, gamma_pos=1, detach_focal_weight=False),
        ),
        ('TwoWayMultiLabelLoss()', TwoWayMultiLabelLoss(), lambda s: ref.two_way_reference(s, gt)),
        ('MultiLabelLogitDistillLoss()', MultiLabelLogitDistillLoss(), None),
        ('MultiLabelKDLoss(temperature=4)', MultiLabelKDLoss(), None),
        ('SoftmaxKDLoss(temperature=4)', SoftmaxKDLoss(), None),
        ("MSEDistillLoss(space='prob')", MSEDistillLoss(), None),
        (
            'PartialSoftmaxLoss()',
            PartialSoftmaxLoss(),
            lambda s: ref.partial_softmax_reference(s, t_logits, gt, temperature=1.0),
        ),
        (
            'PositiveDivideLoss(temperature=4)',
            PositiveDivideLoss(),
            lambda s: ref.partial_softmax_reference(
                s, t_logits, gt, temperature=4.0, temperature_squared=True
            ),
        ),
        ndd(form='bound', pair_norm='per_pair', aux_form='bound_exact'),
        ndd(form='bound', pair_norm='global', aux_form='bound_exact'),
        ndd(form='bound', pair_norm='per_pair', aux_form='printed'),
        ndd(form='exact', pair_norm='per_pair'),
        ndd(form='exact', pair_norm='global'),
    ]
    if ref is None:
        cases = [(name, module, None) for name, module, _ in cases]

    def closure(module):
        if isinstance(module, TaskLoss):  # head-style call
            return lambda s: module(s, gt)
        if isinstance(module, (PartialSoftmaxLoss, PositiveDivideLoss, NegativeDiscrepancyLoss)):
            return lambda s: module(s_logits=s, t_logits=t_logits, gt=gt)
        return lambda s: module(s_logits=s, t_logits=t_logits)

    # Vectorised losses: ``--rounds`` rounds, each visiting every loss in turn, best median kept
    # per loss — a burst of load from other processes on a small shared machine then spoils one
    # round of a loss, not its result.
    fns = [closure(module) for _, module, _ in cases]
    best = [None] * len(cases)
    for _ in range(args.rounds):
        for k, fn in enumerate(fns):
            result = time_fwd_bwd(fn, s_logits, args.repeats, warmup=5)
            if best[k] is None or result[0] < best[k][0]:
                best[k] = result

    rows = []
    for (name, _, reference), (fast, value, grad) in zip(cases, best):
        slow = speedup = None
        if reference is not None:
            slow, ref_value, ref_grad = time_fwd_bwd(
                reference, s_logits, args.ref_repeats, warmup=1
            )
            # The task-loss references loop in float64.
            torch.testing.assert_close(value, ref_value.to(value.dtype), rtol=1e-4, atol=1e-6)
            torch.testing.assert_close(grad, ref_grad, rtol=1e-3, atol=1e-7)
            speedup = slow / fast
        rows.append((name, fast, slow, speedup))
        print(
            f'{name:<75} {_fmt_ms(fast):>9} ms  ref {_fmt_ms(slow):>10} ms  '
            f'{"" if speedup is None else f"x{speedup:,.0f}"}',
            flush=True,
        )

    print('\n| loss | vectorised fwd+bwd (ms) | brute-force loop fwd+bwd (ms) | speed-up |')
    print('|---|---:|---:|---:|')
    for name, fast, slow, speedup in rows:
        sp = '–' if speedup is None else f'{speedup:,.0f}×'
        print(f'| `{name}` | {_fmt_ms(fast)} | {_fmt_ms(slow)} | {sp} |')


if __name__ == '__main__':
    main()
