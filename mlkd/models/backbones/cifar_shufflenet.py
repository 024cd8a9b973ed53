"""CIFAR ShuffleNetV1 / ShuffleNetV2 of CRD / mdistiller ("ShuffleV1", "ShuffleV2").

Both start with a 1×1 ``conv1``(in→24)–``bn1``–ReLU stem at full resolution (no max-pool) and have
three stages, each halving the resolution once (``ShuffleNetv1.py`` / ``ShuffleNetv2.py`` of
``mdistiller/models/cifar`` @ a08d46f, themselves from kuangliu/pytorch-cifar).

ShuffleNetV1 (``groups = 3``, widths 240/480/960, 4/8/4 bottlenecks)::

    layer1  [B, 240, H/2, W/2]   layer2  [B, 480, H/4, W/4]   layer3  [B, 960, H/8, W/8]

A bottleneck is ``g-conv1x1–BN–ReLU–shuffle–dwconv3x3(stride)–BN–ReLU–g-conv1x1–BN``; with stride 1
it adds the identity, with stride 2 it concatenates a 3×3 average-pooled input (so that branch
outputs ``width − in`` channels); then ReLU. The first 1×1 of the first block is not grouped.

ShuffleNetV2 (``net_size`` 1: widths 116/232/464, 3/7/3 basic blocks, final 1×1 conv to 1024)::

    layer1  [B, 116, H/2, W/2]   layer2  [B, 232, H/4, W/4]   layer3  [B, 464, H/8, W/8]
    conv2–bn2–ReLU  [B, 1024, H/8, W/8]  (output index 3, as in mmpretrain's ShuffleNetV2)

Each stage is one down-sampling block (two branches, stride 2, concatenated and shuffled) followed
by basic blocks (channel split in halves, ``conv1x1–BN–ReLU–dwconv3x3–BN–conv1x1–BN–ReLU`` on one
half, concatenation, shuffle with 2 groups). Module names follow the reference, so its checkpoints
load after dropping ``linear``; the parameter-free ``relu2`` of ShuffleNetV2 adds no state-dict key.

Tap points (module paths relative to the backbone; ``u`` = index of a stage's last unit)::

    stem      relu                                   mdistiller feats[0]
    stages    layer1, layer2, layer3 (post-ReLU)     feats[1..3]
              relu2 (V2 only: final conv2–bn2–ReLU, output index 3)
    pre-ReLU  layer{k}.{u}.preact                    preact_feats[1..3]; a no-op module on the
                                                     last unit's tensor before its final ReLU
              bn2 (V2 only)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBackbone, CifarBlockBackbone

__all__ = ['CifarShuffleNetV1', 'CifarShuffleNetV2', 'ChannelShuffle']

_STEM_CHANNELS = 24


class ChannelShuffle(nn.Module):
    """``[B, C, H, W] -> [B, C, H, W]``: view channels as ``(g, C/g)``, transpose, flatten."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        """``[B, C, H, W] -> [B, C, H, W]`` (channels permuted)."""
        b, c, h, w = x.shape
        return x.reshape(b, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(b, c, h, w)


def _norm(norm_cfg: dict, channels: int) -> nn.Module:
    return build_norm_layer(norm_cfg, channels)[1]


class ShuffleV1Bottleneck(nn.Module):
    """ShuffleNetV1 unit.

    Args:
        in_channels: input channels.
        branch_channels: output channels of the residual branch (the unit outputs
            ``branch_channels`` with stride 1, ``branch_channels + in_channels`` with stride 2).
        stride: 1 (identity add) or 2 (concatenate the average-pooled input).
        groups: groups of the 1×1 convolutions (the first one is dense on the 24-channel stem).
        norm_cfg: norm layer config.

    Shapes: ``[B, in, H, W] -> [B, out, H/stride, W/stride]``.
    """

    def __init__(
        self, in_channels: int, branch_channels: int, stride: int, groups: int, norm_cfg: dict
    ) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f'stride must be 1 or 2, got {stride}')
        self.stride = stride
        mid = branch_channels // 4
        g = 1 if in_channels == _STEM_CHANNELS else groups
        self.conv1 = nn.Conv2d(in_channels, mid, 1, groups=g, bias=False)
        self.bn1 = _norm(norm_cfg, mid)
        self.shuffle1 = ChannelShuffle(g)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False)
        self.bn2 = _norm(norm_cfg, mid)
        self.conv3 = nn.Conv2d(mid, branch_channels, 1, groups=groups, bias=False)
        self.bn3 = _norm(norm_cfg, branch_channels)
        self.shortcut = nn.Sequential()
        if stride == 2:
            self.shortcut = nn.Sequential(nn.AvgPool2d(3, stride=2, padding=1))
        self.relu = nn.ReLU(inplace=True)
        self.preact = nn.Identity()
        self.relu_out = nn.ReLU(inplace=False)  # keeps the ``preact`` tap intact

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H', W']``."""
        out = self.shuffle1(self.relu(self.bn1(self.conv1(x))))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        res = self.shortcut(x)
        pre = torch.cat([out, res], 1) if self.stride == 2 else out + res
        return self.relu_out(self.preact(pre))


@MODELS.register_module()
class CifarShuffleNetV1(CifarBlockBackbone):
    """CIFAR ShuffleNetV1 of CRD / mdistiller (default: their ``ShuffleV1`` student).

    Args:
        groups: groups of the 1×1 convolutions.
        stage_channels: output widths of the three stages.
        num_blocks: units per stage.
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0, 1, 2;
            ``-1`` = last), ``frozen_stages``, ``norm_cfg``, ``norm_eval``, ``init_cfg`` (default:
            Kaiming/constant; the reference keeps PyTorch's default init for this net).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output
    ``[B, stage_channels[i], H/2^(i+1), W/2^(i+1)]``.
    """

    stage_names = ('layer1', 'layer2', 'layer3')

    def __init__(
        self,
        groups: int = 3,
        stage_channels: Sequence[int] = (240, 480, 960),
        num_blocks: Sequence[int] = (4, 8, 4),
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if len(stage_channels) != 3 or len(num_blocks) != 3:
            raise ValueError('stage_channels and num_blocks need three entries')
        norm_cfg = self.norm_cfg
        self.stage_channels = tuple(stage_channels)
        self.conv1 = nn.Conv2d(self.in_channels, _STEM_CHANNELS, 1, bias=False)
        self.bn1 = _norm(norm_cfg, _STEM_CHANNELS)
        self.relu = nn.ReLU(inplace=True)
        channels = _STEM_CHANNELS
        for i, (width, num) in enumerate(zip(stage_channels, num_blocks)):
            units = []
            for j in range(num):
                stride = 2 if j == 0 else 1
                units.append(
                    ShuffleV1Bottleneck(
                        channels, width - (channels if j == 0 else 0), stride, groups, norm_cfg
                    )
                )
                channels = width
            self.add_module(f'layer{i + 1}', nn.Sequential(*units))
        self._finish_init()


class ShuffleV2BasicBlock(nn.Module):
    """ShuffleNetV2 basic unit: split channels in halves, transform the second half, concatenate,
    shuffle with two groups.

    Args:
        channels: input = output channels.
        norm_cfg: norm layer config.

    Shapes: ``[B, C, H, W] -> [B, C, H, W]``.
    """

    def __init__(self, channels: int, norm_cfg: dict) -> None:
        super().__init__()
        half = channels // 2
        self.conv1 = nn.Conv2d(half, half, 1, bias=False)
        self.bn1 = _norm(norm_cfg, half)
        self.conv2 = nn.Conv2d(half, half, 3, 1, 1, groups=half, bias=False)
        self.bn2 = _norm(norm_cfg, half)
        self.conv3 = nn.Conv2d(half, half, 1, bias=False)
        self.bn3 = _norm(norm_cfg, half)
        self.relu = nn.ReLU(inplace=True)
        self.preact = nn.Identity()
        self.relu_out = nn.ReLU(inplace=False)
        self.shuffle = ChannelShuffle(2)

    def forward(self, x: Tensor) -> Tensor:
        """``[B, C, H, W] -> [B, C, H, W]``."""
        half = x.shape[1] // 2
        x1, x2 = x[:, :half], x[:, half:]
        out = self.relu(self.bn1(self.conv1(x2)))
        out = self.bn2(self.conv2(out))
        pre = self.preact(torch.cat([x1, self.bn3(self.conv3(out))], 1))
        # The reference applies the ReLU to the transformed half only. Every unit input is a
        # (shuffled) concatenation of ReLU outputs, so x1 >= 0 and ReLU over ``pre`` is identical.
        return self.shuffle(self.relu_out(pre))


class ShuffleV2DownBlock(nn.Module):
    """ShuffleNetV2 down-sampling unit (two stride-2 branches, each ``out/2`` channels).

    Shapes: ``[B, in, H, W] -> [B, out, H/2, W/2]``.
    """

    def __init__(self, in_channels: int, out_channels: int, norm_cfg: dict) -> None:
        super().__init__()
        mid = out_channels // 2
        # left: dw3x3(s2)–BN–1x1–BN–ReLU
        self.conv1 = nn.Conv2d(in_channels, in_channels, 3, 2, 1, groups=in_channels, bias=False)
        self.bn1 = _norm(norm_cfg, in_channels)
        self.conv2 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn2 = _norm(norm_cfg, mid)
        # right: 1x1–BN–ReLU–dw3x3(s2)–BN–1x1–BN–ReLU
        self.conv3 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn3 = _norm(norm_cfg, mid)
        self.conv4 = nn.Conv2d(mid, mid, 3, 2, 1, groups=mid, bias=False)
        self.bn4 = _norm(norm_cfg, mid)
        self.conv5 = nn.Conv2d(mid, mid, 1, bias=False)
        self.bn5 = _norm(norm_cfg, mid)
        self.relu = nn.ReLU(inplace=True)
        self.shuffle = ChannelShuffle(2)

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H/2, W/2]``."""
        left = self.relu(self.bn2(self.conv2(self.bn1(self.conv1(x)))))
        right = self.relu(self.bn3(self.conv3(x)))
        right = self.relu(self.bn5(self.conv5(self.bn4(self.conv4(right)))))
        return self.shuffle(torch.cat([left, right], 1))


# net_size -> (stage widths, final conv width), blocks per stage (mdistiller's ``configs``).
_V2_ARCHS: dict[float, tuple[tuple[int, int, int, int], tuple[int, int, int]]] = {
    0.2: ((40, 80, 160, 512), (3, 3, 3)),
    0.3: ((40, 80, 160, 512), (3, 7, 3)),
    0.5: ((48, 96, 192, 1024), (3, 7, 3)),
    1: ((116, 232, 464, 1024), (3, 7, 3)),
    1.5: ((176, 352, 704, 1024), (3, 7, 3)),
    2: ((224, 488, 976, 2048), (3, 7, 3)),
}


@MODELS.register_module()
class CifarShuffleNetV2(CifarBackbone):
    """CIFAR ShuffleNetV2 of CRD / mdistiller (default: their ``ShuffleV2`` student, net size 1).

    Args:
        net_size: 0.2, 0.3, 0.5, 1, 1.5 or 2 (mdistiller's table; 1 is the CRD student).
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0, 1, 2
            the stages, 3 the final 1×1 conv–BN–ReLU; ``-1`` = 3), ``frozen_stages``, ``norm_cfg``,
            ``norm_eval``, ``init_cfg`` (default: Kaiming/constant; the reference keeps PyTorch's
            default init for this net).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output ``[B, c_i, H/2^(i+1), W/2^(i+1)]``;
    output 3 ``[B, c_3, H/8, W/8]`` (net size 1: 116, 232, 464, 1024 channels).
    """

    stem_names = ('conv1', 'bn1')
    stage_names = ('layer1', 'layer2', 'layer3', ('conv2', 'bn2'))
    stem_path = 'relu'

    def __init__(
        self,
        net_size: float = 1,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if net_size not in _V2_ARCHS:
            raise ValueError(f'net_size must be one of {sorted(_V2_ARCHS)}, got {net_size}')
        norm_cfg = self.norm_cfg
        widths, num_blocks = _V2_ARCHS[net_size]
        self.net_size = net_size
        self.stage_channels = widths
        self.conv1 = nn.Conv2d(self.in_channels, _STEM_CHANNELS, 1, bias=False)
        self.bn1 = _norm(norm_cfg, _STEM_CHANNELS)
        self.relu = nn.ReLU(inplace=True)
        channels = _STEM_CHANNELS
        for i, (width, num) in enumerate(zip(widths[:3], num_blocks)):
            units: list[nn.Module] = [ShuffleV2DownBlock(channels, width, norm_cfg)]
            units += [ShuffleV2BasicBlock(width, norm_cfg) for _ in range(num)]
            self.add_module(f'layer{i + 1}', nn.Sequential(*units))
            channels = width
        self.conv2 = nn.Conv2d(channels, widths[3], 1, bias=False)
        self.bn2 = _norm(norm_cfg, widths[3])
        # Its own module (not the stem's ``relu``) so that output index 3 is one tap; not in
        # place so that the ``bn2`` tap stays unclipped.
        self.relu2 = nn.ReLU(inplace=False)
        self._finish_init()

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        """``[B, in_channels, H, W]`` -> tuple of the selected outputs."""
        x = self.relu(self.bn1(self.conv1(x)))
        outs = []
        for i, name in enumerate(('layer1', 'layer2', 'layer3')):
            x = getattr(self, name)(x)
            if i in self.out_indices:
                outs.append(x)
        if 3 in self.out_indices:
            outs.append(self.relu2(self.bn2(self.conv2(x))))
        return tuple(outs)

    def stage_paths(self) -> list[str]:
        """The three stages, then ``relu2`` (the final 1×1 conv–BN–ReLU, output index 3)."""
        return ['layer1', 'layer2', 'layer3', 'relu2']

    def preact_paths(self) -> list[str]:
        """Each output before its final ReLU: the last unit's ``preact`` per stage, then ``bn2``.

        A stage's output is ``shuffle(relu(preact))``: its channels are permuted with respect to
        the ``preact`` tap (mdistiller's ``preact_feats`` have the same, unshuffled order).
        """
        return self._last_block_paths('preact', ('layer1', 'layer2', 'layer3')) + ['bn2']
