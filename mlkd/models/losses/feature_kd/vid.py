"""Variational information distillation (VID).

Paper: Ahn, Hu, Damianou, Lawrence and Dai, "Variational Information Distillation for Knowledge
Transfer", CVPR 2019; reduction and defaults as mdistiller (``docs/methods.md`` §5.6.5).

The student feature is mapped to a mean ``μ`` by a regressor (a connector,
:class:`~mlkd.models.connectors.VIDRegressorConnector`); the teacher feature is modelled as a
Gaussian ``N(μ, σ²)`` with one learned variance per teacher channel,
``σ²_c = softplus(α_c) + ε``. The loss is the negative log-likelihood without its constant,
``½ mean_{b,c,h,w} ((μ − t)² / σ²_c + log σ²_c)``, summed over stages. The variances ``α`` are the
loss's own parameters (a ``ParameterList``, one per stage, so they train and are checkpointed —
mdistiller keeps them in a plain list, where they are neither).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_stage_counts, match_spatial, stage_list


def vid_nll(
    s_mean: torch.Tensor, t_feat: torch.Tensor, log_scale: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """One stage of VID: ``½ mean((μ − t)² / σ² + log σ²)``, ``σ²_c = softplus(α_c) + ε``.

    Args:
        s_mean: ``[B, C, H, W]`` regressor output ``μ``.
        t_feat: ``[B, C, H', W']`` teacher feature (detached here); the larger map of the two is
            average-pooled to the other's size.
        log_scale: ``[C]`` variance parameters ``α``.
        eps: ``ε``, the variance floor.
    """
    s_mean, t_feat = match_spatial(s_mean, t_feat.detach())
    if s_mean.shape[1] != log_scale.numel() or t_feat.shape[1] != log_scale.numel():
        raise ValueError(
            f'vid_nll: {log_scale.numel()} variances for regressor output '
            f'{tuple(s_mean.shape)} and teacher feature {tuple(t_feat.shape)}'
        )
    var = (F.softplus(log_scale) + eps).view(1, -1, 1, 1)
    return 0.5 * ((s_mean - t_feat).pow(2) / var + var.log()).mean()


@MODELS.register_module()
class VIDLoss(RoutedLoss):
    """VID (:func:`vid_nll` summed over stages), with the per-channel variances.

    mdistiller: every stage but the stem, feature weight 1 (``loss_weight``), ``ε = 1e-5``,
    initial variance 5.0, i.e. ``α = log(exp(5 − ε) − 1)``.

    Args:
        num_channels: teacher channels of each distilled stage (an int for one stage); fixes the
            number of variance parameters. None: the channels of the tensor(s) ``t_feats`` is
            wired to, from ``input_channels``.
        input_channels: ``{argument: channels}`` of the bound inputs, injected by the loss router
            from its shape probe (not set by hand).
        init_var: initial ``σ²``.
        eps: variance floor ``ε``.
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('init_var', 'eps')

    def __init__(
        self,
        num_channels: int | Sequence[int] | None = None,
        init_var: float = 5.0,
        eps: float = 1e-5,
        loss_weight: float = 1.0,
        input_channels: dict | None = None,
    ) -> None:
        super().__init__(loss_weight)
        if num_channels is None:
            num_channels = (input_channels or {}).get('t_feats')
            if num_channels is None:
                raise ValueError(
                    'VIDLoss: give num_channels (teacher channels per stage), or '
                    'build it through a distiller, which probes them from t_feats'
                )
        channels = [num_channels] if isinstance(num_channels, int) else list(num_channels)
        if not channels or any(int(c) <= 0 for c in channels):
            raise ValueError(f'VIDLoss: num_channels must be positive ints, got {num_channels}')
        if init_var <= eps:
            raise ValueError(f'VIDLoss: init_var must exceed eps={eps}, got {init_var}')
        self.init_var = float(init_var)
        self.eps = float(eps)
        alpha = math.log(math.expm1(init_var - eps))  # softplus⁻¹(init_var − ε)
        self.log_scales = nn.ParameterList(
            nn.Parameter(torch.full((int(c),), alpha)) for c in channels
        )

    def compute(
        self,
        s_feats: torch.Tensor | Sequence[torch.Tensor],
        t_feats: torch.Tensor | Sequence[torch.Tensor],
    ) -> torch.Tensor:
        """Args:
        s_feats: regressor output(s) ``[B, C_t, H, W]``, one per stage.
        t_feats: teacher feature(s), one per stage.
        """
        s_list, t_list = stage_list(s_feats), stage_list(t_feats)
        check_stage_counts(s_list, t_list, 'VIDLoss')
        if len(s_list) != len(self.log_scales):
            raise ValueError(f'VIDLoss: built for {len(self.log_scales)} stages, got {len(s_list)}')
        loss = s_list[0].new_zeros(())
        for s, t, alpha in zip(s_list, t_list, self.log_scales):
            loss = loss + vid_nll(s, t, alpha.float(), self.eps)
        return loss
