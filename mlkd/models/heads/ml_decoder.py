"""ML-Decoder-style head with one query per class (the label-wise embedding head of L2D).

Papers: T. Ridnik et al., "ML-Decoder: Scalable and Versatile Classification Head", WACV 2023;
P. Yang et al., "Multi-Label Knowledge Distillation" (L2D), ICCV 2023 — ``methods.md`` §4.1.2.

Computation (``X`` the last backbone output, ``[B, F, h, w]`` or tokens ``[B, L, F]``)::

    M  = flatten(X)                      [B, N, F]   (N = h·w or L; a pooled [B, F] is one token)
    M' = ReLU(Linear_{F→d}(M))           [B, N, d]                         -> ``input_proj``
    Q                                    [C, d]      learnable, or frozen N(0, 1) ('frozen_random')
    t  = LN1(Q + Dropout(Q))                                               -> ``decoder``
    t  = LN2(t + Dropout(MHA(t, M', M')))          (no self-attention, post-norm)
    t  = LN3(t + Dropout(W2·Dropout(ReLU(W1·t))))
    E  = t                               [B, C, d]   label-wise embeddings (output of ``decoder``)
    z_bc = Σ_d E_bcd W_cd + b_c          [B, C]      group FC (Xavier W, b = 0) -> ``group_fc``

A forward hook on ``head.decoder`` therefore records ``E`` (the distiller's ``label_emb`` tap).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from mmpretrain.models.heads import MultiLabelClsHead
from torch import Tensor, nn

from mlkd.models.losses import BinaryCrossEntropySumLoss
from mlkd.registry import MODELS

__all__ = ['MLDecoderHead', 'LabelQueryDecoder', 'GroupFC']

_QUERY_MODES = ('learnable', 'frozen_random')


class LabelQueryDecoder(nn.Module):
    """One post-norm transformer decoder layer without self-attention, fed by per-class queries.

    Args:
        num_classes: ``C``, one query per class.
        hidden_dim: ``d``.
        num_heads: attention heads (``d`` must be divisible by it).
        ffn_dim: hidden width of the feed-forward block.
        dropout: dropout of the residual branches, the FFN and the attention weights.
        query_mode: ``'learnable'`` (trained ``[C, d]`` parameter) or ``'frozen_random'`` (the
            reference: N(0, 1) table with ``requires_grad=False``, still in the state dict).
        layer_norm_eps: LayerNorm epsilon.
    """

    def __init__(
        self,
        num_classes: int,
        hidden_dim: int = 768,
        num_heads: int = 8,
        ffn_dim: int = 2048,
        dropout: float = 0.1,
        query_mode: str = 'learnable',
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        if query_mode not in _QUERY_MODES:
            raise ValueError(f'query_mode must be one of {_QUERY_MODES}, got {query_mode!r}')
        self.query_mode = query_mode
        self.query = nn.Parameter(
            torch.randn(num_classes, hidden_dim), requires_grad=query_mode == 'learnable'
        )
        self.dropout1 = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(hidden_dim, eps=layer_norm_eps)
        self.cross_attn = nn.MultiheadAttention(
            hidden_dim, num_heads, dropout=dropout, batch_first=True
        )
        self.dropout2 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(hidden_dim, eps=layer_norm_eps)
        self.linear1 = nn.Linear(hidden_dim, ffn_dim)
        self.ffn_dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(ffn_dim, hidden_dim)
        self.dropout3 = nn.Dropout(dropout)
        self.norm3 = nn.LayerNorm(hidden_dim, eps=layer_norm_eps)

    def forward(self, memory: Tensor) -> Tensor:
        """Label-wise embeddings.

        Args:
            memory: ``[B, N, d]`` projected tokens ``M'``.

        Returns:
            ``E`` ``[B, C, d]``.
        """
        q = self.query.unsqueeze(0).expand(memory.size(0), -1, -1)
        t = self.norm1(q + self.dropout1(q))
        attn = self.cross_attn(t, memory, memory, need_weights=False)[0]
        t = self.norm2(t + self.dropout2(attn))
        ffn = self.linear2(self.ffn_dropout(torch.relu(self.linear1(t))))
        return self.norm3(t + self.dropout3(ffn))


class GroupFC(nn.Module):
    """Per-class linear read-out ``z_bc = Σ_d E_bcd W_cd + b_c``.

    ``W`` ``[C, d]`` is Xavier-normal (std ``sqrt(2 / (d + C))``, as the reference's ``[C, d, 1]``
    table), ``b`` ``[C]`` zero.

    Args:
        num_classes: ``C``.
        hidden_dim: ``d``.
    """

    def __init__(self, num_classes: int, hidden_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_classes, hidden_dim))
        self.bias = nn.Parameter(torch.zeros(num_classes))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_normal_(self.weight)
        nn.init.zeros_(self.bias)

    def forward(self, emb: Tensor) -> Tensor:
        """``emb`` ``[B, C, d]`` → logits ``[B, C]``."""
        return torch.einsum('bcd,cd->bc', emb, self.weight) + self.bias


@MODELS.register_module()
class MLDecoderHead(MultiLabelClsHead):
    """ML-Decoder head producing one embedding per class (L2D's label-wise embedding head).

    Replaces the backbone's pooling and classifier: use it with ``neck=None`` so that it receives
    the backbone's stage tuple. ``pre_logits`` returns the label-wise embeddings ``E``
    ``[B, C, d]``, ``forward`` the logits ``[B, C]``; ``loss`` / ``predict`` are those of
    :class:`mmpretrain.models.heads.MultiLabelClsHead`. Submodules: ``input_proj``
    (``Linear_{F→d}`` + ReLU), ``decoder`` (:class:`LabelQueryDecoder`, output ``E``), ``group_fc``
    (:class:`GroupFC`).

    Args:
        num_classes: ``C``.
        in_channels: ``F``, channels of the last backbone output.
        hidden_dim: ``d`` (768 in the reference; e.g. 64 for demos).
        num_heads: attention heads.
        ffn_dim: feed-forward width.
        dropout: dropout probability.
        query_mode: ``'learnable'`` (default) or ``'frozen_random'`` (the reference).
        layer_norm_eps: LayerNorm epsilon.
        loss: task loss config or module. ``None`` (default):
            :class:`~mlkd.models.losses.BinaryCrossEntropySumLoss`, L2D's BCE summed over the
            entries, which skips ignored (``-1``) targets; every shipped ML-Decoder config names
            it. (mmpretrain's ``CrossEntropyLoss(use_sigmoid=True)``, the former default, reads a
            ``-1`` target as a label and is unbounded below there.)
        thr: score threshold of ``predict``.
        topk: top-k of ``predict``.
        init_cfg: MMEngine init config (None keeps the initialisation above).
    """

    def __init__(
        self,
        num_classes: int,
        in_channels: int,
        hidden_dim: int = 768,
        num_heads: int = 8,
        ffn_dim: int = 2048,
        dropout: float = 0.1,
        query_mode: str = 'learnable',
        layer_norm_eps: float = 1e-5,
        loss: dict | nn.Module | None = None,
        thr: float | None = None,
        topk: int | None = None,
        init_cfg: dict | None = None,
    ) -> None:
        # Built here rather than by registry name, so that the default needs no default scope.
        loss = BinaryCrossEntropySumLoss() if loss is None else loss
        super().__init__(loss=loss, thr=thr, topk=topk, init_cfg=init_cfg)
        if num_classes <= 0:
            raise ValueError(f'num_classes must be positive, got {num_classes}')
        self.num_classes = num_classes
        self.in_channels = in_channels
        self.hidden_dim = hidden_dim
        self.input_proj = nn.Sequential(nn.Linear(in_channels, hidden_dim), nn.ReLU())
        self.decoder = LabelQueryDecoder(
            num_classes, hidden_dim, num_heads, ffn_dim, dropout, query_mode, layer_norm_eps
        )
        self.group_fc = GroupFC(num_classes, hidden_dim)

    @staticmethod
    def _tokens(x: Tensor) -> Tensor:
        """``[B, F, h, w]`` → ``[B, h·w, F]``; ``[B, L, F]`` kept; ``[B, F]`` → ``[B, 1, F]``."""
        if x.dim() == 4:
            return x.flatten(2).transpose(1, 2)
        if x.dim() == 3:
            return x
        if x.dim() == 2:
            return x.unsqueeze(1)
        raise ValueError(
            f'expected a [B, F, h, w], [B, L, F] or [B, F] tensor, got {tuple(x.shape)}'
        )

    def pre_logits(self, feats: Tensor | Sequence[Tensor]) -> Tensor:
        """Label-wise embeddings ``E`` ``[B, C, d]`` from the last backbone output."""
        x = feats[-1] if isinstance(feats, (tuple, list)) else feats
        return self.decoder(self.input_proj(self._tokens(x)))

    def forward(self, feats: Tensor | Sequence[Tensor]) -> Tensor:
        """Logits ``[B, C]`` from the backbone output tuple."""
        return self.group_fc(self.pre_logits(feats))
