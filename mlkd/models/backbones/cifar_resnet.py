"""CIFAR ResNets of CRD / mdistiller: resnet8/14/20/32/44/56/110 and resnet8x4/32x4.

Layout (He et al. 2016, §4.2, as in ``mdistiller/models/cifar/resnet.py`` @ a08d46f)::

    stem     conv3x3(in→c0, stride 1) – BN – ReLU                       [B, c0, H, W]
    layer1   n × BasicBlock(c1), first block stride 1                    [B, c1, H, W]
    layer2   n × BasicBlock(c2), first block stride 2                    [B, c2, H/2, W/2]
    layer3   n × BasicBlock(c3), first block stride 2                    [B, c3, H/4, W/4]

with ``depth = 6n + 2`` and ``(c0, c1, c2, c3) = (16, 16, 32, 64)`` for the plain nets and
``(32, 64, 128, 256)`` for the "×4" nets (only the stages are four times wider; the stem is 32).
A block is ``conv3x3–BN–ReLU–conv3x3–BN``, plus the identity or a ``conv1x1(stride)–BN`` projection
when the shape changes, then ReLU. No max-pool and no final BN: the classifier of the reference
(average pool + ``fc``) is an mmpretrain ``GlobalAveragePooling`` neck plus a head here.

Module names follow the reference (``conv1``, ``bn1``, ``layer{1,2,3}.{j}.{conv1,bn1,conv2,bn2}``,
``layer{k}.0.downsample.{0,1}``), so a CRD/mdistiller CIFAR checkpoint loads into the backbone after
dropping its ``fc`` and prefixing ``backbone.``.

Tap points (module paths relative to the backbone; ``n`` = blocks per stage):

    stem      ``relu``                       [B, c0, H, W]       mdistiller ``feats[0]``
    stages    ``layer1``, ``layer2``, ``layer3``                   ``feats[1..3]`` (post-ReLU)
    pre-ReLU  ``layer{k}.{n-1}.preact``      (no-op module on the last block's residual sum)
                                                                 ``preact_feats[1..3]``
    OFD BNs   ``layer{k}.{n-1}.bn2``         (:meth:`CifarResNet.bn_before_relu_paths`)

The final ReLU of each block is a separate, not-in-place ``relu_out`` module, so a hook on
``preact`` sees the unclipped sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBlockBackbone

__all__ = ['CifarResNet', 'CifarBasicBlock']

# width_multiplier -> (stem, stage1, stage2, stage3) channels of the CRD/mdistiller nets.
_WIDTHS = {1: (16, 16, 32, 64), 4: (32, 64, 128, 256)}


class CifarBasicBlock(nn.Module):
    """Post-activation basic block: ``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))``.

    Args:
        in_channels: input channels.
        out_channels: output channels.
        stride: stride of ``conv1`` and of the projection shortcut.
        norm_cfg: norm layer config (``dict(type='BN')``; ``'SyncBN'`` works too).
        shortcut_name: attribute name of the projection shortcut: ``'downsample'`` (mdistiller's
            ``resnet.py``) or ``'shortcut'`` (its ``resnetv2.py``), so that either reference's
            checkpoint keys load.

    Shapes: ``[B, in, H, W] -> [B, out, H/stride, W/stride]``.
    """

    expansion = 1

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        stride: int = 1,
        norm_cfg: dict | None = None,
        shortcut_name: str = 'downsample',
    ) -> None:
        super().__init__()
        if shortcut_name not in ('downsample', 'shortcut'):
            raise ValueError(
                f"shortcut_name must be 'downsample' or 'shortcut', got {shortcut_name!r}"
            )
        norm_cfg = norm_cfg or dict(type='BN')
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = build_norm_layer(norm_cfg, out_channels)[1]
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = build_norm_layer(norm_cfg, out_channels)[1]
        self.shortcut_name = shortcut_name
        projection = None
        if stride != 1 or in_channels != out_channels:
            projection = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                build_norm_layer(norm_cfg, out_channels)[1],
            )
        setattr(self, shortcut_name, projection)
        # Tap point for the pre-activation sum; the final ReLU is not in place so that a hook on
        # ``preact`` sees the unclipped tensor even without cloning.
        self.preact = nn.Identity()
        self.relu_out = nn.ReLU(inplace=False)

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, out, H', W']``."""
        projection = getattr(self, self.shortcut_name)
        identity = x if projection is None else projection(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu_out(self.preact(out + identity))


@MODELS.register_module()
class CifarResNet(CifarBlockBackbone):
    """CIFAR ResNet of CRD / mdistiller (BasicBlock, three stages, ``depth = 6n + 2``).

    ============  =====  ==================  ===========================================
    name          depth  width_multiplier    channels (stem, stage1..3)
    ============  =====  ==================  ===========================================
    resnet8..110  6n+2   1                   16, 16, 32, 64
    resnet8x4     8      4                   32, 64, 128, 256
    resnet32x4    32     4                   32, 64, 128, 256
    ============  =====  ==================  ===========================================

    Args:
        depth: ``6n + 2`` (8, 14, 20, 32, 44, 56, 110, ...).
        width_multiplier: 1 (plain nets) or 4 (the "×4" nets); any other layout through
            ``num_filters``.
        num_filters: explicit ``(stem, stage1, stage2, stage3)`` channels; overrides
            ``width_multiplier``.
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0, 1, 2;
            ``-1`` = last), ``frozen_stages``, ``norm_cfg``, ``norm_eval``, ``init_cfg`` (default:
            the reference Kaiming/constant init).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output ``[B, c_{i+1}, H/2^i, W/2^i]``
    (for a 32×32 input: 32×32, 16×16, 8×8). ``forward`` returns the selected stages as a tuple.
    """

    stage_names = ('layer1', 'layer2', 'layer3')

    def __init__(
        self,
        depth: int,
        width_multiplier: int = 1,
        num_filters: Sequence[int] | None = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if depth < 8 or (depth - 2) % 6 != 0:
            raise ValueError(f'CifarResNet depth must be 6n + 2 with n >= 1, got {depth}')
        if num_filters is None:
            if width_multiplier not in _WIDTHS:
                raise ValueError(
                    f'width_multiplier must be one of {sorted(_WIDTHS)} (the '
                    f'CRD layouts), got {width_multiplier}; pass num_filters instead'
                )
            num_filters = _WIDTHS[width_multiplier]
        if len(num_filters) != 4:
            raise ValueError(f'num_filters needs (stem, stage1, stage2, stage3), got {num_filters}')
        norm_cfg = self.norm_cfg
        self.depth = depth
        self.num_blocks = (depth - 2) // 6
        self.stage_channels = tuple(int(c) for c in num_filters[1:])
        stem = int(num_filters[0])

        self.conv1 = nn.Conv2d(self.in_channels, stem, 3, 1, 1, bias=False)
        self.bn1 = build_norm_layer(norm_cfg, stem)[1]
        self.relu = nn.ReLU(inplace=True)
        channels = stem
        for i, (out_channels, stride) in enumerate(zip(self.stage_channels, (1, 2, 2))):
            blocks = []
            for j in range(self.num_blocks):
                blocks.append(
                    CifarBasicBlock(channels, out_channels, stride if j == 0 else 1, norm_cfg)
                )
                channels = out_channels
            self.add_module(f'layer{i + 1}', nn.Sequential(*blocks))
        self._finish_init()

    def bn_before_relu_paths(self) -> list[str]:
        """Last BN of each stage (mdistiller's ``get_bn_before_relu``, used by OFD margins)."""
        return self._last_block_paths('bn2')
