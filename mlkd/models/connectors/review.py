"""ReviewKD's attention-based fusion (ABF) connector."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from mlkd.registry import MODELS

from .stagewise import channel_lists


class ABFBlock(nn.Module):
    """One ABF level: ``1×1 conv + BN`` to the middle width, optional attention fusion with the
    deeper level's residual, ``3×3 conv + BN`` to the teacher's width.

    Args:
        in_channels: student channels of this level.
        mid_channels: width of the residual path.
        out_channels: teacher channels of this level.
        fuse: whether a deeper residual is fused in (all levels but the deepest).
    """

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int, fuse: bool) -> None:
        super().__init__()
        self.reduce = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, 1, bias=False), nn.BatchNorm2d(mid_channels)
        )
        self.project = nn.Sequential(
            nn.Conv2d(mid_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        # Two per-pixel gates, one for this level and one for the residual.
        self.attention = (
            nn.Sequential(nn.Conv2d(2 * mid_channels, 2, 1), nn.Sigmoid()) if fuse else None
        )
        nn.init.kaiming_uniform_(self.reduce[0].weight, a=1)
        nn.init.kaiming_uniform_(self.project[0].weight, a=1)

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None, out_size: int | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns ``(output [B, C_out, s, s], residual [B, C_mid, H, W])``."""
        x = self.reduce(x)
        if self.attention is not None:
            residual = F.interpolate(residual, x.shape[-2:], mode='nearest')
            gates = self.attention(torch.cat([x, residual], dim=1))
            x = x * gates[:, :1] + residual * gates[:, 1:]
        if out_size is not None and tuple(x.shape[-2:]) != (out_size, out_size):
            x = F.interpolate(x, (out_size, out_size), mode='nearest')
        return self.project(x), x


@MODELS.register_module()
class ABFConnector(nn.Module):
    """Attention-based fusion of Chen et al. (ReviewKD, CVPR 2021), as mdistiller.

    Student levels are processed from the deepest to the shallowest: each level is reduced to
    ``mid_channels``, fused with the (upsampled) result of the level below it through two sigmoid
    gates, and projected to the teacher's channels; the fused map is the residual for the next
    shallower level. The deepest level is not fused.

    Args:
        in_channels: student channels per level, shallow to deep (e.g. the stages and then the
            pooled feature as a 1×1 map).
        out_channels: teacher channels per level.
        mid_channels: residual width; default ``min(512, in_channels[-1])`` (mdistiller).
        out_shapes: teacher spatial side per level (outputs are resized to it, nearest), or the
            teacher's full shapes (``(B, C, H, W)``, as the router's probe gives them: the last
            dimension is used); None keeps each level's own size.
    """

    def __init__(
        self,
        in_channels: Sequence[int],
        out_channels: Sequence[int],
        mid_channels: int | None = None,
        out_shapes: Sequence[int | Sequence[int]] | None = None,
    ) -> None:
        super().__init__()
        ins, outs, _ = channel_lists(list(in_channels), list(out_channels), 'ABFConnector')
        if out_shapes is not None and len(out_shapes) != len(ins):
            raise ValueError(f'ABFConnector: {len(out_shapes)} out_shapes for {len(ins)} levels')
        self.mid_channels = int(mid_channels or min(512, ins[-1]))
        self.out_shapes = (
            None
            if out_shapes is None
            else [int(s[-1]) if isinstance(s, Sequence) else int(s) for s in out_shapes]
        )
        self.blocks = nn.ModuleList(
            ABFBlock(i, self.mid_channels, o, fuse=k < len(ins) - 1)
            for k, (i, o) in enumerate(zip(ins, outs))
        )

    def forward(self, x: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Args:
            x: one ``[B, C_in_k, H_k, W_k]`` map per level, shallow to deep.

        Returns:
            One ``[B, C_out_k, ...]`` map per level, shallow to deep.
        """
        if isinstance(x, torch.Tensor) or len(x) != len(self.blocks):
            got = 'a tensor' if isinstance(x, torch.Tensor) else f'{len(x)} tensors'
            raise ValueError(f'ABFConnector: built for {len(self.blocks)} levels, got {got}')
        outputs, residual = [], None
        for k in reversed(range(len(self.blocks))):
            out_size = None if self.out_shapes is None else self.out_shapes[k]
            out, residual = self.blocks[k](x[k], residual, out_size)
            outputs.append(out)
        return outputs[::-1]
