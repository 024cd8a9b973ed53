"""CIFAR MobileNetV2 of CRD / mdistiller ("MobileNetV2" = ``mobile_half``: T = 6, width 0.5).

Layout (``mdistiller/models/cifar/mobilenetv2.py`` @ a08d46f)::

    conv1      conv3x3(in→32w, stride 2)–BN–ReLU                         [B, 32w, H/2, W/2]
    blocks.0   1 × InvertedResidual(16w,  t=1), stride 1                 [B, 16w, H/2, W/2]
    blocks.1   2 × InvertedResidual(24w,  t=T), stride 1                 [B, 24w, H/2, W/2]
    blocks.2   3 × InvertedResidual(32w,  t=T), stride 2                 [B, 32w, H/4, W/4]
    blocks.3   4 × InvertedResidual(64w,  t=T), stride 2                 [B, 64w, H/8, W/8]
    blocks.4   3 × InvertedResidual(96w,  t=T), stride 1                 [B, 96w, H/8, W/8]
    blocks.5   3 × InvertedResidual(160w, t=T), stride 2                 [B, 160w, H/16, W/16]
    blocks.6   1 × InvertedResidual(320w, t=T), stride 1                 [B, 320w, H/16, W/16]
    conv2      conv1x1(→1280)–BN–ReLU                                    [B, 1280, H/16, W/16]

(channel counts ``int(c·w)`` without rounding to multiples of 8; 1280 stays 1280 for ``w ≤ 1``).
Differences from ImageNet MobileNetV2 kept from the reference: ReLU instead of ReLU6, and the
``t = 1`` block still has its point-wise expansion convolution. Outputs 0..6 are ``blocks.0..6``,
output 7 is ``conv2``. Module names follow the reference so its checkpoints load after dropping
``classifier``.

Tap points (module paths relative to the backbone)::

    stem      conv1                            mdistiller feats[0]
    stages    blocks.0 .. blocks.6, conv2      feats[1..4] = blocks.1, blocks.2, blocks.4, blocks.6
    pre-ReLU  blocks.0 .. blocks.6, conv2.1    the block groups end in a linear (BN, no ReLU)
                                               bottleneck, so their outputs already are pre-ReLU;
                                               conv2.1 is the BN before conv2's ReLU
    OFD BNs   blocks.{1,2,4,6}.{last}.conv.7   (:meth:`CifarMobileNetV2.bn_before_relu_paths`)

mdistiller's MobileNetV2 has no ``preact_feats``; these taps serve OFD/ReviewKD students.
"""

from __future__ import annotations

from typing import Any

from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBackbone

__all__ = ['CifarMobileNetV2', 'CifarInvertedResidual']

# (expansion ratio or None for T, channels, blocks, first stride)
_SETTING = (
    (1, 16, 1, 1),
    (None, 24, 2, 1),
    (None, 32, 3, 2),
    (None, 64, 4, 2),
    (None, 96, 3, 1),
    (None, 160, 3, 2),
    (None, 320, 1, 1),
)


def _conv_bn_relu(
    in_channels: int, out_channels: int, kernel_size: int, stride: int, norm_cfg: dict
) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, stride, kernel_size // 2, bias=False),
        build_norm_layer(norm_cfg, out_channels)[1],
        nn.ReLU(inplace=True),
    )


class CifarInvertedResidual(nn.Module):
    """Point-wise expand – depth-wise 3×3 – point-wise linear, with identity when shapes allow.

    Args:
        in_channels: input channels.
        out_channels: output channels.
        stride: depth-wise stride (1 or 2).
        expand_ratio: hidden width is ``in_channels · expand_ratio``.
        norm_cfg: norm layer config.

    Shapes: ``[B, in, H, W] -> [B, out, H/stride, W/stride]``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        stride: int,
        expand_ratio: int,
        norm_cfg: dict | None = None,
    ) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f'stride must be 1 or 2, got {stride}')
        norm_cfg = norm_cfg or dict(type='BN')
        hidden = in_channels * expand_ratio
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, hidden, 1, 1, 0, bias=False),
            build_norm_layer(norm_cfg, hidden)[1],
            nn.ReLU(inplace=True),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            build_norm_layer(norm_cfg, hidden)[1],
            nn.ReLU(inplace=True),
            nn.Conv2d(hidden, out_channels, 1, 1, 0, bias=False),
            build_norm_layer(norm_cfg, out_channels)[1],
        )

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H', W']``."""
        out = self.conv(x)
        return x + out if self.use_res_connect else out


@MODELS.register_module()
class CifarMobileNetV2(CifarBackbone):
    """CIFAR MobileNetV2 of CRD / mdistiller (default: their ``MobileNetV2`` student).

    Args:
        expand_ratio: ``T``, the expansion of every block but the first (6).
        width_mult: ``w`` (0.5 for the CRD student).
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0..6 the
            seven block groups, 7 ``conv2``; ``-1`` = 7), ``frozen_stages`` (the stem is ``conv1``),
            ``norm_cfg``, ``norm_eval``, ``init_cfg`` (default: the reference Kaiming/constant
            init).

    Shapes: input ``[B, in_channels, H, W]``, outputs as in the module doc (for 32×32 and the
    defaults: 12@16², 16@8², 48@4², 160@2², 1280@2² for outputs 1, 2, 4, 6, 7).
    """

    stem_names = ('conv1',)
    stage_names = tuple(f'blocks.{i}' for i in range(7)) + ('conv2',)
    stem_path = 'conv1'

    def __init__(
        self,
        expand_ratio: int = 6,
        width_mult: float = 0.5,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        norm_cfg = self.norm_cfg
        self.expand_ratio = expand_ratio
        self.width_mult = width_mult
        channels = int(32 * width_mult)
        self.conv1 = _conv_bn_relu(self.in_channels, channels, 3, 2, norm_cfg)
        self.blocks = nn.ModuleList()
        stage_channels = []
        for ratio, base, num, stride in _SETTING:
            out_channels = int(base * width_mult)
            layers = []
            for j in range(num):
                layers.append(
                    CifarInvertedResidual(
                        channels,
                        out_channels,
                        stride if j == 0 else 1,
                        expand_ratio if ratio is None else ratio,
                        norm_cfg,
                    )
                )
                channels = out_channels
            self.blocks.append(nn.Sequential(*layers))
            stage_channels.append(out_channels)
        self.last_channel = int(1280 * width_mult) if width_mult > 1.0 else 1280
        self.conv2 = _conv_bn_relu(channels, self.last_channel, 1, 1, norm_cfg)
        self.stage_channels = tuple(stage_channels) + (self.last_channel,)
        self._finish_init()

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        """``[B, in_channels, H, W]`` -> tuple of the selected outputs (see class doc)."""
        x = self.conv1(x)
        outs = []
        for i, module in enumerate(list(self.blocks) + [self.conv2]):
            x = module(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def preact_paths(self) -> list[str]:
        """Outputs before their final ReLU: the (linear) block groups, then conv2's BN."""
        return [f'blocks.{i}' for i in range(len(self.blocks))] + ['conv2.1']

    def bn_before_relu_paths(self) -> list[str]:
        """mdistiller's ``get_bn_before_relu``: the last BN of block groups 1, 2, 4 and 6."""
        return self._last_block_paths('conv.7', [f'blocks.{i}' for i in (1, 2, 4, 6)])
