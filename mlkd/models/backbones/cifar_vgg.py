"""CIFAR VGGs of CRD / mdistiller: vgg8, vgg11, vgg13, vgg16, vgg19 (with BN by default).

Layout (``mdistiller/models/cifar/vgg.py`` @ a08d46f): five blocks of ``conv3x3(bias)–BN–ReLU``
layers with the widths below; the final ReLU of each block is applied outside the block so that the
block output is the pre-activation. Max-pools (2×2, stride 2) sit between blocks 0→1, 1→2, 2→3 and,
only for large inputs, 3→4 (``pool3``; the reference applies it iff the input height is 64, i.e. on
Tiny-ImageNet). No classifier MLP: the reference's classifier is one ``Linear(512, C)`` after a
global average pool, i.e. an mmpretrain ``GlobalAveragePooling`` neck plus a linear head here::

    depth  widths per block
    8      [64], [128], [256], [512], [512]
    11     [64], [128], [256, 256], [512, 512], [512, 512]
    13     [64, 64], [128, 128], [256, 256], [512, 512], [512, 512]
    16     [64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]
    19     [64, 64], [128, 128], [256] * 4, [512] * 4, [512] * 4

Stage ``i`` output is ``relu{i}(block{i}(.))``: for a 32×32 input 64@32², 128@16², 256@8², 512@4²,
512@4²; for 224×224 (``pool3`` on) 64@224², 128@112², 256@56², 512@28², 512@14². Module names
(``block{i}.{j}``) follow the reference, so its checkpoints load after dropping ``classifier``; the
parameter-free ``relu{i}`` modules add no state-dict keys.

Tap points (module paths relative to the backbone)::

    stages    relu0 .. relu4     (post-ReLU)     mdistiller feats[0..4] (relu0 is also the stem)
    pre-ReLU  block0 .. block4                   preact_feats[1..4] (its preact_feats[0] = feats[0])
    OFD BNs   block{i}.{last}    (:meth:`CifarVGG.bn_before_relu_paths`)
"""

from __future__ import annotations

from typing import Any

from mmcv.cnn import build_norm_layer
from torch import Tensor, nn

from mlkd.registry import MODELS

from ._cifar_base import CifarBackbone

__all__ = ['CifarVGG']

_ARCHS: dict[int, tuple[tuple[int, ...], ...]] = {
    8: ((64,), (128,), (256,), (512,), (512,)),
    11: ((64,), (128,), (256, 256), (512, 512), (512, 512)),
    13: ((64, 64), (128, 128), (256, 256), (512, 512), (512, 512)),
    16: ((64, 64), (128, 128), (256, 256, 256), (512, 512, 512), (512, 512, 512)),
    19: ((64, 64), (128, 128), (256,) * 4, (512,) * 4, (512,) * 4),
}


@MODELS.register_module()
class CifarVGG(CifarBackbone):
    """CIFAR VGG of CRD / mdistiller.

    Args:
        depth: 8, 11, 13, 16 or 19.
        batch_norm: insert a norm layer after every convolution (the CRD nets ``vgg*_bn``; CRD's
            "vgg8"/"vgg13" teachers and students are the BN versions).
        use_pool3: max-pool (``pool3``) between blocks 3 and 4. ``None``: only when the input
            height is at least 64 (mdistiller pools iff it equals 64, the Tiny-ImageNet size, and
            never ran larger inputs; pooling keeps a 224 input at 14×14 in the last block instead
            of 28×28).
        **common: the keywords of :class:`CifarBackbone`: ``in_channels``, ``out_indices`` (0..4;
            ``-1`` = last), ``frozen_stages``, ``norm_cfg`` (used when ``batch_norm``),
            ``norm_eval``, ``init_cfg`` (default: the reference Kaiming/constant init).

    Shapes: input ``[B, in_channels, H, W]``; stage ``i`` output ``[B, c_i, H/2^i, W/2^i]`` for
    ``i ≤ 3`` and ``[B, 512, H/8, W/8]`` (no ``pool3``) or ``[B, 512, H/16, W/16]`` for ``i = 4``.
    ``forward`` returns the selected stages as a tuple.
    """

    stem_names = ()
    stage_names = ('block0', 'block1', 'block2', 'block3', 'block4')
    stem_path = 'relu0'

    def __init__(
        self,
        depth: int,
        batch_norm: bool = True,
        use_pool3: bool | None = None,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        if depth not in _ARCHS:
            raise ValueError(f'CifarVGG depth must be one of {sorted(_ARCHS)}, got {depth}')
        norm_cfg = self.norm_cfg
        self.depth = depth
        self.batch_norm = batch_norm
        self.use_pool3 = use_pool3
        self.stage_channels = tuple(widths[-1] for widths in _ARCHS[depth])
        channels = self.in_channels
        for i, widths in enumerate(_ARCHS[depth]):
            layers: list[nn.Module] = []
            for width in widths:
                layers.append(nn.Conv2d(channels, width, 3, padding=1))
                if batch_norm:
                    layers.append(build_norm_layer(norm_cfg, width)[1])
                layers.append(nn.ReLU(inplace=True))
                channels = width
            # The block's last ReLU is a separate module: the block output is the pre-activation
            # tap and ``relu{i}`` (not in place, so that tap stays unclipped) the stage output.
            self.add_module(f'block{i}', nn.Sequential(*layers[:-1]))
            self.add_module(f'relu{i}', nn.ReLU(inplace=False))
        for i in range(4):
            self.add_module(f'pool{i}', nn.MaxPool2d(kernel_size=2, stride=2))
        self._finish_init()

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        """``[B, in_channels, H, W]`` -> tuple of the selected stage outputs (see class doc)."""
        use_pool3 = x.shape[2] >= 64 if self.use_pool3 is None else self.use_pool3
        outs = []
        for i, name in enumerate(self.stage_names):
            if i > 0 and (i < 4 or use_pool3):
                x = getattr(self, f'pool{i - 1}')(x)
            x = getattr(self, f'relu{i}')(getattr(self, name)(x))
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def stage_paths(self) -> list[str]:
        """The ``relu{i}`` modules, whose outputs are the five stage outputs."""
        return [f'relu{i}' for i in range(len(self.stage_names))]

    def preact_paths(self) -> list[str]:
        """Module paths of each stage's pre-activation output (the blocks)."""
        return list(self.stage_names)

    def bn_before_relu_paths(self) -> list[str]:
        """Last norm layer of each block (mdistiller's ``get_bn_before_relu`` is blocks 1..4)."""
        if not self.batch_norm:
            raise ValueError('CifarVGG(batch_norm=False) has no BN before its ReLUs')
        return [f'{name}.{len(getattr(self, name)) - 1}' for name in self.stage_names]
