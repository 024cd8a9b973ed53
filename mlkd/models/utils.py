"""Small helpers shared by models, hooks and metrics."""
from __future__ import annotations

from typing import Sequence

import torch

from mlkd.utils.targets import sample_target


def targets_from_samples(data_samples: Sequence, num_classes: int,
                         device: torch.device | str | None = None) -> torch.Tensor:
    """Stack the multi-label targets of a batch: ``[B, C]`` float, 1 / 0 / -1 (ignored).

    Uses ``gt_score`` when the data preprocessor built it (``to_onehot=True``), else scatters
    ``gt_label``. Classes in ``gt_label_difficult`` that are not also positives become -1, so
    no loss or metric counts them (VOC "difficult").
    """
    targets = torch.stack([sample_target(sample, num_classes) for sample in data_samples])
    return targets if device is None else targets.to(device)
