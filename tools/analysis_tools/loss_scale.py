"""How each distillation term's pull compares with the BCE-sum task loss as B and C change.

    python tools/analysis_tools/loss_scale.py

On synthetic batches (a confident, correct teacher; an untrained student with small random
logits; label embeddings = the teacher's plus unit noise) it prints, for several batch sizes B,
class counts C and label densities, the norm of each weighted term's gradient w.r.t. the student's
logits (label embeddings for CD / ID) divided by the BCE-sum's gradient norm w.r.t. the logits,
with the papers' literal weights and with ``weight_reference`` (the rule of
:mod:`mlkd.models.losses.weight_reference`). The numbers are in docs/diagnosis.md.
"""

from __future__ import annotations

import argparse

import torch

from mlkd.models.losses import (
    BinaryCrossEntropySumLoss,
    LabelEmbeddingDistillLoss,
    MultiLabelLogitDistillLoss,
    NegativeDiscrepancyLoss,
    PositiveDivideLoss,
)
from mlkd.models.losses.weight_reference import PAPER_REFERENCE

#: (B, C, positives per image): MultiDigits, COCO-like, and batch-size variations.
SETTINGS = ((64, 10, 2.3), (64, 80, 2.9), (32, 10, 2.3), (128, 10, 2.3))


def ratios(
    batch_size: int,
    num_classes: int,
    positives: float,
    reference: dict | None,
    dim: int = 32,
    seed: int = 0,
) -> dict[str, float]:
    """Gradient-norm ratio of each weighted term to the BCE-sum task loss, on logits/embeddings."""
    g = torch.Generator().manual_seed(seed)
    shape = (batch_size, num_classes)
    gt = (torch.rand(shape, generator=g) < positives / num_classes).float()
    t_logits = torch.where(gt > 0, 3.0, -5.0) + 0.5 * torch.randn(shape, generator=g)
    s_logits = (0.5 * torch.randn(shape, generator=g)).requires_grad_()
    t_emb = torch.randn(*shape, dim, generator=g)
    s_emb = (t_emb + torch.randn(*shape, dim, generator=g)).requires_grad_()
    task = torch.autograd.grad(BinaryCrossEntropySumLoss()(s_logits, gt), s_logits)[0].norm()
    ref = dict(weight_reference=reference)
    logit_terms = {
        '10·MLD': MultiLabelLogitDistillLoss(loss_weight=10.0, **ref)(s_logits, t_logits),
        '100·L_PD (τ²)': PositiveDivideLoss(loss_weight=100.0, **ref)(s_logits, t_logits, gt),
        '100·L_PD (no τ²)': PositiveDivideLoss(loss_weight=100.0, temperature_squared=False, **ref)(
            s_logits, t_logits, gt
        ),
        '10·L_NDD': NegativeDiscrepancyLoss(loss_weight=10.0, **ref)(s_logits, t_logits, gt),
    }
    out = {
        k: float(torch.autograd.grad(v, s_logits)[0].norm() / task) for k, v in logit_terms.items()
    }
    led = LabelEmbeddingDistillLoss(**ref)(s_emb, t_emb, gt)
    out.update(
        {
            f'{w}·{k.upper()}': float(torch.autograd.grad(led[k], s_emb)[0].norm() / task)
            for k, w in (('cd', 100), ('id', 1000))
        }
    )
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # only --help
    torch.set_num_threads(1)
    for reference in (None, PAPER_REFERENCE):
        rule = 'literal weights' if reference is None else f'weight_reference={reference}'
        print(f'\n{rule}: |∇ weighted term| / |∇ BCE-sum| (logits; embeddings for CD, ID)')
        rows = {(b, c, p): ratios(b, c, p, reference) for b, c, p in SETTINGS}
        names = list(next(iter(rows.values())))
        print('| B | C | pos/img | ' + ' | '.join(names) + ' |')
        print('|---:|---:|---:|' + '---:|' * len(names))
        for (b, c, p), row in rows.items():
            print(f'| {b} | {c} | {p} | ' + ' | '.join(f'{row[n]:.3g}' for n in names) + ' |')


if __name__ == '__main__':
    main()
