"""A linear classifier applied at every position, its class maps pooled per class.

Computation (``X`` the last backbone output ``[B, F, h, w]``)::

    S  = W ⊛ X + b                       [B, C, h, w]   class maps: ``fc`` as a 1×1 convolution
    z  = pool_{h,w}(S)                   [B, C]         logits

with ``pool`` one of

- ``'avg'``: the spatial mean. Mean and linear layer commute, so this is exactly global average
  pooling followed by a linear layer (the CAM network of Zhou et al., CVPR 2016; the SCL paper's
  ResNet-50).
- ``'max'``: the spatial maximum per class (Oquab et al., CVPR 2015): each class scores its best
  position, so objects elsewhere in the image do not dilute it. On images holding several small
  objects whose labels are conjunctions of attributes (colour and digit), averaging mixes the
  objects' features and a linear layer cannot tell which attribute went with which; per-class
  maximum keeps them apart.
- ``'lse'``: log-sum-exp, ``z_c = (1/r) log mean_{h,w} exp(r S_c)`` (Pinheiro & Collobert, CVPR
  2015), between the mean (``r → 0``) and the maximum (``r → ∞``); ``r`` is ``lse_sharpness``.

The class maps are what class-activation-map losses read (:meth:`class_maps`; e.g.
:class:`~mlkd.models.losses.SpatialConsistencyLoss` through
:class:`~mlkd.models.algorithms.ClassifierWithLosses`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from mmpretrain.models.heads import MultiLabelClsHead
from torch import Tensor, nn

from mlkd.models.losses import BinaryCrossEntropySumLoss
from mlkd.registry import MODELS

__all__ = ['ClassMapHead', 'pool_class_maps']

POOLINGS = ('avg', 'max', 'lse')


def pool_class_maps(class_maps: Tensor, pooling: str, lse_sharpness: float = 1.0) -> Tensor:
    """Logits ``[B, C]`` from class maps ``[B, C, h, w]`` by ``'avg'``, ``'max'`` or ``'lse'``
    (``lse_sharpness`` ``r``: finite, > 0)."""
    flat = class_maps.flatten(2)
    if pooling == 'avg':
        return flat.mean(2)
    if pooling == 'max':
        return flat.amax(2)
    if pooling == 'lse':
        r = lse_sharpness
        if not 0 < r < math.inf:
            raise ValueError(f'lse_sharpness must be finite and > 0, got {r}')
        return (torch.logsumexp(r * flat, dim=2) - math.log(flat.shape[2])) / r
    raise ValueError(f'pooling must be one of {POOLINGS}, got {pooling!r}')


@MODELS.register_module()
class ClassMapHead(MultiLabelClsHead):
    """Multi-label head: class maps from a per-position linear layer, pooled per class.

    Use it with ``neck=None`` so that it receives the backbone's stage tuple (it reads the last
    stage). ``forward`` returns the logits ``[B, C]``, :meth:`class_maps` the maps ``[B, C, h, w]``
    they are pooled from; ``loss`` / ``predict`` are those of
    :class:`mmpretrain.models.heads.MultiLabelClsHead`. The layer is a ``nn.Linear`` named ``fc``
    (as :class:`mmpretrain.models.heads.MultiLabelLinearClsHead`'s), so ``pooling='avg'`` with the
    same weights gives that head's logits on a globally average-pooled neck.

    Args:
        num_classes: ``C``.
        in_channels: ``F``, channels of the last backbone output.
        pooling: ``'avg'``, ``'max'`` or ``'lse'`` (module docstring).
        lse_sharpness: ``r`` of ``'lse'`` (> 0); ignored otherwise.
        loss: task loss config (default: ``BinaryCrossEntropySumLoss``, summed over the batch
            and the classes as the ML-Decoder head's, skipping the ``-1`` targets of ignored
            labels; mmpretrain's sigmoid cross-entropy, the earlier default, took them as labels,
            its loss then falling without bound, and averaged over the batch: B times smaller).
        thr: score threshold of ``predict``.
        topk: top-k of ``predict``.
        init_cfg: MMEngine init config (default: ``fc`` weights N(0, 0.01), as mmpretrain's
            linear heads).
    """

    def __init__(
        self,
        num_classes: int,
        in_channels: int,
        pooling: str = 'avg',
        lse_sharpness: float = 1.0,
        loss: dict | nn.Module | None = None,
        thr: float | None = None,
        topk: int | None = None,
        init_cfg: dict | None = None,
    ) -> None:
        super().__init__(
            loss=BinaryCrossEntropySumLoss() if loss is None else loss,
            thr=thr,
            topk=topk,
            init_cfg=init_cfg or dict(type='Normal', layer='Linear', std=0.01),
        )
        if pooling not in POOLINGS:
            raise ValueError(f'ClassMapHead: pooling must be one of {POOLINGS}, got {pooling!r}')
        if not 0 < lse_sharpness < math.inf:
            raise ValueError(
                f'ClassMapHead: lse_sharpness must be finite and > 0, got {lse_sharpness}'
            )
        self.num_classes, self.in_channels = int(num_classes), int(in_channels)
        self.pooling, self.lse_sharpness = pooling, float(lse_sharpness)
        self.fc = nn.Linear(self.in_channels, self.num_classes)

    def pre_logits(self, feats: Sequence[Tensor] | Tensor) -> Tensor:
        """The last stage's feature map ``[B, F, h, w]``: spatial, not a pooled embedding (a tool
        that wants one vector per image pools it itself)."""
        last = feats[-1] if isinstance(feats, (tuple, list)) else feats
        if last.dim() != 4 or last.shape[1] != self.in_channels:
            raise ValueError(
                f'ClassMapHead expects the last backbone output [B, {self.in_channels}, h, w] '
                f'(use it with neck=None); got {tuple(last.shape)}'
            )
        return last

    def class_maps(self, feats: Sequence[Tensor] | Tensor) -> Tensor:
        """``[B, C, h, w]`` logits per position."""
        return F.conv2d(self.pre_logits(feats), self.fc.weight[:, :, None, None], self.fc.bias)

    def forward(self, feats: Sequence[Tensor] | Tensor) -> Tensor:
        return pool_class_maps(self.class_maps(feats), self.pooling, self.lse_sharpness)
