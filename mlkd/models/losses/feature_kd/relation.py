"""Relation-based distillation on embedding vectors: RKD (distance + angle) and PKT.

Both compare the *structure* of a batch (pairwise distances, angles, similarities), so their value
depends on the other samples: ``compares_samples = True`` tells the router to all-gather their
inputs across DDP ranks (with gradient) so every rank sees the global batch. The functions do no
communication themselves.

* RKD — Park, Kim, Lu and Cho, "Relational Knowledge Distillation", CVPR 2019; defaults and
  reductions as mdistiller (``docs/methods.md`` §5.4, §5.6.1).
* PKT — Passalis and Tefas, "Learning Deep Representations with Probabilistic Knowledge Transfer",
  ECCV 2018; as mdistiller (§5.6.2).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss


def _normalised_distances(emb: torch.Tensor, squared: bool, eps: float) -> torch.Tensor:
    """``[B, B]`` Euclidean distances divided by their mean over the off-diagonal pairs.

    Distances come from the Gram matrix, clamped below at ``eps`` before the square root (so the
    root has a finite gradient), with the diagonal set to 0 as in the reference. A batch of one
    sample has no pair; its (empty) normalisation is skipped.
    """
    sq_norm = emb.pow(2).sum(dim=1)
    dist = (sq_norm[:, None] + sq_norm[None, :] - 2 * emb @ emb.T).clamp(min=eps)
    if not squared:
        dist = dist.sqrt()
    off_diagonal = ~torch.eye(emb.shape[0], dtype=torch.bool, device=emb.device)
    dist = dist * off_diagonal
    mean = dist.sum() / off_diagonal.sum().clamp(min=1)
    return dist / mean.clamp(min=torch.finfo(dist.dtype).tiny)


def _angles(emb: torch.Tensor) -> torch.Tensor:
    """``[B, B, B]`` cosines ``<e_i − e_j, e_k − e_j> / (‖·‖‖·‖)`` at every anchor ``j``.

    Entry ``[j, i, k]``; zero difference vectors normalise to 0 (``F.normalize``), so terms with
    ``i = j`` or ``k = j`` are 0 for student and teacher alike.
    """
    diff = F.normalize(emb[None, :, :] - emb[:, None, :], p=2, dim=2)  # [j, i, D]
    return diff @ diff.transpose(1, 2)


def rkd_distance(
    s_pooled: torch.Tensor, t_pooled: torch.Tensor, squared: bool = False, eps: float = 1e-12
) -> torch.Tensor:
    """RKD-D: ``mean_{i,j} smoothL1(ψ_D(e^s_i, e^s_j), ψ_D(e^t_i, e^t_j))`` over all ``B²`` pairs.

    ``ψ_D(e_i, e_j) = ‖e_i − e_j‖ / μ``, ``μ`` the mean distance over the ``B(B−1)`` pairs
    ``i ≠ j``;
    diagonal entries are 0 and still count in the ``B²`` of the mean (reference reduction).

    Args:
        s_pooled: ``[B, D]`` student embeddings (flattened if more dimensions).
        t_pooled: ``[B, D']`` teacher embeddings (detached here).
        squared: use squared distances.
        eps: lower clamp of the squared distances.

    Returns:
        Scalar; 0 (graph-connected) for ``B = 1``.
    """
    s = s_pooled.flatten(1)
    t = t_pooled.detach().flatten(1)
    return F.smooth_l1_loss(
        _normalised_distances(s, squared, eps), _normalised_distances(t, squared, eps)
    )


def rkd_angle(s_pooled: torch.Tensor, t_pooled: torch.Tensor) -> torch.Tensor:
    """RKD-A: ``mean_{i,j,k} smoothL1(cos∠ e^s_i e^s_j e^s_k, cos∠ e^t_i e^t_j e^t_k)`` over ``B³``.

    Degenerate triples (two equal indices) give 0 on both sides and count in the ``B³`` of the mean,
    as in the reference. With ``B ≤ 2`` no triple of distinct samples exists: the value is exactly
    0 (defined, no error), and the gradient is 0.

    Args:
        s_pooled: ``[B, D]`` student embeddings.
        t_pooled: ``[B, D']`` teacher embeddings (detached here).
    """
    s = s_pooled.flatten(1)
    t = t_pooled.detach().flatten(1)
    return F.smooth_l1_loss(_angles(s), _angles(t))


def pkt(s_pooled: torch.Tensor, t_pooled: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    """PKT: KL between row-normalised cosine-similarity kernels, averaged over all ``B²`` entries.

    ``K_ij = (cos(e_i, e_j) + 1) / 2``, ``P_ij = K_ij / Σ_j K_ij``;
    ``L = (1/B²) Σ_{i,j} P^t_ij log((P^t_ij + ε) / (P^s_ij + ε))`` — the reference divides by
    ``B²`` (``torch.mean``), not ``B``. Vectors are divided by ``‖e‖ + ε``; a zero vector gives
    ``K = 1/2`` against every sample.

    Args:
        s_pooled: ``[B, D]`` student embeddings.
        t_pooled: ``[B, D']`` teacher embeddings (detached here).
        eps: ``ε`` of the norms and of the log ratio.
    """

    def kernel(emb: torch.Tensor) -> torch.Tensor:
        unit = emb / (emb.norm(dim=1, keepdim=True) + eps)
        sim = (unit @ unit.T + 1.0) / 2.0
        return sim / sim.sum(dim=1, keepdim=True)

    p_s = kernel(s_pooled.flatten(1))
    p_t = kernel(t_pooled.detach().flatten(1))
    return (p_t * torch.log((p_t + eps) / (p_s + eps))).mean()


@MODELS.register_module()
class RKDLoss(RoutedLoss):
    """RKD: ``distance_weight · RKD-D + angle_weight · RKD-A``
    (:func:`rkd_distance`, :func:`rkd_angle`).

    mdistiller defaults: distance 25, angle 50, feature weight (``loss_weight``) 1, ``eps`` 1e-12,
    unsquared distances. Embeddings are the pooled features ``s_pooled`` / ``t_pooled``.

    Args:
        distance_weight: weight of the distance term.
        angle_weight: weight of the angle term.
        squared: squared distances in RKD-D.
        eps: clamp of the squared distances.
        loss_weight: factor applied to the sum.
    """

    compares_samples = True
    repr_fields = ('distance_weight', 'angle_weight', 'squared', 'eps')

    def __init__(
        self,
        distance_weight: float = 25.0,
        angle_weight: float = 50.0,
        squared: bool = False,
        eps: float = 1e-12,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.distance_weight = float(distance_weight)
        self.angle_weight = float(angle_weight)
        self.squared = bool(squared)
        self.eps = float(eps)

    def compute(self, s_pooled: torch.Tensor, t_pooled: torch.Tensor) -> torch.Tensor:
        """Args:
        s_pooled: ``[B, D]`` student embeddings.
        t_pooled: ``[B, D']`` teacher embeddings.
        """
        loss = self.distance_weight * rkd_distance(s_pooled, t_pooled, self.squared, self.eps)
        if self.angle_weight:
            loss = loss + self.angle_weight * rkd_angle(s_pooled, t_pooled)
        return loss


@MODELS.register_module()
class PKTLoss(RoutedLoss):
    """PKT (:func:`pkt`); mdistiller's feature weight is 30000 (``loss_weight``).

    Args:
        eps: ``ε`` of the norms and of the log ratio (1e-7).
        loss_weight: factor applied to the loss.
    """

    compares_samples = True
    repr_fields = ('eps',)

    def __init__(self, eps: float = 1e-7, loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight)
        self.eps = float(eps)

    def compute(self, s_pooled: torch.Tensor, t_pooled: torch.Tensor) -> torch.Tensor:
        """Args:
        s_pooled: ``[B, D]`` student embeddings.
        t_pooled: ``[B, D']`` teacher embeddings.
        """
        return pkt(s_pooled, t_pooled, self.eps)
