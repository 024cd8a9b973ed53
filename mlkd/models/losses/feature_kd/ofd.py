"""Overhaul of feature distillation (OFD).

Paper: Heo, Kim, Yun, Park, Kwak and Choi, "A Comprehensive Overhaul of Feature Distillation",
ICCV 2019; reduction and defaults as mdistiller (``docs/methods.md`` §5.6.6).

Features are taken **before** the ReLU. Teacher responses below a per-channel margin ``m_c`` are
replaced by ``m_c`` (the margin is the expected value of the negative responses, from the
teacher BN's running statistics, :func:`ofd_margin`), and the partial L2 distance skips positions
where the student is already below a non-positive target:

``d(s, t) = (s − t)²`` if ``t > 0`` or ``s > t``, else 0, with ``t ← max(t, m)``; written out
(as the reference): ``(s − m)²·[s > m, t ≤ m] + (s − t)²·[s > t, m < t ≤ 0] + (s − t)²·[t > 0]``.

Per stage: ``Σ_{c,h,w} mean_b d``, the teacher average-pooled to the student's size; stage ``i``
of ``n`` weighted ``1 / 2^(n−1−i)`` (the deepest stage 1). The student side is the output of the
connector (:class:`~mlkd.models.connectors.OFDConnector`, 1×1 conv + BN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_stage_counts, stage_list


def ofd_margin(bn_weight: torch.Tensor, bn_bias: torch.Tensor) -> torch.Tensor:
    """Per-channel margin ``m = E[x | x < 0]`` for ``x ~ N(β, γ²)`` (BN affine ``γ``, ``β``).

    ``m = β − |γ| φ(β/|γ|) / Φ(−β/|γ|)`` when ``Φ(−β/|γ|) > 0.001``, else ``−3|γ|`` (as the
    reference, where the negative tail is too thin to estimate). Computed in float64; a zero
    ``γ`` behaves as its limit (``β`` for ``β < 0``, 0 otherwise).

    Args:
        bn_weight: ``[C]`` weight ``γ`` of the BN before the teacher's ReLU.
        bn_bias: ``[C]`` bias ``β``.

    Returns:
        ``[C]`` float32 margins (≤ 0), detached.
    """
    std = bn_weight.detach().double().abs().clamp(min=torch.finfo(torch.float64).tiny)
    mean = bn_bias.detach().double()
    z = mean / std
    tail = torch.special.ndtr(-z)  # Φ(−β/σ), the probability of a negative response
    density = torch.exp(-z.pow(2) / 2) / math.sqrt(2 * math.pi)
    conditional = mean - std * density / tail.clamp(min=torch.finfo(torch.float64).tiny)
    return torch.where(tail > 1e-3, conditional, -3 * std).float()


def ofd_partial_l2(
    s_feat: torch.Tensor, t_feat: torch.Tensor, margin: torch.Tensor
) -> torch.Tensor:
    """One stage of OFD: ``Σ_{c,h,w} mean_b d(s, t)`` (see the module docstring).

    Args:
        s_feat: ``[B, C, H, W]`` connector output.
        t_feat: ``[B, C, H', W']`` teacher pre-ReLU feature (detached, pooled to ``H × W``).
        margin: ``[C]`` margins of the teacher channels.
    """
    t_feat = F.adaptive_avg_pool2d(t_feat.detach(), s_feat.shape[-2:])
    if s_feat.shape[1] != t_feat.shape[1] or margin.numel() != t_feat.shape[1]:
        raise ValueError(
            f'ofd_partial_l2: connector output {tuple(s_feat.shape)}, teacher '
            f'{tuple(t_feat.shape)} and {margin.numel()} margins disagree on channels'
        )
    m = margin.to(s_feat).view(1, -1, 1, 1)
    target = torch.maximum(t_feat, m)
    active = (s_feat > target) | (t_feat > 0)
    return ((s_feat - target).pow(2) * active).mean(dim=0).sum()


def teacher_bn_margins(
    teacher: nn.Module | None, margin_bns: Sequence[str] | str
) -> list[torch.Tensor]:
    """:func:`ofd_margin` of each BN at ``margin_bns`` (paths in ``teacher``, or ``'auto'``: its
    backbone's ``bn_before_relu_paths()``)."""
    if teacher is None:
        raise ValueError(
            'OFDLoss: margin_bns needs the teacher network; build the loss in a '
            'distiller (which injects it) or give margins'
        )
    if margin_bns == 'auto':
        backbone = getattr(teacher, 'backbone', None)
        if not hasattr(backbone, 'bn_before_relu_paths'):
            raise ValueError(
                f'OFDLoss: margin_bns="auto" needs a teacher backbone with '
                f'bn_before_relu_paths(); {type(backbone).__name__} has none: list '
                'the BN module paths in margin_bns'
            )
        margin_bns = [f'backbone.{path}' for path in backbone.bn_before_relu_paths()]
    elif isinstance(margin_bns, str):
        margin_bns = [margin_bns]
    from mlkd.models.algorithms.taps import resolve_module  # algorithms import the losses

    margins = []
    for path in margin_bns:
        bn = resolve_module(teacher, path, 'teacher')
        if not isinstance(bn, nn.modules.batchnorm._NormBase) or bn.weight is None:
            raise ValueError(
                f'OFDLoss: teacher module {path!r} is a {type(bn).__name__}, not an '
                'affine BatchNorm'
            )
        margins.append(ofd_margin(bn.weight, bn.bias))
    return margins


@MODELS.register_module()
class OFDLoss(RoutedLoss):
    """OFD over stages (:func:`ofd_partial_l2`, stage ``i`` of ``n`` weighted ``2^−(n−1−i)``).

    mdistiller: the pre-ReLU features of every stage but the stem, feature weight 1e-3
    (``loss_weight``), margins from the BN before each teacher stage's last ReLU.

    The margins are fixed facts of the teacher: give them at construction (``margins``, one
    ``[C]`` tensor or list of floats per stage, e.g. ``[ofd_margin(bn.weight, bn.bias) ...]``;
    stored as buffers, so they move with the module and are checkpointed), or per call through
    ``forward``'s ``margins``, which then takes precedence.

    In a distiller, ``margin_bns`` (module paths in the teacher, shallow to deep) computes them
    from the loaded teacher's BNs at build time; ``margin_bns='auto'`` takes the paths from the
    teacher backbone's ``bn_before_relu_paths()`` (mlkd's CIFAR backbones: the BNs of
    mdistiller's ``get_bn_before_relu``).

    Args:
        margins: per-stage margins, or None to require them in ``forward``.
        margin_bns: teacher module paths of the BNs that give the margins, or ``'auto'``.
        teacher: the teacher network, injected by the distiller (read once, not kept).
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('num_stages',)

    def __init__(
        self,
        margins: Sequence[torch.Tensor | Sequence[float]] | None = None,
        margin_bns: Sequence[str] | str | None = None,
        teacher: nn.Module | None = None,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        if margin_bns is not None:
            if margins is not None:
                raise ValueError('OFDLoss: give margins or margin_bns, not both')
            margins = teacher_bn_margins(teacher, margin_bns)
        self.num_stages = 0 if margins is None else len(margins)
        for i, margin in enumerate(margins or ()):
            self.register_buffer(
                f'margin_{i}', torch.as_tensor(margin, dtype=torch.float32).flatten().clone()
            )

    def compute(
        self,
        s_feats: torch.Tensor | Sequence[torch.Tensor],
        t_feats: torch.Tensor | Sequence[torch.Tensor],
        margins: Sequence[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """Args:
        s_feats: connector output(s) ``[B, C_t, H, W]``, shallow to deep.
        t_feats: teacher pre-ReLU feature(s), one per stage.
        margins: per-stage ``[C_t]`` margins; default: the ones given at construction.
        """
        s_list, t_list = stage_list(s_feats), stage_list(t_feats)
        check_stage_counts(s_list, t_list, 'OFDLoss')
        if margins is None:
            margins = [getattr(self, f'margin_{i}') for i in range(self.num_stages)]
        margins = stage_list(margins)
        if len(margins) != len(s_list):
            raise ValueError(
                f'OFDLoss: {len(margins)} margin tensors for {len(s_list)} stages '
                f'(give margins at construction or in forward)'
            )
        n = len(s_list)
        loss = s_list[0].new_zeros(())
        for i, (s, t, m) in enumerate(zip(s_list, t_list, margins)):
            loss = loss + ofd_partial_l2(s, t, m) / 2 ** (n - 1 - i)
        return loss
