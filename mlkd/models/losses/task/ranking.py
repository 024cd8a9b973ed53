"""Ranking losses over a sample's positive / negative labels: WARP and the robust ramp loss (RML).

Both are baselines of the Two-way paper's supplement, Table B (Kobayashi, "Two-way Multi-Label
Loss", CVPR 2023); ``docs/methods.md`` §2.3 gives the formulas, their sources and what is
reconstructed.

* **WARP** — Gong, Jia, Leung, Toshev, Ioffe, "Deep Convolutional Ranking for Multilabel Image
  Annotation", ICLR 2014 (arXiv 1312.4894), eq. 3: every (positive ``j``, negative ``k``) pair of
  an image pays the hinge ``max(0, 1 − f_j + f_k)``, weighted by ``L(r_j) = Σ_{i=1}^{r_j} 1/i`` of
  the rank ``r_j`` of the positive.
* **RML** — Cevikalp, Benligiray, Gerek, Saribas, "Semi-Supervised Robust Deep Neural Networks for
  Multi-Label Classification", CVPR Workshops 2019 (journal version: Cevikalp, Benligiray, Gerek,
  "Semi-supervised robust deep neural networks for multi-label image classification", Pattern
  Recognition 100, 2020): a ramp (truncated hinge) loss over the (positive, negative) pairs of an
  image plus a class-wise ramp term on every label. **Reconstructed**: the papers' equations were
  not available to us, see :func:`robust_ramp_loss`.

Entries with target ``-1`` are in neither set: they are never ranked, never counted in a rank and
get no gradient.
"""

from __future__ import annotations

import hashlib

import torch
import torch.nn.functional as F
from mmengine.dist import get_rank
from mmengine.logging import MessageHub

from mlkd.registry import MODELS

from ..base import TaskLoss
from ..utils import check_choice, check_non_negative, label_masks, reduce_loss

RANK_ESTIMATES = ('exact', 'sampled')
RANKING_REDUCTIONS = ('sum', 'mean', 'batchmean', 'none')


def pair_masks(gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(pos [B, C], neg [B, C], pairs [B, C, C])``; ``pairs[b, j, k]``: ``j`` positive and ``k``
    negative in sample ``b`` (``-1`` entries are in no pair)."""
    pos, neg = label_masks(gt)
    return pos, neg, pos[:, :, None] & neg[:, None, :]


def pairwise_margins(logits: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    """``[B, C, C]`` with entry ``(b, j, k) = margin − f_j + f_k`` (positive ``j``, negative ``k``)."""
    return margin - logits[:, :, None] + logits[:, None, :]


def harmonic_weights(rank: torch.Tensor, num_classes: int) -> torch.Tensor:
    """WARP's ``L(r) = Σ_{i=1}^{r} 1/i`` (``L(0) = 0``) of integer ranks ``0 ≤ r ≤ num_classes``."""
    steps = torch.arange(1, num_classes + 1, device=rank.device, dtype=torch.float64)
    table = torch.cat([steps.new_zeros(1), torch.cumsum(1.0 / steps, 0)])
    return table[rank.long()].float()


def sampled_ranks(
    violators: torch.Tensor, num_negatives: torch.Tensor, num_classes: int, uniform: torch.Tensor
) -> torch.Tensor:
    """WARP's sampled rank ``⌊(c − 1)/s⌋`` of every positive (Gong et al. §3.3, after WSABIE).

    Negatives are drawn uniformly, with replacement, until one violates the margin; ``s`` is the
    number of draws. Each draw is a violator with probability ``p = v / |N|`` (``v`` violators
    among the ``|N|`` negatives of the sample), so ``s`` is geometric, and it is drawn here in
    one step by inversion, ``s = ⌊log u / log(1 − p)⌋ + 1`` with ``u ∈ (0, 1]`` uniform: the same
    distribution as the draw loop, without the loop. Up to ``c − 1`` draws are made (``c`` the
    number of classes); a positive with no violator found gets rank 0 (no update, as WSABIE skips
    the step).

    Args:
        violators: ``[B, C]`` number of margin-violating negatives of each positive.
        num_negatives: ``[B, 1]`` negatives per sample.
        num_classes: ``c``.
        uniform: ``[B, C]`` uniform draws in ``(0, 1]``.

    Returns:
        ``[B, C]`` integer ranks (float dtype).
    """
    max_draws = max(num_classes - 1, 1)
    p = violators.double() / num_negatives.double().clamp(min=1)
    # log(1 − p) is −inf at p = 1: s = 1; p = 0 gives s = ∞ (never found).
    draws = torch.floor(torch.log(uniform.double()) / torch.log1p(-p)) + 1
    draws = torch.where(p >= 1, torch.ones_like(draws), draws)
    found = (violators > 0) & (draws <= max_draws)
    rank = torch.floor((num_classes - 1) / draws.clamp(min=1))
    return torch.where(found, rank, torch.zeros_like(rank)).float()


def warp_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    margin: float = 1.0,
    uniform: torch.Tensor | None = None,
    reduction: str = 'sum',
) -> torch.Tensor:
    """WARP: ``Σ_b Σ_{j∈P_b} Σ_{k∈N_b} L(r_j) · max(0, margin − f_j + f_k)``.

    ``r_j`` is the exact rank — the number of negatives violating the margin against ``j``,
    ``#{k ∈ N_b : margin − f_j + f_k > 0}`` — or, with ``uniform`` draws given, the paper's
    sampled estimate (:func:`sampled_ranks`). ``L(r_j)`` is a weight: no gradient flows through
    the rank, as in the paper's SGD step.

    Args:
        logits: ``[B, C]``; gt: ``[B, C]`` 1 positive, 0 negative, -1 ignored.
        margin: the hinge's margin (1 in the paper).
        uniform: ``None`` (exact ranks) or ``[B, C]`` uniform draws in ``(0, 1]`` (sampled ranks).
        reduction: ``'sum'`` (the paper's objective over the batch), ``'mean'`` (that sum divided
            by the number of (positive, negative) pairs in the batch), ``'batchmean'`` (sum / B) or
            ``'none'`` (``[B, C]``: each positive's ``L(r_j) Σ_k hinge``, 0 elsewhere).
    """
    pos, neg, pairs = pair_masks(gt)
    hinge = F.relu(pairwise_margins(logits, margin)) * pairs  # [B, C, C]
    violators = ((hinge > 0) & pairs).sum(-1)  # [B, C]
    if uniform is None:
        rank = violators
    else:
        rank = sampled_ranks(violators, neg.sum(1, keepdim=True), gt.shape[1], uniform)
    per_positive = harmonic_weights(rank, gt.shape[1]) * hinge.sum(-1) * pos  # [B, C]
    return _reduce_pairs(per_positive, pairs, reduction)


def _reduce_pairs(per_entry: torch.Tensor, pairs: torch.Tensor, reduction: str) -> torch.Tensor:
    """``'mean'``: divide the sum by the number of (positive, negative) pairs (0 if none)."""
    if reduction == 'mean':
        return per_entry.sum() / pairs.sum().clamp(min=1)
    return reduce_loss(per_entry, reduction)


def ramp(t: torch.Tensor, ramp_start: float) -> torch.Tensor:
    """Ramp loss ``R_s(t) = min(1 − s, max(0, 1 − t)) = H_1(t) − H_s(t)``, ``s = ramp_start < 1``.

    The hinge ``H_1(t) = max(0, 1 − t)`` capped at ``1 − s``: a sample beyond ``t < s`` (a
    confidently wrong score, e.g. a noisy label) costs a constant and gets no gradient
    (Collobert, Sinz, Weston, Bottou, "Trading Convexity for Scalability", ICML 2006).
    """
    return torch.clamp(1 - t, min=0, max=1 - ramp_start)


def robust_ramp_loss(
    logits: torch.Tensor,
    gt: torch.Tensor,
    ramp_start: float = -1.0,
    classwise_weight: float = 1.0,
    pair_normalise: bool = False,
    reduction: str = 'sum',
) -> torch.Tensor:
    """RML as mlkd reconstructs it: a pairwise ramp ranking term plus a class-wise ramp term.

    For a sample with positives ``P``, negatives ``N`` and ``y_c = +1`` on ``P``, ``−1`` on ``N``:

        ℓ = ρ · Σ_{j∈P} Σ_{k∈N} R_s(f_j − f_k)  +  λ · Σ_{c∈P∪N} R_s(y_c f_c)

    with ``ρ = 1`` (or ``1/(|P||N|)`` with ``pair_normalise``) and ``λ = classwise_weight``.

    **Reconstruction.** The Two-way supplement describes RML as a ranking loss that "incorporates a
    class-wise loss resembling BCE"; the RML papers' abstracts say the loss is the ramp loss,
    chosen over the hinge for robustness to noisy labels. Their equations were not available to
    us (neither paper nor code could be read), so the form above — the ranking and class-wise
    terms, their sum over the sample's labels, ``s = −1`` (a cap of 2), ``λ = 1``, no pair
    normalisation — is mlkd's reading, with each open choice a switch.

    Args:
        logits: ``[B, C]``; gt: ``[B, C]`` 1 positive, 0 negative, -1 ignored.
        ramp_start: ``s`` of :func:`ramp` (``< 1``).
        classwise_weight: ``λ`` (``0``: the ranking term alone).
        pair_normalise: divide each sample's ranking term by its number of pairs ``|P||N|``.
        reduction: ``'sum'`` over the batch, ``'batchmean'`` (sum / B), ``'mean'`` (the ranking
            term divided by the batch's number of pairs — by its number of samples with a pair
            under ``pair_normalise`` — plus λ × the class-wise term divided by its number of
            labelled entries) or ``'none'`` (``[B, C]``: each label's class-wise
            term plus, on positives, the positive's pair terms).
    """
    pos, neg, pairs = pair_masks(gt)
    valid = pos | neg
    pair_ramps = ramp(-pairwise_margins(logits, 0.0), ramp_start) * pairs  # R_s(f_j − f_k)
    ranking = pair_ramps.sum(-1)  # [B, C] on P
    if pair_normalise:
        ranking = ranking / pairs.flatten(1).sum(1).clamp(min=1)[:, None]
    signs = torch.where(pos, 1.0, -1.0)
    classwise = ramp(signs * logits, ramp_start) * valid  # [B, C]
    if reduction == 'mean':
        # Normalised rows already average their pairs: then average over the rows with a pair.
        pair_count = pairs.flatten(1).any(1).sum() if pair_normalise else pairs.sum()
        return ranking.sum() / pair_count.clamp(
            min=1
        ) + classwise_weight * classwise.sum() / valid.sum().clamp(min=1)
    return reduce_loss(ranking + classwise_weight * classwise, reduction)


def current_iteration() -> int | None:
    """The training iteration MMEngine's ``RuntimeInfoHook`` records, or None outside a runner."""
    step = MessageHub.get_current_instance().get_info('iter')
    return None if step is None else int(step)


@MODELS.register_module()
class WARPLoss(TaskLoss):
    """WARP (Gong et al., "Deep Convolutional Ranking for Multilabel Image Annotation", ICLR 2014)
    as a task loss; see :func:`warp_loss`.

    ``rank_estimate='exact'`` (default) counts each positive's violating negatives, which a
    ``[B, C, C]`` pair tensor gives at no extra cost; ``'sampled'`` is the paper's estimate by
    sampling negatives until a violation (:func:`sampled_ranks`), for a faithful run.

    The sampled draws need no state: each call seeds a fresh generator from ``(seed, training
    iteration, rank of the process)``, so a resumed run repeats the draws of an uninterrupted one
    (the iteration is restored from the checkpoint), and DDP processes draw independently.
    Outside a runner (no recorded iteration) a per-module call counter replaces the iteration.

    Args:
        margin: the hinge margin (1).
        rank_estimate: ``'exact'`` or ``'sampled'``.
        seed: seed of the sampled ranks.
        reduction: ``'sum'`` (default: the paper's objective over the batch), ``'mean'``,
            ``'batchmean'`` or ``'none'`` (:func:`warp_loss`).
        loss_weight: factor applied to the loss.
    """

    reductions = RANKING_REDUCTIONS
    repr_fields = ('margin', 'rank_estimate', 'seed')

    def __init__(
        self,
        margin: float = 1.0,
        rank_estimate: str = 'exact',
        seed: int = 0,
        reduction: str = 'sum',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        self.margin = float(margin)
        if not self.margin > 0:
            raise ValueError(f'WARPLoss: margin must be > 0, got {margin}')
        self.rank_estimate = check_choice('rank_estimate', rank_estimate, RANK_ESTIMATES)
        self.seed = int(seed)
        self._calls = 0

    def draws(self, shape: torch.Size) -> torch.Tensor:
        """Uniform draws in ``(0, 1]`` for the sampled ranks of this step (CPU generator)."""
        step = current_iteration()
        if step is None:
            step, self._calls = self._calls, self._calls + 1
        key = f'{self.seed}/{step}/{get_rank()}'.encode()
        generator = torch.Generator().manual_seed(
            int.from_bytes(hashlib.sha256(key).digest()[:8], 'little') & (2**63 - 1)
        )
        return 1 - torch.rand(shape, generator=generator, dtype=torch.float64)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        uniform = None
        if self.rank_estimate == 'sampled':
            uniform = self.draws(logits.shape).to(logits.device)
        return warp_loss(logits, gt, self.margin, uniform, reduction)


@MODELS.register_module()
class RobustMultiLabelLoss(TaskLoss):
    """RML (Cevikalp et al., "Semi-Supervised Robust Deep Neural Networks for Multi-Label
    Classification", CVPR Workshops 2019) as mlkd reconstructs it; see :func:`robust_ramp_loss`.

    Only the supervised loss: the papers' label propagation to unlabelled images is not part of
    the Two-way comparison (fully labelled MS-COCO) and is not implemented.

    Args:
        ramp_start: ``s`` of the ramp ``min(1 − s, max(0, 1 − t))`` (−1).
        classwise_weight: weight ``λ`` of the class-wise term (1).
        pair_normalise: divide each sample's ranking term by its number of pairs (False).
        reduction: ``'sum'`` (default), ``'mean'``, ``'batchmean'`` or ``'none'``.
        loss_weight: factor applied to the loss.
    """

    reductions = RANKING_REDUCTIONS
    repr_fields = ('ramp_start', 'classwise_weight', 'pair_normalise')

    def __init__(
        self,
        ramp_start: float = -1.0,
        classwise_weight: float = 1.0,
        pair_normalise: bool = False,
        reduction: str = 'sum',
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, scale_by_world_size, loss_weight)
        self.ramp_start = float(ramp_start)
        if not self.ramp_start < 1:
            raise ValueError(
                f'RobustMultiLabelLoss: ramp_start must be < 1 (the ramp is capped '
                f'at 1 - ramp_start > 0), got {ramp_start}'
            )
        self.classwise_weight = check_non_negative(
            classwise_weight, 'classwise_weight', 'RobustMultiLabelLoss'
        )
        self.pair_normalise = bool(pair_normalise)

    def compute(self, logits: torch.Tensor, gt: torch.Tensor, reduction: str) -> torch.Tensor:
        return robust_ramp_loss(
            logits, gt, self.ramp_start, self.classwise_weight, self.pair_normalise, reduction
        )
