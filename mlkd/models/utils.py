"""Small helpers shared by models, hooks and metrics."""
from __future__ import annotations

from typing import Sequence

import torch


def targets_from_samples(data_samples: Sequence, num_classes: int,
                         device: torch.device | str | None = None) -> torch.Tensor:
    """Stack the multi-label targets of a batch: ``[B, C]`` float, 1 / 0 / -1 (ignored).

    Uses ``gt_score`` when the data preprocessor built it (``to_onehot=True``), else scatters
    ``gt_label``. Classes in ``gt_label_difficult`` that are not also positives become -1, so
    no loss or metric counts them (VOC "difficult").
    """
    rows = []
    for sample in data_samples:
        if 'gt_score' in sample:
            row = sample.gt_score.detach().float().clone()
        else:
            row = torch.zeros(num_classes, device=sample.gt_label.device)
            row[sample.gt_label.long()] = 1.0
        if 'gt_label_difficult' in sample:
            difficult = torch.as_tensor(sample.gt_label_difficult, dtype=torch.long,
                                        device=row.device)
            difficult = difficult[row[difficult] <= 0]
            row[difficult] = -1.0
        rows.append(row)
    targets = torch.stack(rows)
    if targets.shape[1] != num_classes:
        raise ValueError(f'targets have {targets.shape[1]} classes but the model predicts '
                         f'{num_classes}')
    return targets if device is None else targets.to(device)
