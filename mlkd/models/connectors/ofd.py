"""OFD's connector: 1×1 conv + BN per stage, initialised as in the paper's code."""

from __future__ import annotations

import math
from collections.abc import Sequence

from torch import nn

from mlkd.registry import MODELS

from .stagewise import StagewiseConnector


@MODELS.register_module()
class OFDConnector(StagewiseConnector):
    """Conv (no bias, ``kernel_size``, same padding) + BN mapping student stages to teacher
    channels (Heo et al., ICCV 2019; mdistiller's ``ConnectorConvBN``).

    Conv weights ``N(0, 2 / (k²·C_out))``, BN weight 1 and bias 0.

    Args:
        in_channels: student channels (int, or one per stage).
        out_channels: teacher channels.
        kernel_size: odd kernel size (mdistiller: 1).
    """

    def __init__(
        self,
        in_channels: int | Sequence[int],
        out_channels: int | Sequence[int],
        kernel_size: int = 1,
    ) -> None:
        if kernel_size % 2 != 1:
            raise ValueError(f'OFDConnector: kernel_size must be odd, got {kernel_size}')
        self.kernel_size = int(kernel_size)
        super().__init__(in_channels, out_channels)

    def build_stage(self, in_channels: int, out_channels: int, index: int) -> nn.Module:
        conv = nn.Conv2d(
            in_channels,
            out_channels,
            self.kernel_size,
            padding=(self.kernel_size - 1) // 2,
            bias=False,
        )
        nn.init.normal_(conv.weight, 0.0, math.sqrt(2.0 / (self.kernel_size**2 * out_channels)))
        bn = nn.BatchNorm2d(out_channels)
        nn.init.ones_(bn.weight)
        nn.init.zeros_(bn.bias)
        return nn.Sequential(conv, bn)
