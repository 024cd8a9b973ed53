"""How well a trained EN run's state finds the hidden positives of single-positive data.

EN (:class:`~mlkd.models.losses.ExpectedNegativeLoss`, ``docs/methods.md`` §3.5) leaves out of its
negative term the non-annotated classes that each image's running average scores highest, on the
bet that they are unannotated positives. On data whose complete labels are known (the generated
datasets, or any dataset with ``observed_labels``, which keeps ``gt_label_full``), a checkpoint's
state says how good that bet was: of the classes left out, how many are positives; of the hidden
positives, how many were left out; and how many of the remaining negatives are in fact positives,
against AN, which takes every non-annotated class for a negative.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from mmengine.config import Config

from mlkd.registry import DATASETS, MODELS
from mlkd.utils.checkpoint import load_local_checkpoint

#: The keys of :func:`negative_set_quality`, in table order.
QUALITY_KEYS = (
    'images_seen',
    'left_out_per_image',
    'left_out_precision',
    'hidden_recall',
    'negative_noise',
    'an_negative_noise',
)


def label_matrices(dataset) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Bool ``[N, C]`` observed and complete labels of ``dataset``, and its ``sample_idx [N]``.

    Raises:
        ValueError: when the dataset keeps no complete labels (``gt_label_full``).
    """
    num_classes = len(dataset.metainfo['classes'])
    observed = torch.zeros(len(dataset), num_classes, dtype=torch.bool)
    complete = torch.zeros_like(observed)
    sample_idx = torch.arange(len(dataset))
    for row in range(len(dataset)):  # once per analysis, not a training path
        info = dataset.get_data_info(row)
        if 'gt_label_full' not in info:
            raise ValueError(
                f'{type(dataset).__name__} keeps no complete labels (gt_label_full): the hidden '
                'positives cannot be known; use a generated dataset or observed_labels'
            )
        observed[row, list(info['gt_label'])] = True
        complete[row, list(info['gt_label_full'])] = True
        sample_idx[row] = int(info.get('sample_idx', row))
    return observed, complete, sample_idx


def negative_set_quality(
    negatives: torch.Tensor, observed: torch.Tensor, complete: torch.Tensor, seen: torch.Tensor
) -> dict[str, float]:
    """Statistics of a negative set against the complete labels, over the seen images.

    Args:
        negatives: bool ``[N, C]``, the entries a loss pushes towards 0.
        observed: bool ``[N, C]``, the annotated positives.
        complete: bool ``[N, C]``, every positive (a superset of ``observed``).
        seen: bool ``[N]``, the images with a running average (the others are left out).

    Returns:
        ``images_seen`` (fraction), ``left_out_per_image`` (non-annotated entries outside the
        negative set, mean per image), ``left_out_precision`` (fraction of them that are
        positives), ``hidden_recall`` (fraction of the non-annotated positives left out),
        ``negative_noise`` (fraction of the negative set that is positive) and
        ``an_negative_noise`` (the same for AN, whose negative set is every non-annotated entry).
    """
    unobserved = ~observed[seen]
    hidden = complete[seen] & unobserved
    negative = negatives[seen] & unobserved
    left_out = unobserved & ~negative

    def ratio(part: torch.Tensor, whole: torch.Tensor) -> float:
        total = int(whole.sum())
        return int(part.sum()) / total if total else float('nan')

    return {
        'images_seen': float(seen.float().mean()),
        'left_out_per_image': float(left_out.sum(1).float().mean()) if len(left_out) else 0.0,
        'left_out_precision': ratio(left_out & hidden, left_out),
        'hidden_recall': ratio(left_out & hidden, hidden),
        'negative_noise': ratio(negative & hidden, negative),
        'an_negative_noise': ratio(hidden, unobserved),
    }


def expected_negative_report(
    cfg: Config, checkpoints: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """``{checkpoint: {loss name: negative_set_quality(...)}}`` for every ``ExpectedNegativeLoss``
    of ``cfg.model.losses``, from the state saved in each checkpoint, on ``cfg``'s training set
    (its labels only, read once).

    Raises:
        ValueError: naming the config when it has no EN loss, or the checkpoint and the key it
            lacks.
    """
    losses = {
        name: loss_cfg
        for name, loss_cfg in cfg.model.get('losses', {}).items()
        if loss_cfg.get('type') == 'ExpectedNegativeLoss'
    }
    if not losses:
        raise ValueError(f'{cfg.filename}: model.losses has no ExpectedNegativeLoss')
    dataset_cfg = cfg.train_dataloader.dataset.copy()
    dataset_cfg['pipeline'] = []  # labels only: no image is decoded or augmented
    observed, complete, sample_idx = label_matrices(DATASETS.build(dataset_cfg))
    report = {}
    for checkpoint in checkpoints:
        state_dict = load_local_checkpoint(checkpoint, map_location='cpu')['state_dict']
        report[checkpoint] = {}
        for name, loss_cfg in losses.items():
            prefix = f'losses.{name}.'
            state = {k[len(prefix) :]: v for k, v in state_dict.items() if k.startswith(prefix)}
            if 'scores' not in state:
                raise ValueError(f'{checkpoint}: no {prefix}scores in its state_dict')
            loss = MODELS.build(dict(loss_cfg, num_classes=observed.shape[1]))
            loss.load_state_dict(state)
            # 1 annotated, -1 unobserved: the same under either setting of observed_negatives
            negatives = loss.expected_negatives(observed.float() * 2 - 1, sample_idx)
            seen = loss.seen[sample_idx]
            report[checkpoint][name] = negative_set_quality(negatives, observed, complete, seen)
    return report


def quality_table(rows: dict[str, dict[str, float]]) -> str:
    """A Markdown table, one row per ``{label: negative_set_quality(...)}`` entry."""
    lines = [
        '| run | ' + ' | '.join(QUALITY_KEYS) + ' |',
        '|---|' + '---:|' * len(QUALITY_KEYS),
    ]
    for label, values in rows.items():
        cells = [
            f'{values[key]:.3f}' if np.isfinite(values[key]) else 'n/a' for key in QUALITY_KEYS
        ]
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines) + '\n'
