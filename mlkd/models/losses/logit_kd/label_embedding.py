"""Label-wise embedding distillation of L2D: HuberDist, CD, ID and LED.

Paper: P. Yang et al., "Multi-Label Knowledge Distillation", ICCV 2023 (arXiv 2308.06453); reference
code ``penghui-yang/L2D`` (``criterion/distiller_zoo/le_based``). See ``methods.md`` §4.1.1.

Notation: ``E^s, E^t ∈ R^{B×C×D}`` label-wise embeddings of student and teacher (``D`` may differ
between the two nets: only distance matrices are compared), ``y ∈ {1, 0, -1}^{B×C}`` targets; a
member of a set is an entry with ``y == 1`` (negatives and ignored entries belong to no set).

**HuberDist** (RKD distance loss on a set of ``n`` embeddings ``S ∈ R^{n×D_s}``,
``T ∈ R^{n×D_t}``)::

    d_ab  = sqrt(max(‖S_a‖² + ‖S_b‖² − 2⟨S_a, S_b⟩, 1e-12))   (a ≠ b),   d_aa = 0
    d̂     = d / mean{d_ab : a ≠ b}                            (student mean not detached)
    L     = (1/n) Σ_{a,b} SmoothL1_{β=1}(d̂^s_ab − d̂^t_ab)

The teacher side is computed without gradient. A set of 2 gives exactly 0 (both normalised matrices
are ``[[0, 1], [1, 0]]``); a set of 0 or 1 member gives 0 here (the reference would produce NaN).

**CD** (class-aware):
``L_CD = Σ_{c : n_c > 1} HuberDist({E^s_bc : y_bc = 1}, {E^t_bc : y_bc = 1})``, sets over ``b``.

**ID** (instance-aware):
``L_ID = Σ_{b : m_b > 1} HuberDist({E^s_bc : y_bc = 1}, {E^t_bc : y_bc = 1})``, sets over ``c``.

**LED** ``= λ_cd·L_CD + λ_id·L_ID`` with ``λ_cd = 100``, ``λ_id = 1000``.

All sets are processed by one batched masked kernel (``[G, n, n]`` distance matrices plus a member
mask); there is no Python loop over classes or samples. The losses compare samples
(``compares_samples``): under DDP the router gives them the batch gathered from every process, so
their value does not depend on the number of processes.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..weight_reference import ReferenceWeighted

__all__ = [
    'pairwise_huber_distance_loss',
    'grouped_huber_distance_loss',
    'class_aware_distance_loss',
    'instance_aware_distance_loss',
    'ClassAwareDistillLoss',
    'InstanceAwareDistillLoss',
    'LabelEmbeddingDistillLoss',
]

_SQ_EPS = 1e-12


def _gram_distances(x: Tensor, eps: float = _SQ_EPS) -> Tensor:
    """Batched Gram-form Euclidean distances.

    ``d_ab = sqrt(max(‖x_a‖² + ‖x_b‖² − 2⟨x_a, x_b⟩, eps))``; the diagonal is left as computed
    (the caller masks it). The Gram matrix is symmetrised so that ``d`` is exactly symmetric, which
    makes a 2-member set give exactly 0.

    Args:
        x: ``[G, n, D]`` sets of ``n`` vectors.
        eps: clamp of the squared distance before the square root.

    Returns:
        ``[G, n, n]`` distances.
    """
    sq = x.pow(2).sum(dim=-1)
    gram = torch.bmm(x, x.transpose(1, 2))
    gram = 0.5 * (gram + gram.transpose(1, 2))
    d2 = sq.unsqueeze(2) + sq.unsqueeze(1) - 2.0 * gram
    return d2.clamp_min(eps).sqrt()


def _normalised_distances(
    x: Tensor, pair_mask: Tensor, pair_count: Tensor, eps: float = _SQ_EPS
) -> Tensor:
    """Distances over valid pairs divided by their per-set mean; zero outside ``pair_mask``.

    Args:
        x: ``[G, n, D]`` embeddings.
        pair_mask: ``[G, n, n]`` bool, ``member_a ∧ member_b ∧ a ≠ b``.
        pair_count: ``[G]`` number of valid pairs per set.
        eps: squared-distance clamp.

    Returns:
        ``[G, n, n]`` normalised distances ``d̂`` (0 on invalid pairs and in empty sets).
    """
    d = torch.where(
        pair_mask, _gram_distances(x, eps), torch.zeros((), dtype=x.dtype, device=x.device)
    )
    mean = d.sum(dim=(1, 2)) / pair_count.clamp_min(1).to(d.dtype)
    mean = torch.where(pair_count > 0, mean, torch.ones_like(mean))
    return d / mean[:, None, None]


def grouped_huber_distance_loss(s: Tensor, t: Tensor, mask: Tensor, eps: float = _SQ_EPS) -> Tensor:
    """HuberDist of many sets at once (the vectorised kernel behind CD and ID).

    For each group ``g`` the set is ``{s[g, a] : mask[g, a]}`` (and the same rows of ``t``);
    ``L_g = (1/n_g) Σ_{a,b ∈ set} SmoothL1_{β=1}(d̂^s_ab − d̂^t_ab)`` with ``n_g = Σ_a mask[g, a]``,
    and ``L_g = 0`` when ``n_g ≤ 1``. Computed in fp32; the teacher side without gradient.

    Args:
        s: ``[G, n, D_s]`` student embeddings.
        t: ``[G, n, D_t]`` teacher embeddings.
        mask: ``[G, n]`` bool (or 0/1) membership.
        eps: squared-distance clamp (1e-12 in the reference).

    Returns:
        ``[G]`` per-group losses, connected to the graph of ``s``.
    """
    s = s.float()
    mask = mask.bool()
    n = s.size(1)
    eye = torch.eye(n, dtype=torch.bool, device=s.device)
    pair_mask = mask.unsqueeze(2) & mask.unsqueeze(1) & ~eye
    pair_count = pair_mask.sum(dim=(1, 2))
    with torch.no_grad():
        t_hat = _normalised_distances(t.detach().float(), pair_mask, pair_count, eps)
    s_hat = _normalised_distances(s, pair_mask, pair_count, eps)
    # Invalid pairs are 0 on both sides and contribute 0; the diagonal likewise.
    elem = F.smooth_l1_loss(s_hat, t_hat, reduction='none', beta=1.0)
    members = mask.sum(dim=1)
    per_group = elem.sum(dim=(1, 2)) / members.clamp_min(1).to(elem.dtype)
    return torch.where(members > 1, per_group, torch.zeros_like(per_group))


def pairwise_huber_distance_loss(s: Tensor, t: Tensor, eps: float = _SQ_EPS) -> Tensor:
    """HuberDist (RKD distance loss, L2D's ``HuberDist``) of one set of ``n`` embeddings.

    ``L = (1/n) Σ_{a,b} SmoothL1_{β=1}(d̂^s_ab − d̂^t_ab)``, ``d̂ = d / mean_{a≠b} d_ab``, Gram-form
    distances with the squared distance clamped at ``eps``.

    Args:
        s: ``[n, D_s]`` student embeddings.
        t: ``[n, D_t]`` teacher embeddings.
        eps: squared-distance clamp.

    Returns:
        Scalar loss (0 when ``n ≤ 1``).
    """
    mask = torch.ones(1, s.size(0), dtype=torch.bool, device=s.device)
    return grouped_huber_distance_loss(s.unsqueeze(0), t.unsqueeze(0), mask, eps)[0]


def class_aware_distance_loss(
    s_emb: Tensor, t_emb: Tensor, gt: Tensor, eps: float = _SQ_EPS
) -> Tensor:
    """L2D's CD: ``Σ_{c: n_c > 1} HuberDist`` over the samples positive for class ``c``.

    CD is ID of the transposed batch (a class's set runs over the samples): the arguments
    (``s_emb`` / ``t_emb`` ``[B, C, D]``, ``gt`` ``[B, C]``) are those of
    :func:`instance_aware_distance_loss`, and the scalar is summed over classes (not averaged).
    """
    return instance_aware_distance_loss(
        s_emb.transpose(0, 1), t_emb.transpose(0, 1), gt.transpose(0, 1), eps
    )


def instance_aware_distance_loss(
    s_emb: Tensor, t_emb: Tensor, gt: Tensor, eps: float = _SQ_EPS
) -> Tensor:
    """L2D's ID: ``Σ_{b: m_b > 1} HuberDist`` over the positive classes of sample ``b``.

    Args:
        s_emb: ``[B, C, D_s]`` student label-wise embeddings.
        t_emb: ``[B, C, D_t]`` teacher label-wise embeddings.
        gt: ``[B, C]`` targets; members are entries equal to 1.
        eps: squared-distance clamp.

    Returns:
        Scalar loss, summed over samples (not averaged).
    """
    return grouped_huber_distance_loss(s_emb, t_emb, gt == 1, eps).sum()


class _EmbeddingDistanceTerm(ReferenceWeighted, RoutedLoss):
    """One term of L2D's embedding distillation, ``loss_weight · L``, ``L`` given by ``distance``.

    Args:
        loss_weight: factor applied to ``L``.
        weight_reference: the setting ``loss_weight`` was given for
            (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`; default None: the
            weight is applied literally).
    """

    compares_samples = True  # pairs / statistics over the batch
    scale_exponents = (1.0, 0.0)  # grows with the positives of the batch
    #: the term's pure function ``(s_emb, t_emb, gt) -> scalar``
    distance: Callable[[Tensor, Tensor, Tensor], Tensor]

    def compute(self, s_label_emb: Tensor, t_label_emb: Tensor, gt: Tensor) -> Tensor:
        """``s_label_emb`` / ``t_label_emb`` ``[B, C, D]``, ``gt`` ``[B, C]`` → scalar."""
        return self.distance(s_label_emb, t_label_emb, gt)


@MODELS.register_module()
class ClassAwareDistillLoss(_EmbeddingDistanceTerm):
    """CD of L2D (class-aware label-wise embedding distillation), ``loss_weight · L_CD``.

    The L2D recipe weights it by 100 (use ``loss_weight=100`` or
    :class:`LabelEmbeddingDistillLoss`). Arguments: :class:`_EmbeddingDistanceTerm`.
    """

    distance = staticmethod(class_aware_distance_loss)


@MODELS.register_module()
class InstanceAwareDistillLoss(_EmbeddingDistanceTerm):
    """ID of L2D (instance-aware label-wise embedding distillation), ``loss_weight · L_ID``.

    The L2D recipe weights it by 1000 (use ``loss_weight=1000`` or
    :class:`LabelEmbeddingDistillLoss`). Arguments: :class:`_EmbeddingDistanceTerm`.
    """

    distance = staticmethod(instance_aware_distance_loss)


@MODELS.register_module()
class LabelEmbeddingDistillLoss(ReferenceWeighted, RoutedLoss):
    """LED of L2D: ``{'cd': w·λ_cd·L_CD, 'id': w·λ_id·L_ID}`` (both terms logged separately).

    A zero ``cd_weight`` or ``id_weight`` skips that term's computation; it is still returned as a
    zero tensor connected to the graph.

    Args:
        cd_weight: ``λ_cd`` (100 in the L2D recipe).
        id_weight: ``λ_id`` (1000 in the L2D recipe).
        loss_weight: ``w``, multiplies both terms.
        weight_reference: the setting ``loss_weight`` was given for
            (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`; default None: the
            weight is applied literally).
    """

    compares_samples = True  # pairs / statistics over the batch
    scale_exponents = (1.0, 0.0)  # both terms grow with the positives of the batch
    terms = ('cd', 'id')
    repr_fields = ('cd_weight', 'id_weight')

    def __init__(
        self,
        cd_weight: float = 100.0,
        id_weight: float = 1000.0,
        loss_weight: float = 1.0,
        weight_reference: dict | None = None,
    ) -> None:
        super().__init__(loss_weight, weight_reference)
        self.cd_weight = float(cd_weight)
        self.id_weight = float(id_weight)

    def compute(self, s_label_emb: Tensor, t_label_emb: Tensor, gt: Tensor) -> dict[str, Tensor]:
        """``s_label_emb`` / ``t_label_emb`` ``[B, C, D]``, ``gt`` ``[B, C]`` → dict of scalars."""
        zero = s_label_emb.float().sum() * 0.0
        cd = (
            class_aware_distance_loss(s_label_emb, t_label_emb, gt) if self.cd_weight != 0 else zero
        )
        id_ = (
            instance_aware_distance_loss(s_label_emb, t_label_emb, gt)
            if self.id_weight != 0
            else zero
        )
        return {'cd': self.cd_weight * cd, 'id': self.id_weight * id_}
