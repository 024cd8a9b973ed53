"""CRD's embedding head: flatten, linear projection, L2 normalisation."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from mlkd.registry import MODELS


@MODELS.register_module()
class EmbedConnector(nn.Module):
    """``v = W x + b`` followed by ``v / ‖v‖₂`` (Tian et al., ICLR 2020; mdistiller's ``Embed``).

    One instance per side: CRD trains a student-side and a teacher-side head.

    Args:
        in_channels: size of the flattened input (e.g. the pooled feature's channels).
        out_channels: embedding size (CRD: 128).
    """

    def __init__(self, in_channels: int, out_channels: int = 128) -> None:
        super().__init__()
        self.linear = nn.Linear(int(in_channels), int(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Args:
            x: ``[B, in_channels]`` (or ``[B, ...]`` flattening to it).

        Returns:
            ``[B, out_channels]`` unit-norm rows.
        """
        # The reference divides by the bare norm; the 1e-12 floor only matters for a zero row.
        return F.normalize(self.linear(x.flatten(1)), p=2, dim=1, eps=1e-12)
