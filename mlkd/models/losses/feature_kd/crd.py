"""Contrastive representation distillation (CRD) with its memory bank.

Paper: Tian, Krishnan and Isola, "Contrastive Representation Distillation", ICLR 2020; NCE loss,
memory and defaults as the official ``HobbitLong/RepDistiller`` / mdistiller
(``docs/methods.md`` §5.6.7).

The student and teacher embeddings ``v^s``, ``v^t`` (``[B, D]``, already passed through the
linear + L2-norm embedding connectors, :class:`~mlkd.models.connectors.EmbedConnector`) are
contrasted against two memory banks ``M^s``, ``M^t`` (``[N, D]``, one row per training sample,
indexed by the dataset sample index). For each sample ``i`` the index list ``[i, n_1 … n_K]``
holds the positive and ``K`` negatives drawn uniformly from ``0 … N−1``. Scores

``h^t_ik = exp(<M^s[idx_ik], v^t_i> / T) / Z^t``,  ``h^s_ik = exp(<M^t[idx_ik], v^s_i> / T) / Z^s``

(the teacher is scored against the student bank and vice versa), with the normalisers ``Z`` fixed
on the first call to ``N · mean(exp(·/T))`` and kept. The NCE loss of one side, with
``P_n = 1/N``:

``L(h) = −(1/B) Σ_i [ log(h_i0 / (h_i0 + K·P_n + ε)) + Σ_{k≥1} log(K·P_n / (h_ik + K·P_n + ε)) ]``

and ``CRD = L(h^s) + L(h^t)``. After scoring, the banks move towards the batch:
``M[i] ← normalise(μ·M[i] + (1 − μ)·v_i)`` (momentum ``μ``).

Gradient reaches both embeddings: ``v^t`` comes from a trainable teacher-side connector, so the
teacher input is **not** detached (the banks are).

Distributed training: ``compares_samples = True`` — the router all-gathers ``s_pooled``,
``t_pooled`` and ``sample_idx`` so that every rank scores and updates with the global batch. The
negatives come from a ``torch.Generator`` owned by the loss, seeded at construction and advanced
by the same draw every step, so all ranks draw the same negatives and their banks stay identical
without communication. The generator state is part of the ``state_dict`` (extra state) so a
resumed run continues the same sequence. A sample index repeated within one batch (a padded last
distributed batch) is updated once, from its last occurrence.
"""

from __future__ import annotations

import math

import torch

from mlkd.registry import MODELS

from ..base import RoutedLoss, StatefulLoss
from ..utils import check_temperature


def nce_loss(scores: torch.Tensor, num_samples: int, eps: float = 1e-7) -> torch.Tensor:
    """CRD's NCE loss of one side (formula in the module docstring).

    Args:
        scores: ``[B, K + 1]`` normalised scores ``h``, column 0 the positive.
        num_samples: ``N``, the size of the memory (noise distribution ``P_n = 1/N``).
        eps: ``ε`` of the denominators.

    Returns:
        Scalar: ``−(1/B) Σ`` of the positive's and the negatives' log-posteriors.
    """
    noise = (scores.shape[1] - 1) / num_samples  # K·P_n
    log_pos = torch.log(scores[:, 0] / (scores[:, 0] + noise + eps))
    log_neg = torch.log(noise / (scores[:, 1:] + noise + eps))
    return -(log_pos.sum() + log_neg.sum()) / scores.shape[0]


def contrast_scores(
    memory: torch.Tensor, emb: torch.Tensor, idx: torch.Tensor, temperature: float
) -> torch.Tensor:
    """Unnormalised ``exp(<memory[idx_ik], emb_i> / T)``: ``[N, D]``, ``[B, D]``, ``[B, K+1]``."""
    rows = memory[idx]  # [B, K + 1, D]
    return torch.exp(torch.einsum('bkd,bd->bk', rows, emb) / temperature)


def momentum_update(
    memory: torch.Tensor, emb: torch.Tensor, idx: torch.Tensor, momentum: float
) -> None:
    """In place: ``memory[idx_i] ← normalise(μ·memory[idx_i] + (1 − μ)·emb_i)``.

    A repeated index is written once (its last occurrence), on every device the same way.
    """
    rows = memory[idx] * momentum + emb.detach() * (1 - momentum)
    rows = rows / rows.norm(dim=1, keepdim=True)
    order = torch.arange(idx.numel(), device=idx.device)
    last = torch.zeros(memory.shape[0], dtype=torch.long, device=idx.device)
    last.scatter_reduce_(0, idx, order, reduce='amax', include_self=False)
    keep = last[idx] == order
    memory[idx[keep]] = rows[keep].to(memory.dtype)


@MODELS.register_module()
class CRDLoss(RoutedLoss, StatefulLoss):
    """CRD with its two memory banks (formulas in the module docstring).

    Defaults as mdistiller / RepDistiller: ``K = 16384`` negatives, ``T = 0.07``, momentum 0.5,
    embedding size 128 (set by the connectors), feature weight 0.8 (``loss_weight``). Negatives
    are uniform over the dataset (the official ``relax`` mode and the memory's own sampler);
    mdistiller's CIFAR default ``exact`` mode draws them from other classes in the data loader,
    which needs one class per sample and does not apply to multi-label data.

    Args:
        num_samples: ``N``, the training set size (rows of each bank).
        embed_dim: ``D``, the embedding size of the connectors' output.
        num_negatives: ``K``.
        temperature: ``T``.
        momentum: ``μ`` of the bank update.
        eps: ``ε`` of the NCE denominators.
        seed: seed of the loss's own generator (bank initialisation and negatives).
        loss_weight: factor applied to the loss.
    """

    compares_samples = True
    repr_fields = ('num_samples', 'embed_dim', 'num_negatives', 'temperature', 'momentum')

    def __init__(
        self,
        num_samples: int,
        embed_dim: int = 128,
        num_negatives: int = 16384,
        temperature: float = 0.07,
        momentum: float = 0.5,
        eps: float = 1e-7,
        seed: int = 0,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        if num_samples <= 0 or embed_dim <= 0 or num_negatives <= 0:
            raise ValueError(
                f'CRDLoss: num_samples, embed_dim and num_negatives must be > 0, got '
                f'{num_samples}, {embed_dim}, {num_negatives}'
            )
        if not 0 <= momentum < 1:
            raise ValueError(f'CRDLoss: momentum must be in [0, 1), got {momentum}')
        self.num_samples = int(num_samples)
        self.embed_dim = int(embed_dim)
        self.num_negatives = int(num_negatives)
        self.temperature = check_temperature(temperature)
        self.momentum = float(momentum)
        self.eps = float(eps)
        self.seed = int(seed)
        self.generator = torch.Generator().manual_seed(self.seed)
        bound = 1.0 / math.sqrt(embed_dim / 3)  # the reference's uniform initialisation
        for name in ('memory_s', 'memory_t'):
            init = torch.rand(num_samples, embed_dim, generator=self.generator) * 2 * bound - bound
            self.register_state(name, init, 'sample')
        # Normalisers Z^s, Z^t; negative until fixed by the first call.
        self.register_buffer('normalisers', torch.full((2,), -1.0))

    def draw_indices(self, sample_idx: torch.Tensor) -> torch.Tensor:
        """``[B, K + 1]`` indices: column 0 the sample itself, then ``K`` uniform negatives.

        Drawn on the CPU from the loss's generator (identical on every rank), then moved to the
        device of ``sample_idx``.
        """
        negatives = torch.randint(
            self.num_samples, (sample_idx.numel(), self.num_negatives), generator=self.generator
        )
        return torch.cat([sample_idx.view(-1, 1).cpu(), negatives], dim=1).to(sample_idx.device)

    def compute(
        self, s_pooled: torch.Tensor, t_pooled: torch.Tensor, sample_idx: torch.Tensor
    ) -> torch.Tensor:
        """Args:
        s_pooled: ``[B, D]`` student embedding (L2-normalised by its connector).
        t_pooled: ``[B, D]`` teacher embedding (from a trainable connector; not detached).
        sample_idx: ``[B]`` long dataset indices in ``[0, N)``.
        """
        v_s, v_t = s_pooled, t_pooled
        if v_s.shape != v_t.shape or v_s.dim() != 2 or v_s.shape[1] != self.embed_dim:
            raise ValueError(
                f'CRDLoss: embeddings must both be [B, {self.embed_dim}], got '
                f'{tuple(v_s.shape)} and {tuple(v_t.shape)}'
            )
        sample_idx = sample_idx.long().view(-1)
        if sample_idx.numel() != v_s.shape[0]:
            raise ValueError(
                f'CRDLoss: sample_idx has {sample_idx.numel()} entries for a batch '
                f'of {v_s.shape[0]}'
            )
        self.check_sample_idx(sample_idx, self.num_samples)
        idx = self.draw_indices(sample_idx)
        raw_t = contrast_scores(self.memory_s, v_t, idx, self.temperature)  # teacher vs M^s
        raw_s = contrast_scores(self.memory_t, v_s, idx, self.temperature)  # student vs M^t
        with torch.no_grad():
            if self.normalisers[0] < 0:
                self.normalisers[0] = raw_s.mean() * self.num_samples
                self.normalisers[1] = raw_t.mean() * self.num_samples
        loss = nce_loss(raw_s / self.normalisers[0], self.num_samples, self.eps) + nce_loss(
            raw_t / self.normalisers[1], self.num_samples, self.eps
        )
        with torch.no_grad():
            momentum_update(self.memory_s, v_s, sample_idx, self.momentum)
            momentum_update(self.memory_t, v_t, sample_idx, self.momentum)
        return loss

    def get_extra_state(self) -> torch.Tensor:
        """The generator state, so a resumed run draws the negatives it would have drawn."""
        return self.generator.get_state()

    def set_extra_state(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)
