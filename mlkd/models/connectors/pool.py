"""Parameter-free connectors that reshape a recorded tensor: global pooling, tokens to a map."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from mlkd.registry import MODELS


def last_output(x: Any) -> torch.Tensor:
    """The tensor a backbone tap holds: mmpretrain backbones return a tuple over ``out_indices``
    (the deepest selected stage is last)."""
    if isinstance(x, (tuple, list)):
        if not x:
            raise ValueError('expected a tensor or a non-empty tuple of tensors, got an empty one')
        x = x[-1]
    if not isinstance(x, torch.Tensor):
        raise TypeError(f'expected a tensor, got {type(x).__name__}')
    return x


@MODELS.register_module()
class GlobalPoolConnector(nn.Module):
    """Global average pooling: the embedding RKD / PKT / CRD compare, or ReviewKD's deepest level.

    ``[B, C, H, W]`` maps are averaged over ``H × W``; ``[B, L, C]`` tokens (transformer stages)
    over ``L``; ``[B, C]`` passes unchanged. A tuple (a backbone's output over its
    ``out_indices``) is reduced to its last tensor first, so ``source='s_feats'`` gives what a
    ``GlobalAveragePooling`` neck would give — for networks whose head has no neck (ML-Decoder).

    Args:
        keepdim: return ``[B, C, 1, 1]`` (a 1×1 map, as ReviewKD's pooled level) instead of
            ``[B, C]``.
    """

    def __init__(self, keepdim: bool = False, **unused_sizes) -> None:
        super().__init__()
        self.keepdim = bool(keepdim)

    def forward(self, x: Any) -> torch.Tensor:
        x = last_output(x)
        if x.dim() == 4:
            pooled = x.mean(dim=(2, 3))
        elif x.dim() == 3:
            pooled = x.mean(dim=1)
        elif x.dim() == 2:
            pooled = x
        else:
            raise ValueError(
                f'GlobalPoolConnector expects [B, C, H, W], [B, L, C] or [B, C], got '
                f'shape {tuple(x.shape)}'
            )
        return pooled[:, :, None, None] if self.keepdim else pooled

    def extra_repr(self) -> str:
        return f'keepdim={self.keepdim}'


@MODELS.register_module()
class TokenMapConnector(nn.Module):
    """``(tokens [B, H·W, C], (H, W))`` -> ``[B, C, H, W]``: a transformer stage as a feature map.

    mmpretrain's Swin stages (``backbone.stages.k``) return their tokens with the grid size, before
    the backbone's output norm (which exists only for the ``out_indices`` stages). A ``[B, C, H,
    W]`` tensor passes unchanged, so one config serves convolutional networks too.
    """

    def __init__(self, **unused_sizes) -> None:
        super().__init__()

    def forward(self, x: Any) -> torch.Tensor:
        if isinstance(x, torch.Tensor) and x.dim() == 4:
            return x
        if not (
            isinstance(x, (tuple, list))
            and len(x) == 2
            and isinstance(x[0], torch.Tensor)
            and x[0].dim() == 3
        ):
            raise ValueError(
                'TokenMapConnector expects (tokens [B, L, C], (H, W)) or a [B, C, H, '
                f'W] map, got {type(x).__name__}'
            )
        tokens, (height, width) = x
        batch, length, channels = tokens.shape
        if length != height * width:
            raise ValueError(
                f'TokenMapConnector: {length} tokens do not fill a {height}×{width} grid'
            )
        return tokens.transpose(1, 2).reshape(batch, channels, height, width)
