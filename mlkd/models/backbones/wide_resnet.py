"""Wide ResNets of CRD / mdistiller for CIFAR: wrn_16_1, wrn_16_2, wrn_40_1, wrn_40_2, ...

Layout (Zagoruyko & Komodakis 2016, as in ``mdistiller/models/cifar/wrn.py`` @ a08d46f), with
``depth = 6n + 4`` and ``k = widen_factor``::

    conv1    conv3x3(in→16)                                              [B, 16,  H,   W]
    block1   n × pre-activation block(16k),  first stride 1              [B, 16k, H,   W]
    block2   n × pre-activation block(32k),  first stride 2              [B, 32k, H/2, W/2]
    block3   n × pre-activation block(64k),  first stride 2              [B, 64k, H/4, W/4]
    bn1, relu  final BN–ReLU (part of stage 2 here)                      [B, 64k, H/4, W/4]

A block computes ``a = relu(bn1(x))``, ``y = conv2(dropout(relu(bn2(conv1(a)))))`` and returns
``y + x`` when the shape is kept, else ``y + convShortcut(a)`` (a 1×1 projection of the
*activated* input, as in the reference). Stage outputs 0 and 1 are therefore pre-activation
tensors; stage 2 is taken after the final BN–ReLU (mdistiller's ``feats[3]`` is the raw ``block3``
output, its classifier input the BN–ReLU one).

Module names follow the reference (``conv1``, ``block{1,2,3}.layer.{j}.{bn1,conv1,bn2,conv2,
convShortcut}``, ``bn1``) so a CRD/mdistiller checkpoint loads after dropping ``fc``.

Tap points (module paths relative to the backbone)::

    stem      conv1                                            mdistiller feats[0]
    stages    block1, block2, relu                             (the forward outputs; block1/2 are
                                                               pre-activation sums, relu is the
                                                               final BN–ReLU)
    pre-ReLU  block2.layer.0.bn1, block3.layer.0.bn1, bn1      preact_feats[1..3], OFD's BNs
    post-ReLU block2.layer.0.relu1, block3.layer.0.relu1, relu (ReLU of the pre-ReLU taps)

The pre-ReLU taps are the BNs that start the next stage (or the final BN): mdistiller computes
``preact_feats[k]`` by applying exactly those BNs to ``feats[k]``. Their ReLUs are not in place,
so the BN taps stay unclipped.
"""

from __future__ import annotations

from typing import Any

from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBackbone

__all__ = ['WideResNet', 'WideBasicBlock', 'WideStage']


class WideBasicBlock(nn.Module):
    """Pre-activation wide basic block (BN–ReLU–conv3x3–BN–ReLU–dropout–conv3x3 + shortcut).

    Args:
        in_channels: input channels.
        out_channels: output channels.
        stride: stride of ``conv1`` and of the projection shortcut.
        dropout: dropout probability between the two convolutions.
        norm_cfg: norm layer config.

    Shapes: ``[B, in, H, W] -> [B, out, H/stride, W/stride]``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        stride: int = 1,
        dropout: float = 0.0,
        norm_cfg: dict | None = None,
    ) -> None:
        super().__init__()
        norm_cfg = norm_cfg or dict(type='BN')
        self.bn1 = build_norm_layer(norm_cfg, in_channels)[1]
        # Not in place: the output of ``bn1`` is a documented tap (OFD pre-activation).
        self.relu1 = nn.ReLU(inplace=False)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn2 = build_norm_layer(norm_cfg, out_channels)[1]
        self.relu2 = nn.ReLU(inplace=True)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.equal_in_out = in_channels == out_channels and stride == 1
        # The reference's attribute name, kept for checkpoint compatibility.
        self.convShortcut: nn.Conv2d | None = None
        if not self.equal_in_out:
            self.convShortcut = nn.Conv2d(in_channels, out_channels, 1, stride, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H', W']``."""
        act = self.relu1(self.bn1(x))
        shortcut = x if self.convShortcut is None else self.convShortcut(act)
        out = self.relu2(self.bn2(self.conv1(act)))
        out = self.conv2(self.dropout(out))
        return out + shortcut


class WideStage(nn.Module):
    """``num_blocks`` wide blocks in ``self.layer`` (mdistiller's ``NetworkBlock`` key layout).

    Shapes: ``[B, in, H, W] -> [B, out, H/stride, W/stride]``.
    """

    def __init__(
        self,
        num_blocks: int,
        in_channels: int,
        out_channels: int,
        stride: int,
        dropout: float = 0.0,
        norm_cfg: dict | None = None,
    ) -> None:
        super().__init__()
        self.layer = nn.Sequential(
            *[
                WideBasicBlock(
                    in_channels if j == 0 else out_channels,
                    out_channels,
                    stride if j == 0 else 1,
                    dropout,
                    norm_cfg,
                )
                for j in range(num_blocks)
            ]
        )

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H', W']``."""
        return self.layer(x)


@MODELS.register_module()
class WideResNet(CifarBackbone):
    """CIFAR Wide ResNet of CRD / mdistiller (``WRN-depth-widen_factor``).

    Args:
        depth: ``6n + 4`` (16, 22, 28, 40, ...).
        widen_factor: ``k``; stage widths ``16k, 32k, 64k``.
        dropout: dropout probability inside each block (the CRD nets use 0).
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0, 1, 2;
            ``-1`` = last, after the final BN–ReLU), ``frozen_stages``, ``norm_cfg``, ``norm_eval``,
            ``init_cfg`` (default: the reference Kaiming/constant init).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output ``[B, 16k·2^i, H/2^i, W/2^i]``.
    ``forward`` returns the selected stages as a tuple.
    """

    stem_names = ('conv1',)
    stage_names = ('block1', 'block2', ('block3', 'bn1'))
    stem_path = 'conv1'

    def __init__(
        self,
        depth: int,
        widen_factor: int = 1,
        dropout: float = 0.0,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if depth < 10 or (depth - 4) % 6 != 0:
            raise ValueError(f'WideResNet depth must be 6n + 4 with n >= 1, got {depth}')
        if widen_factor < 1:
            raise ValueError(f'widen_factor must be >= 1, got {widen_factor}')
        norm_cfg = self.norm_cfg
        self.depth = depth
        self.widen_factor = widen_factor
        self.num_blocks = (depth - 4) // 6
        self.stage_channels = (16 * widen_factor, 32 * widen_factor, 64 * widen_factor)

        self.conv1 = nn.Conv2d(self.in_channels, 16, 3, 1, 1, bias=False)
        channels = 16
        for i, (out_channels, stride) in enumerate(zip(self.stage_channels, (1, 2, 2))):
            self.add_module(
                f'block{i + 1}',
                WideStage(self.num_blocks, channels, out_channels, stride, dropout, norm_cfg),
            )
            channels = out_channels
        self.bn1 = build_norm_layer(norm_cfg, channels)[1]
        self.relu = nn.ReLU(inplace=False)  # keeps the ``bn1`` tap intact
        self._finish_init()

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        """``[B, in_channels, H, W]`` -> tuple of the selected ``[B, 16k·2^i, H/2^i, W/2^i]``."""
        x = self.conv1(x)
        outs = []
        for i, name in enumerate(('block1', 'block2', 'block3')):
            x = getattr(self, name)(x)
            if i == 2:
                x = self.relu(self.bn1(x))
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def stage_paths(self) -> list[str]:
        """Modules whose outputs are the three forward outputs (the last is the final ReLU)."""
        return ['block1', 'block2', 'relu']

    def preact_paths(self) -> list[str]:
        """Pre-ReLU taps: the BNs following each stage (mdistiller's ``preact_feats[1..3]``)."""
        return self.bn_before_relu_paths()

    def bn_before_relu_paths(self) -> list[str]:
        """BNs that follow each stage (mdistiller's ``get_bn_before_relu``, OFD margins); their
        outputs are mdistiller's ``preact_feats[1..3]``."""
        return ['block2.layer.0.bn1', 'block3.layer.0.bn1', 'bn1']
