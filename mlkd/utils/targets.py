"""Multi-label targets of one data sample: the single place that reads labels for losses and metrics."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch


def _indices(value: Any, device: torch.device) -> torch.Tensor:
    if value is None:
        return torch.zeros(0, dtype=torch.long, device=device)
    if isinstance(value, torch.Tensor):
        return value.detach().flatten().long().to(device)
    return torch.as_tensor(np.asarray(value, dtype=np.int64).flatten(), device=device)


def sample_target(sample: Any, num_classes: int, difficult_as_ignored: bool = True) -> torch.Tensor:
    """``[C]`` float target of a data sample (``DataSample`` or dict): 1 / 0 / -1 (ignored).

    Uses ``gt_score`` when present (the preprocessor's multi-hot, possibly soft), else scatters
    ``gt_label``. With ``difficult_as_ignored``, classes in ``gt_label_difficult`` that are not also
    positive become -1 (VOC "difficult"; a class with a normal object too stays positive, as in
    mmpretrain's VOC metrics), so no loss or metric counts them. The target stays on the device of
    the sample's labels (no host round-trip in the training step).

    Raises:
        ValueError: when ``gt_score`` does not have ``num_classes`` entries.
    """
    score = sample.get('gt_score')
    if score is not None:
        target = torch.as_tensor(score).detach().float().clone().flatten()
        if target.numel() != num_classes:
            raise ValueError(f'gt_score has {target.numel()} classes but the model predicts '
                             f'{num_classes}')
    else:
        label = sample.get('gt_label')
        device = label.device if isinstance(label, torch.Tensor) else torch.device('cpu')
        target = torch.zeros(num_classes, device=device)
        target[_indices(label, device)] = 1.0
    if difficult_as_ignored and sample.get('gt_label_difficult') is not None:
        difficult = _indices(sample.get('gt_label_difficult'), target.device)
        target[difficult[target[difficult] <= 0]] = -1.0
    return target
