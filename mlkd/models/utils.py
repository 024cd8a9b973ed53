"""Small helpers shared by models, hooks and tools."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from mmengine.model import is_model_wrapper
from torch import nn

from mlkd.utils.targets import mark_ignored, sample_target


def unwrap_model(model: nn.Module) -> nn.Module:
    """The model inside a DDP / FSDP / mmengine wrapper (the model itself otherwise)."""
    return model.module if is_model_wrapper(model) else model


def batch_targets(data_samples: Sequence, num_classes: int) -> torch.Tensor:
    """``[B, C]`` float target of a batch: 1 / 0 / -1 (ignored), see :mod:`mlkd.utils.targets`.

    The rows are the ``gt_score`` that :class:`MultiLabelDataPreprocessor` built for the batch
    (the ignore rule is re-applied, a no-op then, so a batch from another preprocessor follows
    the same rule); samples without ``gt_score`` are built by :func:`sample_target`.
    """
    scores = [s.get('gt_score') for s in data_samples]
    if all(isinstance(s, torch.Tensor) for s in scores):
        if scores and scores[0].numel() != num_classes:
            raise ValueError(
                f'gt_score has {scores[0].numel()} classes but the model predicts {num_classes}'
            )
        return mark_ignored(torch.stack(scores).float(), data_samples)
    return torch.stack([sample_target(s, num_classes) for s in data_samples])
