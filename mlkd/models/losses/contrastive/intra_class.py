"""Margin-based intra-class contrastive loss, the auxiliary loss of the intra-class teacher.

Paper: "Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous, under
review at ICLR; the arXiv version 2509.22053 names Yuan, Xu, Geng and Rui), §3.2–3.3, Algorithm 1,
eqs. (4)–(7);
``docs/methods.md`` §5.5.

The teacher is trained with ``L_teacher = CE(y, p_t) + λ · L_intra``, λ ∈ [0.01, 0.03] (the
``loss_weight`` of this loss). For an anchor ``x`` of class ``y`` with margin (Definition 1)

    ρ_x = p_x^y − max_{i≠y} p_x^i   (softmax of the anchor's logits, in [−1, 1]),

eq. (7) gives, when ``ρ_x > δ``,

    ℓ_x = −log( e^{f(x)ᵀf(x⁺)/T} / (e^{f(x)ᵀf(x⁺)/T} + Σ_k e^{f(x)ᵀf(x_k⁻)/T}) ),

with ``x⁺`` the anchor's augmented view and ``x_k⁻`` the *other samples of the same class* (the
(n+1)-tuplet loss of Sohn, NeurIPS 2016, with intra-class negatives), and ``ℓ_x = 0`` otherwise.
A class with a single member has no negatives and ``ℓ = 0``.

What the paper leaves open, and the switches (paper-literal reading as default):

* the embedding ``f``: whatever the config wires to ``anchor`` / ``positive``. The paper writes
  ``f`` for the classifier (``f: X → Y``), so the shipped configs use the logits
  (``inputs=dict(anchor='logits', positive='positive_logits')``); the penultimate features
  (``'pooled'``) are the alternative;
* ``normalize``: L2-normalise the embeddings first (default False: eq. (4) has none; §4's analysis
  assumes ``‖φ(x)‖ = 1``); ``temperature`` T (default 1: eq. (4) has none);
* ``negatives``: ``'all'`` same-class samples (default, eq. (4)) or only those past the margin
  (``'qualifying'``);
* ``reduction``: ``'batch'`` (default: the per-sample ``ℓ_x`` of eq. (7), 0 for non-anchors,
  summed and divided by the batch size) or ``'anchors'`` (the mean over the anchors that count);
* ``queue_size``: the per-class pipeline of §3.3 (below), or ``None`` for the loss of each batch;
  the paper gives no size (default 16).

**Per-class pipeline cache** (§3.3, last paragraph; the paper's practice). Anchors past the
margin are cached in a queue of their class (their anchor and positive embeddings, detached). When
a class's queue plus the batch's new anchors of that class reach ``queue_size``, the loss is
computed over all of them — every member an anchor, the other members its negatives, the batch's
members with gradient — and the queue is cleared; the classes that do not reach it cost nothing
this step and only store their new anchors. The cache is per-class state of a
:class:`~mlkd.models.losses.base.StatefulLoss`: saved in checkpoints (exact resume), sized
``[C, queue_size, D]`` (a cache of another size is refused), and the same on every DDP rank (the
router gives the loss the global batch). In the pipeline, negatives are the cached members, which
all passed the margin.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss, StatefulLoss
from ..utils import check_choice, check_temperature, masked_logsumexp, single_label_index

NEGATIVES = ('all', 'qualifying')
REDUCTIONS = ('batch', 'anchors')


def class_margins(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Definition 1: ``ρ = p^y − max_{i≠y} p^i`` of the softmax of ``[B, C]`` logits (``[B]``)."""
    probs = torch.softmax(logits.detach(), dim=1)
    true = probs.gather(1, labels[:, None]).squeeze(1)
    others = probs.scatter(1, labels[:, None], float('-inf')).amax(dim=1)
    return true - others


def intra_class_tuplet_loss(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    labels: torch.Tensor,
    anchors: torch.Tensor,
    negatives: torch.Tensor,
    temperature: float = 1.0,
) -> torch.Tensor:
    """Per-anchor intra-class (n+1)-tuplet loss, eq. (4) / (7).

    Args:
        anchor: ``[N, D]`` embeddings ``f(x)``.
        positive: ``[N, D]`` embeddings ``f(x⁺)`` of each sample's augmented view.
        labels: ``[N]`` class indices.
        anchors: ``[N]`` bool, the samples whose loss counts (margin past δ).
        negatives: ``[N]`` bool, the samples that may serve as another anchor's negative.
        temperature: ``T``.

    Returns:
        ``[N]``: ``−s⁺ + log(e^{s⁺} + Σ_{k: same class, k ≠ i, negatives_k} e^{s_ik})`` with
        ``s = f(x_i)ᵀf(·) / T`` for anchors, 0 for the others; finite for any input.
    """
    positive_score = (anchor * positive).sum(dim=1) / temperature  # [N]
    scores = anchor @ anchor.T / temperature  # [N, N]
    n = anchor.shape[0]
    same_class = labels[:, None] == labels[None, :]
    others = same_class & negatives[None, :] & ~torch.eye(n, dtype=torch.bool, device=anchor.device)
    candidates = torch.cat([positive_score[:, None], scores], dim=1)  # [N, 1 + N]
    members = torch.cat([torch.ones_like(others[:, :1]), others], dim=1)
    loss = masked_logsumexp(candidates, members, dim=1) - positive_score
    return torch.where(anchors, loss, torch.zeros_like(loss))


@MODELS.register_module()
class IntraClassContrastiveLoss(RoutedLoss, StatefulLoss):
    """Margin-based intra-class contrastive loss with the per-class pipeline (module docstring).

    Inputs: ``anchor`` / ``positive`` ``[B, D]`` embeddings of the two views (map them in the
    config, e.g. ``inputs=dict(anchor='logits', positive='positive_logits')`` under
    ``ClassifierWithLosses(views=dict(anchor=0, positive=1))``), ``logits`` ``[B, C]`` of the
    anchor view (for the margin), ``gt`` ``[B, C]`` one-hot single-label targets.

    Args:
        num_classes: ``C`` (injected).
        margin_threshold: ``δ`` in ``[−1, 1]``; anchors need ``ρ > δ`` (the paper: ``δ > 0``, no
            value given; default 0.5).
        temperature: ``T`` of the scores.
        normalize: L2-normalise the embeddings.
        negatives: ``'all'`` or ``'qualifying'`` (batch mode; the pipeline holds qualifying
            samples only).
        reduction: ``'batch'`` (Σ ℓ / B) or ``'anchors'`` (mean over the anchors that count).
        queue_size: per-class pipeline length (≥ 2), or ``None`` for the loss of each batch.
        embed_dim: ``D`` of the cached embeddings; default: the probed channels of the tensor
            ``anchor`` is wired to (``input_channels``, injected).
        loss_weight: ``λ`` (the paper: 0.01–0.03).
    """

    repr_fields = (
        'margin_threshold',
        'temperature',
        'normalize',
        'negatives',
        'reduction',
        'queue_size',
    )

    def __init__(
        self,
        num_classes: int,
        margin_threshold: float = 0.5,
        temperature: float = 1.0,
        normalize: bool = False,
        negatives: str = 'all',
        reduction: str = 'batch',
        queue_size: int | None = 16,
        embed_dim: int | None = None,
        input_channels: dict | None = None,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        if not -1.0 <= float(margin_threshold) <= 1.0:
            raise ValueError(
                'IntraClassContrastiveLoss: margin_threshold (δ) must be in '
                f'[-1, 1] (a margin of softmax probabilities), got {margin_threshold}'
            )
        self.margin_threshold = float(margin_threshold)
        self.temperature = check_temperature(temperature)
        self.normalize = bool(normalize)
        self.negatives = check_choice('negatives', negatives, NEGATIVES)
        self.reduction = check_choice('reduction', reduction, REDUCTIONS)
        self.num_classes = int(num_classes)
        self.queue_size = None if queue_size is None else int(queue_size)
        if self.queue_size is not None:
            if self.queue_size < 2:
                raise ValueError(
                    'IntraClassContrastiveLoss: queue_size must be >= 2 (a class '
                    f'needs an anchor and a negative) or None, got {queue_size}'
                )
            dim = embed_dim if embed_dim is not None else (input_channels or {}).get('anchor')
            if dim is None:
                raise ValueError(
                    'IntraClassContrastiveLoss: the pipeline needs the embedding '
                    'size: give embed_dim, or build the loss through an algorithm, '
                    'which probes the tensor `anchor` is wired to'
                )
            shape = (self.num_classes, self.queue_size, int(dim))
            self.register_state('queue_anchor', torch.zeros(shape), 'class')
            self.register_state('queue_positive', torch.zeros(shape), 'class')
            self.register_state(
                'queue_count', torch.zeros(self.num_classes, dtype=torch.long), 'class'
            )

    def compute(
        self, anchor: torch.Tensor, positive: torch.Tensor, logits: torch.Tensor, gt: torch.Tensor
    ) -> torch.Tensor:
        if anchor.dim() != 2 or positive.shape != anchor.shape:
            raise ValueError(
                f'IntraClassContrastiveLoss: anchor and positive must be [B, D] of '
                f'one shape, got {tuple(anchor.shape)} and {tuple(positive.shape)}'
            )
        labels = single_label_index(gt)  # refuses multi-label targets, naming the rows
        if self.normalize:
            anchor, positive = F.normalize(anchor, dim=1), F.normalize(positive, dim=1)
        qualifying = class_margins(logits, labels) > self.margin_threshold
        if self.queue_size is None:
            negatives = (
                qualifying if self.negatives == 'qualifying' else torch.ones_like(qualifying)
            )
            losses = intra_class_tuplet_loss(
                anchor, positive, labels, qualifying, negatives, self.temperature
            )
            return self._reduce(losses.sum(), anchor, qualifying.sum())
        return self._pipeline(anchor, positive, labels, qualifying)

    def _reduce(
        self, total: torch.Tensor, anchor: torch.Tensor, num_anchors: torch.Tensor
    ) -> torch.Tensor:
        # `anchor.sum() * 0` keeps the value connected to the graph when nothing counts.
        total = total + anchor.sum() * 0.0
        if self.reduction == 'batch':
            return total / anchor.shape[0]
        return total / num_anchors.clamp(min=1)

    def _pipeline(
        self,
        anchor: torch.Tensor,
        positive: torch.Tensor,
        labels: torch.Tensor,
        qualifying: torch.Tensor,
    ) -> torch.Tensor:
        """Loss of the classes whose queue fills this step; cache the others' new anchors."""
        count = self.queue_count
        arriving = torch.bincount(labels[qualifying], minlength=self.num_classes)  # [C]
        flush = (arriving > 0) & (count + arriving >= self.queue_size)  # [C]
        slots = torch.arange(self.queue_size, device=count.device)
        cached = flush[:, None] & (slots[None, :] < count[:, None])  # [C, Q]
        now = qualifying & flush[labels]
        members_a = torch.cat([self.queue_anchor[cached], anchor[now]])
        members_p = torch.cat([self.queue_positive[cached], positive[now]])
        members_y = torch.cat(
            [
                torch.arange(self.num_classes, device=count.device)[:, None].expand_as(cached)[
                    cached
                ],
                labels[now],
            ]
        )
        every = torch.ones_like(members_y, dtype=torch.bool)
        losses = intra_class_tuplet_loss(
            members_a, members_p, members_y, every, every, self.temperature
        )
        value = self._reduce(losses.sum(), anchor, every.sum())
        with torch.no_grad():
            stay = qualifying & ~flush[labels]
            rank = (F.one_hot(labels, self.num_classes) * stay[:, None]).cumsum(0)
            slot = count[labels] + rank.gather(1, labels[:, None]).squeeze(1) - 1
            self.queue_anchor[labels[stay], slot[stay]] = anchor.detach()[stay]
            self.queue_positive[labels[stay], slot[stay]] = positive.detach()[stay]
            self.queue_count.copy_(torch.where(flush, torch.zeros_like(count), count + arriving))
        return value
