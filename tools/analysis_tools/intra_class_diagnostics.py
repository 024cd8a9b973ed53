"""Intra- / inter-class spread and soft-label entropy of trained teachers over a λ grid.

The diagnostic of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
(anonymous ICLR submission, §4.2, Theorems 1–2): a teacher trained with ``CE + λ·L_intra`` should
spread the samples of a class more as λ grows, and its soft labels should carry more than the
ground truth. For each teacher checkpoint (one or several per λ: teachers trained with other seeds;
λ = 0 is the plain teacher) and one split of
the data, without augmentation, this computes

* the mean intra-class and inter-class Euclidean distance of the L2-normalised embeddings and their
  ratio (intra / inter);
* the paper's "distances" ``d_Intra = E_{x⁻∈C(x)} exp(φ(x)ᵀφ(x⁻))`` and ``d_Inter`` (the same over
  the other classes) and ``d_Intra / d_Inter`` — these are similarities: larger means closer;
* the mean entropy (nats) of the softmax soft labels, and top-1 accuracy;

(definitions and the anchor-then-pair averaging: :mod:`mlkd.evaluation.class_distances`) and
writes ``intra_class_diagnostics.md`` (a Markdown table, one row per checkpoint, and where a λ has
several checkpoints a second one with the mean ± sample std per λ), ``.csv`` (per checkpoint) and
``.png`` (every quantity against λ: the mean per λ, ± std where there are several) in
``--out-dir``; existing files there are refused unless ``--overwrite``.

    python tools/analysis_tools/intra_class_diagnostics.py TEACHER_CONFIG \
        --teachers 0=work_dirs/plain_teacher 0.01=work_dirs/ic_001/epoch_90.pth 0.01=<seed 2> ... \
        --out-dir work_dirs/intra_class_diagnostics [--split test|train] \
        [--embedding penultimate|logits] [--temperature 1] [--max-samples N] \
        [--batch-size 256] [--device cpu] [--cfg-options ...]

TEACHER_CONFIG is the teachers' config (its ``model`` and data). Its classifier is the ``model``
itself, or ``model.classifier`` when the model is a ``ClassifierWithLosses`` (the intra-class
teacher: a classifier plus its losses); every checkpoint must fit that classifier (strict load; a
work dir means its last checkpoint; a ``ClassifierWithLosses`` checkpoint gives its classifier, a
distiller checkpoint its student), so the plain teacher (λ = 0) may come from a plain classifier
config with the same network. ``--split train`` runs the training images through the test
pipeline. The embedding is the classifier's penultimate feature (the head's input,
``pre_logits``) or its logits.
"""

from __future__ import annotations

import argparse
import math
import os.path as osp

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt
import torch
from mmengine.registry import init_default_scope

import mlkd  # noqa: F401
from mlkd.apis.classifier_outputs import build_loader, load_classifier
from mlkd.evaluation.class_distances import (
    class_distance_statistics,
    soft_label_entropy,
)
from mlkd.utils.cli import add_cfg_options_argument, add_device_argument, load_config
from mlkd.utils.output_policy import (
    add_overwrite_argument,
    open_output,
    output_paths,
    save_figure,
)
from mlkd.utils.tables import format_mean_std, mean_std, render_table, write_csv

OUT_NAME = 'intra_class_diagnostics'
#: (key of a result row, column header, digits)
COLUMNS = (
    ('lambda', 'λ', None),
    ('accuracy', 'top-1 (%)', 2),
    ('entropy', 'soft-label entropy', 4),
    ('intra_distance', 'intra ‖φ−φ′‖', 4),
    ('inter_distance', 'inter ‖φ−φ′‖', 4),
    ('distance_ratio', 'intra / inter', 4),
    ('d_intra', 'd_Intra', 4),
    ('d_inter', 'd_Inter', 4),
    ('d_ratio', 'd_Intra / d_Inter', 4),
    ('num_samples', 'samples', None),
    ('checkpoint', 'checkpoint', None),
)


def parse_teachers(specs: list[str]) -> list[tuple[float, str]]:
    """``['0.01=b', '0=a', '0.01=c']`` -> ``[(0.0, 'a'), (0.01, 'b'), (0.01, 'c')]`` sorted by λ
    (a λ may have several checkpoints: teachers trained with other seeds).

    Raises:
        ValueError: naming the entry that is not ``λ=CHECKPOINT``, a negative λ, or a checkpoint
            given twice for the same λ.
    """
    teachers = []
    for spec in specs:
        value, sep, path = spec.partition('=')
        try:
            lam = float(value)
        except ValueError:
            lam = math.nan
        if not sep or not path or not math.isfinite(lam):
            raise ValueError(
                f'--teachers entry {spec!r} is not LAMBDA=CHECKPOINT '
                '(e.g. 0.01=work_dirs/teacher/epoch_90.pth)'
            )
        if lam < 0:
            raise ValueError(f'--teachers entry {spec!r}: λ must be >= 0')
        if (lam, path) in teachers:
            raise ValueError(f'--teachers: {path!r} given twice for λ={value}')
        teachers.append((lam, path))
    return sorted(teachers, key=lambda item: item[0])


def single_labels(data_samples: list, where: str) -> torch.Tensor:
    """``[B]`` class indices; multi-label samples are refused."""
    labels = [s.gt_label for s in data_samples]
    if any(label.numel() != 1 for label in labels):
        sizes = sorted({int(label.numel()) for label in labels})
        raise ValueError(
            f'{where}: intra-class diagnostics need single-label data (one class '
            f'per sample); got samples with {sizes} labels'
        )
    return torch.cat([label.reshape(1) for label in labels]).long()


@torch.no_grad()
def collect_outputs(
    model, loader, embedding: str, max_samples: int | None, device: torch.device
) -> dict[str, torch.Tensor]:
    """``embeddings [N, D]``, ``logits [N, C]``, ``labels [N]`` of the classifier on ``loader``."""
    if not (
        hasattr(model, 'extract_feat')
        and hasattr(model, 'head')
        and hasattr(model.head, 'pre_logits')
    ):
        raise TypeError(
            f'{type(model).__name__} is not a classifier with extract_feat and a '
            'head with pre_logits (an mmpretrain ImageClassifier)'
        )
    parts = {'embeddings': [], 'logits': [], 'labels': []}
    seen = 0
    for batch in loader:
        data = model.data_preprocessor(batch, training=False)
        feats = model.extract_feat(data['inputs'].to(device))
        logits = model.head(feats)
        parts['embeddings'].append(
            (model.head.pre_logits(feats) if embedding == 'penultimate' else logits)
            .flatten(1)
            .cpu()
        )
        parts['logits'].append(logits.cpu())
        parts['labels'].append(single_labels(data['data_samples'], 'the dataset'))
        seen += len(parts['labels'][-1])
        if max_samples is not None and seen >= max_samples:
            break
    out = {k: torch.cat(v) for k, v in parts.items()}
    if max_samples is not None:
        out = {k: v[:max_samples] for k, v in out.items()}
    return out


def teacher_statistics(
    outputs: dict[str, torch.Tensor], num_classes: int, temperature: float, chunk_size: int
) -> dict[str, float]:
    """Every quantity of the table for one teacher's outputs."""
    stats = class_distance_statistics(
        outputs['embeddings'], outputs['labels'], num_classes, chunk_size
    )
    stats['entropy'] = float(soft_label_entropy(outputs['logits'], temperature).mean())
    stats['accuracy'] = 100.0 * float(
        (outputs['logits'].argmax(1) == outputs['labels']).double().mean()
    )
    stats['num_samples'] = len(outputs['labels'])
    return stats


#: the quantities averaged over the checkpoints of one λ
QUANTITIES = [(key, name, digits) for key, name, digits in COLUMNS if digits is not None]


def by_lambda(rows: list[dict]) -> list[dict]:
    """One row per λ: ``checkpoints`` (their number) and, per quantity, the list of its values
    over that λ's checkpoints, in λ order."""
    groups: dict[float, list[dict]] = {}
    for row in rows:
        groups.setdefault(row['lambda'], []).append(row)
    return [
        dict(
            {key: [row[key] for row in group] for key, _, _ in QUANTITIES},
            checkpoints=len(group),
            **{'lambda': lam},
        )
        for lam, group in sorted(groups.items())
    ]


def _cell(value, digits: int | None) -> str:
    if digits is None:
        return f'{value:g}' if isinstance(value, float) else str(value)
    return 'nan' if math.isnan(value) else f'{value:.{digits}f}'


def plot(summary: list[dict], path: str, title: str, **policy) -> None:
    """Every quantity against λ (λ values as categories, so that λ = 0 has a place): the mean over
    each λ's checkpoints, with their sample standard deviation as a bar where there are several."""
    labels = [f'{row["lambda"]:g}' for row in summary]
    x = list(range(len(summary)))
    panels = [
        (
            'Euclidean distance of normalised embeddings',
            [('intra_distance', 'intra-class'), ('inter_distance', 'inter-class')],
        ),
        ('intra / inter distance', [('distance_ratio', None)]),
        ('exp(φᵀφ′) (larger = closer)', [('d_intra', 'd_Intra'), ('d_inter', 'd_Inter')]),
        ('d_Intra / d_Inter', [('d_ratio', None)]),
        ('mean soft-label entropy (nats)', [('entropy', None)]),
        ('top-1 accuracy (%)', [('accuracy', None)]),
    ]
    figure, axes = plt.subplots(2, 3, figsize=(12, 6.5), layout='constrained')
    for axis, (panel_title, series) in zip(axes.flat, panels):
        for key, name in series:
            stats = [mean_std(row[key]) for row in summary]
            axis.errorbar(
                x,
                [mean for mean, _ in stats],
                yerr=[std or 0.0 for _, std in stats],
                marker='o',
                capsize=3,
                label=name,
            )
        axis.set_title(panel_title, fontsize=9)
        axis.set_xticks(x, labels)
        axis.set_xlabel('λ')
        axis.grid(alpha=0.3)
        if any(name for _, name in series):
            axis.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    save_figure(figure, path, dpi=120, **policy)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help="the teachers' config (model and data)")
    parser.add_argument(
        '--teachers',
        nargs='+',
        required=True,
        metavar='LAMBDA=CKPT',
        help='a checkpoint (or work dir) per λ, several for a λ where teachers of '
        'other seeds exist; λ = 0 is the plain teacher',
    )
    parser.add_argument('--out-dir', required=True)
    parser.add_argument(
        '--split',
        choices=('test', 'train'),
        default='test',
        help='test: the test dataloader; train: the training images through the test pipeline',
    )
    parser.add_argument('--embedding', choices=('penultimate', 'logits'), default='penultimate')
    parser.add_argument(
        '--temperature',
        type=float,
        default=1.0,
        help='softmax temperature of the soft labels whose entropy is reported',
    )
    parser.add_argument('--max-samples', type=int, help='only the first N samples of the split')
    parser.add_argument('--batch-size', type=int)
    parser.add_argument('--num-workers', type=int)
    parser.add_argument(
        '--chunk-size',
        type=int,
        default=4096,
        help='rows of the N x N similarity matrix held at once',
    )
    add_device_argument(parser, help=None, choices=None)
    add_overwrite_argument(parser)
    add_cfg_options_argument(parser)
    return parser.parse_args(argv)


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    teachers = parse_teachers(args.teachers)
    if args.max_samples is not None and args.max_samples < 2:
        raise SystemExit(f'--max-samples must be >= 2, got {args.max_samples}')
    policy = dict(inputs=[args.config] + [ckpt for _, ckpt in teachers], overwrite=args.overwrite)
    outputs = output_paths(osp.join(args.out_dir, OUT_NAME), ['md', 'csv', 'png'], **policy)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    loader = build_loader(cfg, args.split, args.batch_size, args.num_workers)
    device = torch.device(args.device)

    rows = []
    for lam, checkpoint in teachers:
        model = load_classifier(cfg, checkpoint, f'teacher λ={lam:g}', device)
        result = collect_outputs(model, loader, args.embedding, args.max_samples, device)
        num_classes = result['logits'].shape[1]
        stats = teacher_statistics(result, num_classes, args.temperature, args.chunk_size)
        if stats['intra_anchors'] == 0:
            print(
                f'note: λ={lam:g}: no class has two samples in the {args.split} split; the '
                'intra-class statistics are undefined (nan)'
            )
        rows.append(dict(stats, checkpoint=checkpoint, **{'lambda': lam}))
        print(
            f'λ={lam:g}: '
            + ', '.join(f'{key} {_cell(stats[key], digits)}' for key, _, digits in COLUMNS[1:-2])
        )

    header = [name for _, name, _ in COLUMNS]
    table = [[_cell(row[key], digits) for key, _, digits in COLUMNS] for row in rows]
    setting = (
        f'{osp.basename(args.config)}, {args.split} split ({rows[0]["num_samples"]} '
        f'samples), {args.embedding} embedding (L2-normalised), soft labels at '
        f'temperature {args.temperature:g}'
    )
    note = (
        f'{setting}. d_Intra / d_Inter are the paper\'s exp(φᵀφ′) "distances" '
        '(similarities: larger = closer).'
    )
    summary = by_lambda(rows)
    text = render_table(header, table) + '\n\n' + note + '\n'
    if any(row['checkpoints'] > 1 for row in summary):  # teachers of several seeds per λ
        text += (
            '\nPer λ, mean ± sample std over its checkpoints:\n\n'
            + render_table(
                ['λ', 'checkpoints', *(name for _, name, _ in QUANTITIES)],
                [
                    [
                        f'{row["lambda"]:g}',
                        row['checkpoints'],
                        *(format_mean_std(row[key], digits) for key, _, digits in QUANTITIES),
                    ]
                    for row in summary
                ],
            )
            + '\n'
        )
    with open_output(outputs['md'], **policy) as file:
        file.write(text)
    write_csv(
        outputs['csv'],
        [key for key, _, _ in COLUMNS],
        [[row[key] for key, _, _ in COLUMNS] for row in rows],
        **policy,
    )
    plot(summary, outputs['png'], f'Intra-class diagnostics: {setting}', **policy)
    print(text)
    print(f'wrote {", ".join(outputs.values())}')
    return rows


if __name__ == '__main__':
    main()
