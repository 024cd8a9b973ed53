"""Vectorised multi-label metrics on tensors (methods.md §6).

Every function here is pure and loop-free over samples and classes: per-class average precision
needs one ``torch.sort`` of the score matrix plus a handful of cumulative scans, and the
precision / recall / F1 family is a few reductions over boolean prediction masks.

Conventions shared by all functions
-----------------------------------
* ``scores`` is a float tensor ``[N, C]`` (N samples, C classes). The ranking metrics (AP) accept
  logits or probabilities alike; the ``threshold`` prediction rule compares against ``thr``, so it
  expects **probabilities** (sigmoid outputs), which is what mmpretrain's
  ``ImageClassifier.predict`` stores in ``pred_score``. Scores must be finite.
* ``targets`` has the same shape. An entry ``> 0`` is a positive, ``== 0`` a negative and ``< 0``
  ignored (VOC "difficult", Two-way's "unknown"). With the usual ``{1, 0, -1}`` encoding that is
  "1 positive, 0 negative, -1 ignored". Ignored entries are left out of every count: they never add
  a true positive, a false positive or a false negative, and they take no rank in AP.
* Per-item AP values are fractions in ``[0, 1]``; every summary number (mAP, CP, CR, CF1, OP, OR,
  OF1) is returned in **percent**, as the papers' tables print them.

Ties (equal scores)
-------------------
Every rule that ranks states what it does with equal scores, so a number never depends on an
unspecified sort order:

* AP (:func:`average_precision`, :func:`sample_average_precision`, and so mAP, mAP@sample,
  mAP@class): ``tie_policy='grouped'`` (default) makes tied scores one threshold, as
  scikit-learn's ``average_precision_score``: each positive of a tie group gets the precision of
  the whole group, independent of input order. ``'stable_sort'`` ranks tied entries in input
  order (lower sample index first down a column, lower class index first along a row), as code
  taking AP straight from a stable ``argsort``.
* top-k (:func:`topk_predictions`): exactly k labels; among scores tied at the k-th place the
  lower class indices are predicted.
* oracle top-k (:func:`oracle_topk_predictions`, L2D): scores strictly above the
  ``(k_i + 1)``-th largest are predicted, so a tie at that place predicts none of the tied
  entries (fewer than ``k_i`` labels), as L2D's code.
* threshold (:func:`threshold_predictions`): ``score >= thr``; no ranking, no ties.
* Ignored entries (target ``< 0``) take no rank in AP and are ranked last (-inf) by both top-k
  rules.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

__all__ = [
    'average_precision',
    'sample_average_precision',
    'mean_average_precision',
    'mean_of_ap',
    'check_ap_policies',
    'threshold_predictions',
    'topk_predictions',
    'oracle_topk_predictions',
    'confusion_counts',
    'prf_from_counts',
    'multilabel_prf',
    'EmptyPolicy',
    'TiePolicy',
    'CF1Mode',
    'Convention',
    'CF1_MODES',
]

EmptyPolicy = Literal['zero', 'exclude']
TiePolicy = Literal['grouped', 'stable_sort']
CF1Mode = Literal['harmonic', 'mean_of_class_f1']
Convention = Literal['threshold', 'topk', 'oracle_topk']

_CF1_ALIASES = {
    'harmonic': 'harmonic',
    'harmonic_of_means': 'harmonic',
    'mean_of_class_f1': 'mean_of_class_f1',
    'macro': 'mean_of_class_f1',
}
#: Every accepted ``cf1_mode`` (canonical names and their aliases).
CF1_MODES = tuple(_CF1_ALIASES)


def check_finite_scores(scores: Tensor) -> None:
    """Refuse NaN / inf scores: sorting would rank them as numbers and report a plausible mAP.

    Raises:
        ValueError: with the number of non-finite scores and the ``(sample, class)`` position of
            the first one.
    """
    if not scores.is_floating_point():
        return
    bad = ~torch.isfinite(scores)
    if bad.any():
        first = [int(i) for i in bad.nonzero()[0]]
        raise ValueError(
            f'{int(bad.sum())} of {scores.numel()} scores are NaN or infinite (first at '
            f'[sample, class] = {first}: {scores[tuple(first)].item()}); the model produced '
            'non-finite outputs (diverged training or non-finite weights), metrics would be '
            'meaningless'
        )


def _check_pair(scores: Tensor, targets: Tensor) -> None:
    if scores.dim() != 2 or scores.shape != targets.shape:
        raise ValueError(
            'scores and targets must both be 2-D with the same shape, got '
            f'{tuple(scores.shape)} and {tuple(targets.shape)}'
        )
    check_finite_scores(scores)


def _target_code(targets: Tensor) -> Tensor:
    """Map any target encoding to int8 ``{1 pos, 0 neg, -1 ignored}``.

    int8 keeps the gather that follows the sort cheap: it moves 1 byte per entry instead of 4-8.
    """
    if targets.dtype == torch.bool:
        return targets.to(torch.int8)
    return torch.sign(targets).to(torch.int8)


def _float_scores(scores: Tensor) -> Tensor:
    # Half precision would create ties that the model's fp32 output does not have.
    if not scores.is_floating_point() or scores.dtype in (torch.float16, torch.bfloat16):
        return scores.float()
    return scores


def _ap_along_rows(scores: Tensor, code: Tensor, tie_policy: str) -> tuple[Tensor, Tensor]:
    """AP of every row of ``scores [M, L]`` (ranking along dim 1).

    Args:
        scores: ``[M, L]`` float scores.
        code: ``[M, L]`` int8 targets, 1 / 0 / -1.
        tie_policy: ``'grouped'`` or ``'stable_sort'`` (see :func:`average_precision`).

    Returns:
        ``(ap [M] float64, num_pos [M] int64)``; rows without positives get AP 0.

    AP = (1/n⁺) Σ over positives i of precision at the threshold s_i, where precision at a
    threshold counts every valid entry with score ≥ s_i (grouped ties) or every valid entry
    ranked at or before i (stable sort).
    """
    num_rows, length = scores.shape
    if length == 0:  # nothing to rank: every row is empty
        zeros = torch.zeros(num_rows, dtype=torch.int64, device=scores.device)
        return zeros.to(torch.float64), zeros
    # Positive and valid counts are packed into one integer (pos * K + valid) so that a single
    # cumsum and a single cummax carry both; int32 halves memory traffic when it cannot overflow.
    base = length + 1
    dtype = torch.int32 if base * base < 2**31 - 1 else torch.int64

    if tie_policy == 'grouped':
        # Ascending order: "entries with score >= s_i" is then everything from the first member of
        # i's tie group to the end, i.e. total - (count strictly before the group's first row).
        sorted_scores, order = torch.sort(scores, dim=1)
    else:  # 'stable_sort'
        # Descending stable order: ties keep their input order and each row is its own threshold.
        sorted_scores, order = torch.sort(scores, dim=1, descending=True, stable=True)

    ranked = code.gather(1, order)
    pos = ranked > 0
    # Only positives contribute to AP, so their flat positions (row by row) are all that is
    # decoded at the end; an index_select on them is much cheaper than a masked_select.
    pos_index = pos.view(-1).nonzero().squeeze(1)
    # {-1, 0, 1} -> {0, 1, K + 1}, all in place on one buffer.
    packed = ranked.to(dtype).add_(1).masked_fill_(pos, base + 1)
    del ranked
    inclusive = packed.cumsum(1, dtype=dtype)
    totals = inclusive[:, -1:].clone()  # the in-place steps below reuse `inclusive`

    if tie_policy == 'grouped':
        # First row of each tie group, found by comparing neighbours (no second sort, no loop).
        not_start = torch.empty_like(pos)
        not_start[:, :1] = False
        torch.eq(sorted_scores[:, 1:], sorted_scores[:, :-1], out=not_start[:, 1:])
        del sorted_scores
        exclusive = inclusive.sub_(packed)  # counts strictly before each row, in place
        # The exclusive counts are non-decreasing along a row, so a running maximum of their
        # values at group starts forwards the group's start value to every member.
        exclusive.masked_fill_(not_start, 0)
        del not_start
        # Reuse the dead `packed` and sort-index buffers as cummax outputs: fresh 10-25 MB
        # tensors cost page faults comparable to the scan itself.
        at_start, _ = torch.cummax(exclusive, dim=1, out=(packed, order))
        del exclusive, order
        above = at_start.neg_().add_(totals).view(-1).index_select(0, pos_index)
    else:
        del sorted_scores, order
        above = inclusive.view(-1).index_select(0, pos_index)

    above = above.to(torch.int64)
    tp = torch.div(above, base, rounding_mode='floor')
    counted = above - tp * base
    ratios = tp.to(torch.float64) / counted.to(torch.float64)

    # pos_index lists the positives row by row, so per-row sums are differences of one
    # float64 prefix sum taken at the row boundaries.
    num_pos = torch.div(totals.squeeze(1).to(torch.int64), base, rounding_mode='floor')
    prefix = ratios.new_zeros(ratios.numel() + 1)
    torch.cumsum(ratios, 0, out=prefix[1:])
    ends = num_pos.cumsum(0)
    sums = prefix[ends] - prefix[ends - num_pos]
    ap = sums / num_pos.clamp(min=1).to(torch.float64)
    return ap, num_pos


def check_ap_policies(empty_policy: str, tie_policy: str) -> None:
    """Raise a ValueError naming ``empty_policy`` or ``tie_policy`` if it is not a known policy."""
    if empty_policy not in ('zero', 'exclude'):
        raise ValueError(f"empty_policy must be 'zero' or 'exclude', got {empty_policy!r}")
    if tie_policy not in ('grouped', 'stable_sort'):
        raise ValueError(f"tie_policy must be 'grouped' or 'stable_sort', got {tie_policy!r}")


def _apply_empty_policy(ap: Tensor, num_pos: Tensor, empty_policy: str) -> Tensor:
    if empty_policy == 'exclude':
        return ap.masked_fill(num_pos == 0, math.nan)
    return ap  # 'zero'


def _row_average_precision(
    scores: Tensor, targets: Tensor, empty_policy: str, tie_policy: str
) -> Tensor:
    """AP of every row of checked ``scores`` / ``targets`` ``[M, L]``, empty rows by policy."""
    check_ap_policies(empty_policy, tie_policy)
    scores = _float_scores(scores.detach()).contiguous()
    code = _target_code(targets.detach()).to(scores.device).contiguous()
    ap, num_pos = _ap_along_rows(scores, code, tie_policy)
    return _apply_empty_policy(ap, num_pos, empty_policy)


def average_precision(
    scores: Tensor,
    targets: Tensor,
    empty_policy: EmptyPolicy = 'zero',
    tie_policy: TiePolicy = 'grouped',
) -> Tensor:
    """Per-class non-interpolated average precision (ranking down each column).

    Args:
        scores: ``[N, C]`` scores (logits or probabilities; only the order matters).
        targets: ``[N, C]``; ``> 0`` positive, ``0`` negative, ``< 0`` ignored (removed from the
            ranking and from every count, so the result equals AP on the filtered column).
        empty_policy: what a class without positives gets. ``'zero'``: AP = 0 and it counts in the
            mean (scikit-learn >= 1.1, L2D, mmpretrain). ``'exclude'``: AP = NaN, which
            :func:`mean_of_ap` skips (Two-way).
        tie_policy: ``'grouped'``: tied scores form one threshold, exactly like scikit-learn's
            ``average_precision_score``, so the result does not depend on input order.
            ``'stable_sort'``: every entry is its own threshold in a stable descending sort (ties
            ranked by input order: the lower sample index first), like code bases that take AP
            straight from ``argsort``.

    Returns:
        ``[C]`` float64 AP in ``[0, 1]`` (NaN for empty classes under ``'exclude'``).
    """
    _check_pair(scores, targets)
    # The columns are the rows of the transposes: sorting along the contiguous last dimension is
    # cheaper than along dim 0, and the transposes cost ~1 % of the sort.
    return _row_average_precision(scores.t(), targets.t(), empty_policy, tie_policy)


def sample_average_precision(
    scores: Tensor,
    targets: Tensor,
    empty_policy: EmptyPolicy = 'exclude',
    tie_policy: TiePolicy = 'grouped',
) -> Tensor:
    """Per-sample AP (ranking the classes of each image), the basis of mAP@sample.

    Args:
        scores: ``[N, C]`` scores.
        targets: ``[N, C]`` targets, encoded as in :func:`average_precision`.
        empty_policy: default ``'exclude'``: samples without a positive get NaN and drop out of
            the mean, as in the Two-way code; ``'zero'`` gives them 0.
        tie_policy: as in :func:`average_precision`; ``'stable_sort'`` ranks tied classes of an
            image by class index (the lower first).

    Returns:
        ``[N]`` float64 AP in ``[0, 1]`` (NaN for excluded samples).
    """
    _check_pair(scores, targets)
    return _row_average_precision(scores, targets, empty_policy, tie_policy)


def mean_of_ap(ap: Tensor) -> float:
    """``100 × mean`` of an AP vector, skipping NaN (excluded) entries; NaN if all are excluded."""
    valid = ~torch.isnan(ap)
    if not bool(valid.any()):
        return math.nan
    return float(ap[valid].mean()) * 100.0


def mean_average_precision(
    scores: Tensor,
    targets: Tensor,
    empty_policy: EmptyPolicy = 'zero',
    tie_policy: TiePolicy = 'grouped',
) -> float:
    """mAP (mAP@class) in percent: ``100 × mean`` over the valid classes of
    :func:`average_precision`. ``scores``/``targets``: ``[N, C]``. Tied scores follow
    ``tie_policy`` (default ``'grouped'``: one threshold per tie group, as scikit-learn)."""
    return mean_of_ap(average_precision(scores, targets, empty_policy, tie_policy))


# ---------------------------------------------------------------------------------------------
# Prediction rules. Each returns a bool mask [N, C]; ignored targets are handled by the counts.
# ---------------------------------------------------------------------------------------------


def threshold_predictions(scores: Tensor, thr: float | Tensor = 0.5) -> Tensor:
    """``scores [N, C]`` (probabilities) → bool ``[N, C]``, predicting ``score >= thr``; ``thr``
    is one number or one per class (``[C]``, e.g. :mod:`mlkd.evaluation.thresholds`)."""
    check_finite_scores(scores)
    return scores >= thr


def _rank_scores(scores: Tensor, targets: Tensor | None) -> Tensor:
    # Ignored entries never count, so a top-k slot spent on one would silently shrink k; sending
    # them to -inf ranks them last instead.
    check_finite_scores(scores)
    scores = _float_scores(scores)
    if targets is None:
        return scores
    return scores.masked_fill(targets < 0, -math.inf)


def topk_predictions(scores: Tensor, k: int = 3, targets: Tensor | None = None) -> Tensor:
    """Predict the ``k`` highest scores of every image (the papers' "top-3" rows).

    Args:
        scores: ``[N, C]`` scores.
        k: labels predicted per image (clamped to C). Exactly k labels are predicted: among
            scores tied at the k-th place the lower class indices win (a stable descending sort;
            ``torch.topk`` leaves the choice unspecified, and it may differ between devices).
        targets: optional ``[N, C]`` targets; entries ``< 0`` (ignored) are ranked last so the k
            predictions go to scored entries.

    Returns:
        bool ``[N, C]``.
    """
    k = min(int(k), scores.shape[1])
    pred = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)
    if k <= 0:
        return pred
    order = torch.sort(_rank_scores(scores, targets), dim=1, descending=True, stable=True).indices
    return pred.scatter_(1, order[:, :k], True)


def oracle_topk_predictions(scores: Tensor, targets: Tensor) -> Tensor:
    """L2D's oracle top-k rule: image i predicts its ``k_i`` highest scores.

    ``k_i`` is the number of positives of image i (ignored entries do not count). Following the
    reference (methods.md §6.2), ``thr_i`` is the ``(k_i + 1)``-th largest score of image i and
    every score **strictly greater** than ``thr_i`` is predicted, so exactly ``k_i`` labels are
    predicted without ties and fewer with a tie at the threshold (none of the entries tied with
    the ``(k_i + 1)``-th score is predicted). ``k_i = 0`` predicts nothing;
    ``k_i`` equal to the number of ranked entries predicts all of them (the reference raises
    IndexError there). Ignored entries are ranked last (-inf) and so are never predicted.

    Args:
        scores: ``[N, C]`` scores.
        targets: ``[N, C]`` targets (``> 0`` positive, ``< 0`` ignored).

    Returns:
        bool ``[N, C]``.
    """
    _check_pair(scores, targets)
    num_classes = scores.shape[1]
    ranked = _rank_scores(scores, targets)
    k = (targets > 0).sum(1)
    if num_classes == 0 or scores.shape[0] == 0:
        return torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)
    # Only the (max k + 1) largest scores are needed, so topk beats a full row sort.
    depth = min(int(k.max()) + 1, num_classes)
    top = torch.topk(ranked, depth, dim=1, sorted=True).values
    thr = top.gather(1, k.clamp(max=depth - 1).unsqueeze(1))
    # k_i = C: there is no (C+1)-th score, so every entry is predicted.
    thr = thr.masked_fill((k >= num_classes).unsqueeze(1), -math.inf)
    return ranked > thr


# ---------------------------------------------------------------------------------------------
# Counts and precision / recall / F1.
# ---------------------------------------------------------------------------------------------


def confusion_counts(pred: Tensor, targets: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per-class TP, FP, FN.

    Args:
        pred: bool ``[N, C]`` predictions.
        targets: ``[N, C]`` targets; entries ``< 0`` are ignored (counted nowhere).

    Returns:
        ``(tp, fp, fn)``, each int64 ``[C]``.
    """
    _check_pair(pred, targets)
    pos = targets > 0
    neg = targets == 0
    tp = (pred & pos).sum(0)
    fp = (pred & neg).sum(0)
    fn = pos.sum(0) - tp
    return tp, fp, fn


def _safe_div(num: Tensor, den: Tensor) -> Tensor:
    # 0/0 policy: an undefined ratio is 0 (scikit-learn's zero_division default).
    num = num.to(torch.float64)
    den = den.to(torch.float64)
    return torch.where(den > 0, num / den.clamp(min=1e-300), torch.zeros_like(num))


def prf_from_counts(
    tp: Tensor, fp: Tensor, fn: Tensor, cf1_mode: CF1Mode = 'harmonic'
) -> dict[str, float]:
    """CP, CR, CF1, OP, OR, OF1 (percent) from per-class counts.

    * ``CP = mean_c TP_c / (TP_c + FP_c)``, ``CR = mean_c TP_c / (TP_c + FN_c)``.
    * ``cf1_mode='harmonic'`` (alias ``'harmonic_of_means'``; ML-GCN / ASL papers):
      ``CF1 = 2·CP·CR / (CP + CR)``. ``'mean_of_class_f1'`` (alias ``'macro'``; L2D's code,
      scikit-learn macro F1): ``CF1 = mean_c 2TP_c / (2TP_c + FP_c + FN_c)``.
    * ``OP = ΣTP / Σ(TP + FP)``, ``OR = ΣTP / Σ(TP + FN)``,
      ``OF1 = 2·OP·OR / (OP + OR) = 2ΣTP / (2ΣTP + ΣFP + ΣFN)`` (micro F1).

    0/0 policy: every undefined ratio is 0 and still counts in its mean (a class that is never
    predicted has precision 0, a class without positives has recall 0, an F1 with
    ``2TP + FP + FN = 0`` is 0, and CF1 = 0 when CP + CR = 0). This matches scikit-learn's
    ``zero_division`` default and mmpretrain's clamped denominators.

    Args:
        tp, fp, fn: int ``[C]`` counts.
        cf1_mode: see above.

    Returns:
        dict with keys ``CP, CR, CF1, OP, OR, OF1`` (floats, percent).
    """
    mode = _CF1_ALIASES.get(cf1_mode)
    if mode is None:
        raise ValueError(f'unknown cf1_mode {cf1_mode!r}; use one of {sorted(_CF1_ALIASES)}')
    cp = float(_safe_div(tp, tp + fp).mean()) if tp.numel() else 0.0
    cr = float(_safe_div(tp, tp + fn).mean()) if tp.numel() else 0.0
    if mode == 'harmonic':
        cf1 = 2 * cp * cr / (cp + cr) if cp + cr > 0 else 0.0
    else:
        cf1 = float(_safe_div(2 * tp, 2 * tp + fp + fn).mean()) if tp.numel() else 0.0
    stp, sfp, sfn = int(tp.sum()), int(fp.sum()), int(fn.sum())
    op = stp / (stp + sfp) if stp + sfp > 0 else 0.0
    orec = stp / (stp + sfn) if stp + sfn > 0 else 0.0
    of1 = 2 * stp / (2 * stp + sfp + sfn) if stp > 0 else 0.0
    return {
        name: value * 100.0
        for name, value in (
            ('CP', cp),
            ('CR', cr),
            ('CF1', cf1),
            ('OP', op),
            ('OR', orec),
            ('OF1', of1),
        )
    }


def multilabel_prf(
    scores: Tensor,
    targets: Tensor,
    convention: Convention = 'threshold',
    thr: float | Tensor = 0.5,
    k: int = 3,
    cf1_mode: CF1Mode = 'harmonic',
) -> dict[str, float]:
    """CP, CR, CF1, OP, OR, OF1 (percent) under one prediction convention.

    Args:
        scores: ``[N, C]`` probabilities.
        targets: ``[N, C]`` targets (``> 0`` pos, ``0`` neg, ``< 0`` ignored).
        convention: ``'threshold'`` (score >= thr), ``'topk'`` (k per image) or ``'oracle_topk'``
            (k_i = number of positives of image i, L2D).
        thr: threshold of the ``'threshold'`` convention: one number, or ``[C]`` (one per class).
        k: k of the ``'topk'`` convention.
        cf1_mode: see :func:`prf_from_counts`.
    """
    if convention == 'threshold':
        pred = threshold_predictions(scores, thr)
    elif convention == 'topk':
        pred = topk_predictions(scores, k, targets)
    elif convention == 'oracle_topk':
        pred = oracle_topk_predictions(scores, targets)
    else:
        raise ValueError(
            f"convention must be 'threshold', 'topk' or 'oracle_topk', got {convention!r}"
        )
    return prf_from_counts(*confusion_counts(pred, targets), cf1_mode=cf1_mode)
