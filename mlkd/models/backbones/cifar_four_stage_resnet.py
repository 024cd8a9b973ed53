"""CIFAR ResNet-18/34/50/101/152 of CRD / mdistiller (``resnetv2.py``: ImageNet widths, 3×3 stem).

Layout (``ResNet18``/``ResNet34``/``ResNet50`` of ``mdistiller/models/cifar/resnetv2.py`` @ a08d46f
and ``RepDistiller/models/resnetv2.py`` @ b84f547; ``e`` = block expansion, 1 for the basic block
of depths 18/34, 4 for the bottleneck of depths 50/101/152)::

    stem     conv3x3(in→64, stride 1) – BN – ReLU     (no max-pool)          [B, 64,   H,   W]
    layer1   n1 × block(64),  first stride 1                                [B, 64e,  H,   W]
    layer2   n2 × block(128), first stride 2                                [B, 128e, H/2, W/2]
    layer3   n3 × block(256), first stride 2                                [B, 256e, H/4, W/4]
    layer4   n4 × block(512), first stride 2                                [B, 512e, H/8, W/8]

with ``(n1, n2, n3, n4)`` = (2, 2, 2, 2) for depth 18, (3, 4, 6, 3) for 34 and 50, (3, 4, 23, 3)
for 101 and (3, 8, 36, 3) for 152. On CIFAR (32×32) the last map is 4×4, on Tiny ImageNet (64×64)
8×8. The basic block is :class:`~mlkd.models.backbones.cifar_resnet.CifarBasicBlock`; the bottleneck
is ``conv1x1–BN–ReLU–conv3x3(stride)–BN–ReLU–conv1x1(→4·planes)–BN`` plus the identity or a
``conv1x1(stride)–BN`` projection, then ReLU (the stride sits on the 3×3 convolution). Convolutions
have no bias. The reference classifier (adaptive average pool + ``linear``) is an mmpretrain
``GlobalAveragePooling`` neck plus a head here.

mmpretrain's ``ResNet_CIFAR`` has the same layout and parameter count, but no module on the tensor
before each block's final ReLU (OFD and ReviewKD read it) and other state-dict keys; this class
keeps the reference keys (``conv1``, ``bn1``, ``layer{k}.{j}.{conv1,bn1,conv2,bn2[,conv3,bn3]}``,
``layer{k}.0.shortcut.{0,1}``), so a CRD/mdistiller ``ResNet50`` checkpoint loads into the backbone
after dropping its ``linear`` and prefixing ``backbone.``.

Tap points (module paths relative to the backbone; ``n`` = blocks of the stage)::

    stem      ``relu``                             [B, 64, H, W]       mdistiller ``feats[0]``
    stages    ``layer1`` .. ``layer4``              (post-ReLU)         ``feats[1..4]``
    pre-ReLU  ``layer{k}.{n-1}.preact``            (no-op module on the last block's sum)
                                                                        ``preact_feats[1..4]``
    OFD BNs   ``layer{k}.{n-1}.bn2`` (basic) / ``bn3`` (bottleneck)     ``get_bn_before_relu``
"""

from __future__ import annotations

from typing import Any

from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBlockBackbone
from .cifar_resnet import CifarBasicBlock

__all__ = ['CifarFourStageResNet', 'CifarBottleneck']


class CifarBottleneck(nn.Module):
    """Post-activation bottleneck with the stride on the 3×3 convolution (torchvision style).

    ``relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut(x))`` with ``conv1`` 1×1
    (in → planes), ``conv2`` 3×3 (planes → planes, ``stride``), ``conv3`` 1×1 (planes → 4·planes).

    Args:
        in_channels: input channels.
        planes: width of the 3×3 convolution; the block outputs ``4 * planes`` channels.
        stride: stride of ``conv2`` and of the projection shortcut.
        norm_cfg: norm layer config.

    Shapes: ``[B, in, H, W] -> [B, 4·planes, H/stride, W/stride]``.
    """

    expansion = 4

    def __init__(
        self, in_channels: int, planes: int, stride: int = 1, norm_cfg: dict | None = None
    ) -> None:
        super().__init__()
        norm_cfg = norm_cfg or dict(type='BN')
        out_channels = planes * self.expansion
        self.conv1 = nn.Conv2d(in_channels, planes, 1, bias=False)
        self.bn1 = build_norm_layer(norm_cfg, planes)[1]
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = build_norm_layer(norm_cfg, planes)[1]
        self.conv3 = nn.Conv2d(planes, out_channels, 1, bias=False)
        self.bn3 = build_norm_layer(norm_cfg, out_channels)[1]
        self.relu = nn.ReLU(inplace=True)
        self.shortcut: nn.Sequential | None = None
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                build_norm_layer(norm_cfg, out_channels)[1],
            )
        # Tap point for the pre-activation sum; the final ReLU is not in place so that a hook on
        # ``preact`` sees the unclipped tensor.
        self.preact = nn.Identity()
        self.relu_out = nn.ReLU(inplace=False)

    def forward(self, x: Tensor) -> Tensor:
        """``[B, in, H, W] -> [B, 4·planes, H', W']``."""
        identity = x if self.shortcut is None else self.shortcut(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu_out(self.preact(out + identity))


# depth -> (bottleneck?, blocks per stage), as the reference's ResNet18 .. ResNet152.
_ARCHS: dict[int, tuple[bool, tuple[int, int, int, int]]] = {
    18: (False, (2, 2, 2, 2)),
    34: (False, (3, 4, 6, 3)),
    50: (True, (3, 4, 6, 3)),
    101: (True, (3, 4, 23, 3)),
    152: (True, (3, 8, 36, 3)),
}
_PLANES = (64, 128, 256, 512)
_STEM_CHANNELS = 64


@MODELS.register_module()
class CifarFourStageResNet(CifarBlockBackbone):
    """CIFAR ResNet with ImageNet widths and four stages (CRD / mdistiller ``ResNet18..152``).

    ======  ==========  =================  ==============================
    depth   block       blocks per stage   stage channels
    ======  ==========  =================  ==============================
    18      basic       2, 2, 2, 2         64, 128, 256, 512
    34      basic       3, 4, 6, 3         64, 128, 256, 512
    50      bottleneck  3, 4, 6, 3         256, 512, 1024, 2048
    101     bottleneck  3, 4, 23, 3        256, 512, 1024, 2048
    152     bottleneck  3, 8, 36, 3        256, 512, 1024, 2048
    ======  ==========  =================  ==============================

    Args:
        depth: 18, 34, 50, 101 or 152.
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0..3;
            ``-1`` = last), ``frozen_stages``, ``norm_cfg``, ``norm_eval``, ``init_cfg`` (default:
            the reference Kaiming/constant init; the reference's optional ``zero_init_residual`` is
            off by default there and not offered).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output
    ``[B, stage_channels[i], H/2^i, W/2^i]`` (32×32 input: 32², 16², 8², 4²; 64×64: 64², 32²,
    16², 8²). ``forward`` returns the selected stages as a tuple.
    """

    stage_names = ('layer1', 'layer2', 'layer3', 'layer4')

    def __init__(
        self,
        depth: int,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if depth not in _ARCHS:
            raise ValueError(
                f'CifarFourStageResNet depth must be one of {sorted(_ARCHS)}, got {depth}'
            )
        norm_cfg = self.norm_cfg
        self.depth = depth
        self.bottleneck, self.num_blocks = _ARCHS[depth]
        expansion = CifarBottleneck.expansion if self.bottleneck else CifarBasicBlock.expansion
        self.stage_channels = tuple(planes * expansion for planes in _PLANES)

        self.conv1 = nn.Conv2d(self.in_channels, _STEM_CHANNELS, 3, 1, 1, bias=False)
        self.bn1 = build_norm_layer(norm_cfg, _STEM_CHANNELS)[1]
        self.relu = nn.ReLU(inplace=True)
        channels = _STEM_CHANNELS
        for i, (planes, num, stride) in enumerate(zip(_PLANES, self.num_blocks, (1, 2, 2, 2))):
            blocks: list[nn.Module] = []
            for j in range(num):
                block_stride = stride if j == 0 else 1
                if self.bottleneck:
                    blocks.append(CifarBottleneck(channels, planes, block_stride, norm_cfg))
                else:
                    blocks.append(
                        CifarBasicBlock(
                            channels, planes, block_stride, norm_cfg, shortcut_name='shortcut'
                        )
                    )
                channels = planes * expansion
            self.add_module(f'layer{i + 1}', nn.Sequential(*blocks))
        self._finish_init()

    def bn_before_relu_paths(self) -> list[str]:
        """Last BN of each stage (mdistiller's ``get_bn_before_relu``, used by OFD margins)."""
        return self._last_block_paths('bn3' if self.bottleneck else 'bn2')
