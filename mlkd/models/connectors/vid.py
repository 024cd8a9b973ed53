"""VID's mean regressor: three 1×1 convolutions with ReLUs between them."""

from __future__ import annotations

from torch import nn

from mlkd.registry import MODELS

from .stagewise import StagewiseConnector


@MODELS.register_module()
class VIDRegressorConnector(StagewiseConnector):
    """``conv1×1(C_s→C_t) – ReLU – conv1×1(C_t→C_t) – ReLU – conv1×1(C_t→C_t)``, no biases
    (Ahn et al., CVPR 2019, as mdistiller). Its output is the Gaussian mean ``μ`` of
    :class:`~mlkd.models.losses.VIDLoss`, which holds the variances.

    Args:
        in_channels: student channels (int, or one per stage).
        out_channels: teacher channels.
    """

    def build_stage(self, in_channels: int, out_channels: int, index: int) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 1, bias=False),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 1, bias=False),
        )
