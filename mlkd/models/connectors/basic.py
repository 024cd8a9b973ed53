"""Connectors: trainable maps from a student's recorded tensor into the teacher's space.

A connector is an ``nn.Module`` built by :class:`mlkd.models.algorithms.ConnectorRouter` from a
config such as ``dict(type='ConvBNConnector', source='s_stage3', target='t_stage3')``; the router
fills ``in_channels`` / ``out_channels`` from the shape probe (dimension 1 of the source and
target tensors). It runs with the networks — under autocast with ``--amp`` — trains with the
student, is reachable by ``paramwise_cfg`` under ``connectors.<name>``, and is not part of an
exported student.
"""

from __future__ import annotations

import torch
from torch import nn

from mlkd.registry import MODELS


@MODELS.register_module()
class IdentityConnector(nn.Identity):
    """Pass the source on unchanged (a named alias; no parameters)."""

    def __init__(self, **unused_sizes) -> None:
        super().__init__()


@MODELS.register_module()
class LinearConnector(nn.Linear):
    """``[B, in_channels] -> [B, out_channels]`` (embedding vectors, e.g. ``s_pooled``).

    Args:
        in_channels: width of the source (probed).
        out_channels: width of the target (probed; defaults to ``in_channels``).
        bias: learn a bias.
    """

    def __init__(
        self, in_channels: int, out_channels: int | None = None, bias: bool = True
    ) -> None:
        super().__init__(in_channels, out_channels or in_channels, bias=bias)


@MODELS.register_module()
class ConvBNConnector(nn.Sequential):
    """1×1 convolution + BatchNorm: ``[B, in_channels, H, W] -> [B, out_channels, H, W]``.

    The usual FitNet / OFD regressor between feature maps of different widths.

    Args:
        in_channels: channels of the source map (probed).
        out_channels: channels of the target map (probed; defaults to ``in_channels``).
        kernel_size: 1 (default) or an odd size, padded to keep H × W.
    """

    def __init__(
        self, in_channels: int, out_channels: int | None = None, kernel_size: int = 1
    ) -> None:
        out_channels = out_channels or in_channels
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False),
            nn.BatchNorm2d(out_channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(
                f'ConvBNConnector expects [B, C, H, W] feature maps, got shape {tuple(x.shape)}'
            )
        return super().forward(x)
