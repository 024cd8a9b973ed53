"""Attention transfer (AT): Zagoruyko and Komodakis, "Paying More Attention to Attention:
Improving the Performance of Convolutional Neural Networks via Attention Transfer", ICLR 2017;
as mdistiller (``docs/methods.md`` §5.6.3).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_stage_counts, match_spatial, stage_list


def attention_map(feat: torch.Tensor, p: float = 2.0) -> torch.Tensor:
    """``Q = normalize(mean_c |A_c|^p)`` flattened: ``[B, C, H, W]`` -> ``[B, H·W]``, unit L2 rows.

    The reference raises to ``p`` without the absolute value; for even ``p`` (default 2) that is
    the same.
    """
    return F.normalize(feat.pow(p).mean(dim=1).flatten(1), p=2, dim=1)


def attention_transfer(
    s_feats: torch.Tensor | Sequence[torch.Tensor],
    t_feats: torch.Tensor | Sequence[torch.Tensor],
    p: float = 2.0,
) -> torch.Tensor:
    """AT: ``Σ_stages mean_{b, hw} (Q^s_{b,hw} − Q^t_{b,hw})²``.

    Per stage the larger map is average-pooled to the smaller one's size first; the mean runs over
    batch and positions (mdistiller; the paper's ``‖Q^s − Q^t‖_2`` per sample differs by the
    square and the reduction, absorbed by its weight 1000).

    Args:
        s_feats: ``[B, C, H, W]`` student feature, or a list of stages.
        t_feats: teacher feature(s), same count (detached here); channels may differ.
        p: power of the activations.
    """
    s_list, t_list = stage_list(s_feats), stage_list(t_feats)
    check_stage_counts(s_list, t_list, 'attention_transfer')
    loss = s_list[0].new_zeros(())
    for s, t in zip(s_list, t_list):
        s, t = match_spatial(s, t.detach())
        loss = loss + (attention_map(s, p) - attention_map(t, p)).pow(2).mean()
    return loss


@MODELS.register_module()
class ATLoss(RoutedLoss):
    """Attention transfer (:func:`attention_transfer`).

    mdistiller: ``p = 2``, feature weight 1000 (``loss_weight``), applied to every stage but the
    stem (a list of stage features).

    Args:
        p: power of the activations.
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('p',)

    def __init__(self, p: float = 2.0, loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight)
        self.p = float(p)

    def compute(
        self,
        s_feats: torch.Tensor | Sequence[torch.Tensor],
        t_feats: torch.Tensor | Sequence[torch.Tensor],
    ) -> torch.Tensor:
        """Args:
        s_feats: ``[B, C, H, W]`` student feature or list of stages.
        t_feats: teacher feature(s), one per student stage.
        """
        return attention_transfer(s_feats, t_feats, self.p)
