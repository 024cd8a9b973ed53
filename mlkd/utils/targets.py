"""The multi-label target: one rule, applied once per batch by the data preprocessor.

``[C]`` per sample (``[B, C]`` per batch), float: **1** positive (soft values in (0, 1] allowed,
e.g. after Mixup), **0** negative, **-1** ignored — in neither set, for every task loss,
distillation loss and metric. A class is ignored when the data sample lists it in
``gt_label_difficult`` (VOC objects marked difficult, as the dataset's ``difficult_policy`` leaves
them) or in ``gt_label_ignored`` (e.g. labels not observed in single-positive training) and it is
not also a positive.

:class:`mlkd.models.data_preprocessors.MultiLabelDataPreprocessor` builds the batch target with
:func:`mark_ignored` and stores each row as the sample's ``gt_score``; the head's task loss,
the algorithms (``gt``) and the metrics read that ``gt_score``. :func:`sample_target` applies the
same rule to a sample that did not pass through that preprocessor (idempotent otherwise).

The labels are validated once per batch, on the host, by :func:`check_batch_labels` (called by
that preprocessor before the transfer): the losses read their targets without checking them
again, which would cost a device-to-host synchronisation per loss call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

#: Data-sample fields whose classes become -1 (ignored) unless they are positive.
IGNORED_FIELDS = ('gt_label_difficult', 'gt_label_ignored')


def _host_indices(value: Any) -> np.ndarray:
    """Class indices of a label field as a flat int64 host array (empty for ``None``).

    The fields come from the data pipeline as lists, arrays or CPU tensors, so this reads host
    memory; only a field already moved to an accelerator costs a copy back.
    """
    if value is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.int64).reshape(-1)


def _describe(sample: Any, row: int) -> str:
    path = sample.get('img_path') if hasattr(sample, 'get') else None
    index = sample.get('sample_idx') if hasattr(sample, 'get') else None
    where = ', '.join(
        part
        for part in (f'sample_idx {index}' if index is not None else '', str(path) if path else '')
        if part
    )
    return f'sample {row} of the batch' + (f' ({where})' if where else '')


def _check_class_indices(
    parts: list[np.ndarray], data_samples: Sequence, field: str, num_classes: int | None
) -> None:
    """Raise a ValueError naming the first sample whose ``field`` holds an index outside
    ``[0, num_classes)`` (one vectorised test over the batch; the search runs on failure only)."""
    if not any(len(part) for part in parts):
        return
    flat = np.concatenate(parts)
    upper = np.inf if num_classes is None else num_classes
    if flat.min() >= 0 and flat.max() < upper:
        return
    for row, part in enumerate(parts):
        bad = part[(part < 0) | (part >= upper)]
        if len(bad):
            raise ValueError(
                f'{field} of {_describe(data_samples[row], row)} holds class '
                f'{int(bad[0])}, outside [0, {num_classes})'
            )


def check_batch_labels(
    data_samples: Sequence, num_classes: int | None, soft_targets: bool = False
) -> None:
    """Validate the labels of a batch on the host, once, before they reach the device.

    The losses trust their targets (a value check there would cost a device-to-host sync per
    loss call), so bad labels are refused here, naming the sample, the field and the value:

    * ``gt_label`` and the ignored-class fields (:data:`IGNORED_FIELDS`) hold class indices in
      ``[0, num_classes)``;
    * a ``gt_score`` given by the dataset has ``num_classes`` entries, each 0 or 1, or any value in
      ``[0, 1]`` with ``soft_targets=True``. Hard targets are the default because the losses that
      pick sets with ``gt == 1`` / ``gt == 0`` (Two-way, ASL, Focal, Hill, SPLC, the single-positive
      losses) would otherwise put a soft entry in neither set without a word.

    Raises:
        ValueError: for the first bad entry.
    """
    for field in ('gt_label',) + IGNORED_FIELDS:
        parts = [_host_indices(sample.get(field)) for sample in data_samples]
        _check_class_indices(parts, data_samples, field, num_classes)
    scores = [sample.get('gt_score') for sample in data_samples]
    if all(score is None for score in scores):
        return
    for row, score in enumerate(scores):
        if score is None:
            raise ValueError(
                f'{_describe(data_samples[row], row)} has no gt_score while others '
                'of its batch have one'
            )
        score = torch.as_tensor(score).detach().cpu()
        if num_classes is not None and score.numel() != num_classes:
            raise ValueError(
                f'gt_score of {_describe(data_samples[row], row)} has '
                f'{score.numel()} entries, expected num_classes={num_classes}'
            )
    batch = torch.stack([torch.as_tensor(s).detach().cpu().flatten().float() for s in scores])
    bad = (batch < 0) | (batch > 1) if soft_targets else (batch != 0) & (batch != 1)
    if bad.any():
        row, col = (int(v) for v in bad.nonzero()[0])
        allowed = (
            'in [0, 1]'
            if soft_targets
            else ('0 or 1 (set soft_targets=True in the data preprocessor for soft targets)')
        )
        raise ValueError(
            f'gt_score of {_describe(data_samples[row], row)} holds '
            f'{float(batch[row, col]):g} for class {col}; entries must be {allowed}'
        )


def mark_ignored(targets: torch.Tensor, data_samples: Sequence) -> torch.Tensor:
    """Set the ignored classes of each sample to -1 in a ``[B, C]`` target (returns a new tensor).

    One scatter for the whole batch: the ignored class lists of all samples are gathered on the
    host with their row numbers (and range-checked there), then moved to the device at once.
    Entries that are positive (``> 0``) stay as they are.
    """
    rows, cols = [], []
    for field in IGNORED_FIELDS:
        parts = [_host_indices(sample.get(field)) for sample in data_samples]
        _check_class_indices(parts, data_samples, field, targets.shape[1])
        rows += [np.full(len(part), row, dtype=np.int64) for row, part in enumerate(parts)]
        cols += parts
    if not any(len(col) for col in cols):
        return targets
    rows = torch.as_tensor(np.concatenate(rows), device=targets.device)
    cols = torch.as_tensor(np.concatenate(cols), device=targets.device)
    keep = targets[rows, cols] <= 0
    targets = targets.clone()
    targets[rows[keep], cols[keep]] = -1.0
    return targets


def sample_target(sample: Any, num_classes: int) -> torch.Tensor:
    """``[C]`` float target of one data sample (``DataSample`` or dict): 1 / 0 / -1 (ignored).

    Reads ``gt_score`` when present (the preprocessor's target), else scatters ``gt_label``; then
    applies the ignore rule of this module (a no-op on a preprocessor-built target). The target
    stays on the device of the sample's labels.

    Raises:
        ValueError: when ``gt_score`` does not have ``num_classes`` entries.
    """
    score = sample.get('gt_score')
    if score is not None:
        target = torch.as_tensor(score).detach().float().clone().flatten()
        if target.numel() != num_classes:
            raise ValueError(
                f'gt_score has {target.numel()} classes but the model predicts {num_classes}'
            )
    else:
        label = sample.get('gt_label')
        device = label.device if isinstance(label, torch.Tensor) else torch.device('cpu')
        index = _host_indices(label)
        _check_class_indices([index], [sample], 'gt_label', num_classes)
        target = torch.zeros(num_classes, device=device)
        target[torch.as_tensor(index, device=device)] = 1.0
    return mark_ignored(target[None], [sample])[0]
