"""A connector applied stage by stage: one module per input, built from channel counts."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def channel_lists(
    in_channels: int | Sequence[int], out_channels: int | Sequence[int], owner: str
) -> tuple[list[int], list[int], bool]:
    """``(ins, outs, is_list)``: both arguments as equal-length lists of ints.

    Raises:
        ValueError: naming ``owner`` if one is a list and the other not, or the lengths differ.
    """
    in_list, out_list = isinstance(in_channels, Sequence), isinstance(out_channels, Sequence)
    if in_list != out_list:
        raise ValueError(
            f'{owner}: in_channels and out_channels must both be ints or both lists, '
            f'got {in_channels!r} and {out_channels!r}'
        )
    ins = [int(c) for c in in_channels] if in_list else [int(in_channels)]
    outs = [int(c) for c in out_channels] if out_list else [int(out_channels)]
    if len(ins) != len(outs) or not ins:
        raise ValueError(f'{owner}: {len(ins)} in_channels for {len(outs)} out_channels')
    return ins, outs, in_list


class StagewiseConnector(nn.Module):
    """Maps each stage independently: an int pair builds one module and ``forward`` takes a tensor;
    lists build one module per stage and ``forward`` takes a list of the same length.

    Subclasses implement :meth:`build_stage`.

    Args:
        in_channels: student channels (int, or one per stage).
        out_channels: teacher channels (int, or one per stage).
    """

    def __init__(self, in_channels: int | Sequence[int], out_channels: int | Sequence[int]) -> None:
        super().__init__()
        ins, outs, self.takes_list = channel_lists(in_channels, out_channels, type(self).__name__)
        self.in_channels, self.out_channels = ins, outs
        self.stages = nn.ModuleList(
            self.build_stage(i, o, k) for k, (i, o) in enumerate(zip(ins, outs))
        )

    def build_stage(self, in_channels: int, out_channels: int, index: int) -> nn.Module:
        raise NotImplementedError

    def forward(
        self, x: torch.Tensor | Sequence[torch.Tensor]
    ) -> torch.Tensor | list[torch.Tensor]:
        """Args:
        x: ``[B, C_in, H, W]`` (int channels) or a list with one such tensor per stage.
        """
        if not self.takes_list:
            return self.stages[0](x)
        if isinstance(x, torch.Tensor) or len(x) != len(self.stages):
            got = 'a tensor' if isinstance(x, torch.Tensor) else f'{len(x)} tensors'
            raise ValueError(
                f'{type(self).__name__}: built for {len(self.stages)} stages, got {got}'
            )
        return [stage(feat) for stage, feat in zip(self.stages, x)]
