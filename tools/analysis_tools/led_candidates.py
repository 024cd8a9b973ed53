"""What L2D's CD / ID reward on MultiDigits: their value for candidate student embeddings.

    python tools/analysis_tools/led_candidates.py TEACHER_CKPT [--config configs/demo/l2d.py]

On four training batches of 64 it compares L_CD and L_ID (unweighted) and the gradient norm of
``100·CD + 1000·ID`` w.r.t. the student's label-wise embeddings for:

* ``init``: the untrained student's embeddings (what training starts from);
* ``constant``: the same, averaged over the batch per class (image-independent embeddings,
  i.e. a student whose logits can only give the class priors), exactly and with 1e-3 noise;
* ``teacher projected``: a random linear projection of the teacher's embeddings to the student's
  width (a student that has learnt the teacher's features), with and without noise;
* ``teacher shuffled``: the same with the samples permuted (right features, wrong images).

The numbers are in docs/diagnosis.md.
"""

from __future__ import annotations

import argparse

import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

import mlkd  # noqa: F401
from mlkd.models.algorithms import Taps
from mlkd.models.losses.logit_kd.label_embedding import (
    class_aware_distance_loss,
    instance_aware_distance_loss,
)
from mlkd.models.utils import batch_targets
from mlkd.registry import DATASETS, MODELS


def embeddings(net: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """Label-wise embeddings ``[B, C, D]`` (the ML-Decoder's output) of ``net`` in eval mode."""
    with torch.no_grad(), Taps(net, {'emb': 'head.decoder'}, 'net') as taps:
        net(inputs, mode='tensor')
    return taps.values()['emb']


def candidates(
    student: torch.Tensor, teacher: torch.Tensor, generator: torch.Generator
) -> dict[str, torch.Tensor]:
    constant = student.mean(0, keepdim=True).expand_as(student).clone()
    projection = torch.randn(teacher.shape[-1], student.shape[-1], generator=generator)
    projected = teacher @ projection / teacher.shape[-1] ** 0.5
    noise = torch.randn(projected.shape, generator=generator)
    return {
        'init': student,
        'constant': constant,
        'constant + 1e-3 noise': constant + 1e-3 * torch.randn(constant.shape, generator=generator),
        'teacher projected': projected,
        'teacher projected + noise': projected + 0.5 * projected.std() * noise,
        'teacher shuffled': projected[torch.randperm(len(projected), generator=generator)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('teacher_ckpt')
    parser.add_argument('--config', default='configs/demo/l2d.py')
    parser.add_argument('--batches', type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    DefaultScope.get_instance('led_candidates', scope_name='mlkd')
    cfg = Config.fromfile(args.config)
    cfg.model.teacher_ckpt = args.teacher_ckpt
    if cfg.get('data_preprocessor') is not None:  # as the Runner does
        cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = MODELS.build(cfg.model).eval()
    dataset = DATASETS.build(dict(cfg.train_dataloader.dataset, pipeline=[dict(type='PackInputs')]))
    sums: dict[str, list[float]] = {}
    for b in range(args.batches):
        batch = pseudo_collate([dataset[i] for i in range(64 * b, 64 * b + 64)])
        data = model.data_preprocessor(batch, False)
        t_emb = embeddings(model.teacher, data['inputs'])
        s_emb = embeddings(model.student, data['inputs'])
        gt = batch_targets(data['data_samples'], model.num_classes)
        for name, emb in candidates(s_emb, t_emb, generator).items():
            emb = emb.clone().requires_grad_()
            cd = class_aware_distance_loss(emb, t_emb, gt)
            id_ = instance_aware_distance_loss(emb, t_emb, gt)
            grad = torch.autograd.grad(100 * cd + 1000 * id_, emb)[0].norm()
            row = sums.setdefault(name, [0.0, 0.0, 0.0])
            for i, value in enumerate((cd, id_, grad)):
                row[i] += float(value.detach()) / args.batches
    print('| student embeddings | L_CD | L_ID | 100·CD + 1000·ID | gradient norm |')
    print('|---|---:|---:|---:|---:|')
    for name, (cd, id_, grad) in sums.items():
        print(f'| {name} | {cd:.2f} | {id_:.2f} | {100 * cd + 1000 * id_:.0f} | {grad:.3g} |')


if __name__ == '__main__':
    main()
