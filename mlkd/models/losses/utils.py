"""Numerical primitives shared by the logit-distillation losses (each lives here once).

* :func:`binary_kl_with_logits` — elementwise binary KL between two Bernoulli distributions given
  by their logits, through ``logsigmoid`` (finite for any finite logits);
* :func:`masked_logsumexp` — ``log Σ_{a ∈ A} exp(x_a)`` over a masked subset, safe for empty subsets
  in value *and* gradient;
* :func:`reduce_loss` — the reductions used across reference code bases;
* :func:`reduce_valid` — the same over the non-ignored entries of a task loss;
* :func:`label_masks` — positive / negative sets from ``{1, 0, -1}`` targets;
* :func:`check_temperature` — the one validation of a ``temperature`` argument;
* :func:`single_label_index` — the class index of one-hot ``gt`` rows (single-label losses);
* :func:`stage_list` — a feature tensor or a list of stage features as a list;
* :func:`match_spatial` — two feature maps pooled to the smaller one's spatial size;
* :func:`current_epoch` / :func:`warmup_factor` — the epoch-dependent weights of DKD, ReviewKD and
  FitNet's two-stage schedule, read from MMEngine's ``MessageHub``.

Notation follows ``docs/methods.md`` §1: ``σ`` the logistic sigmoid,
``KLb(a‖b) = a log(a/b) + (1−a) log((1−a)/(1−b))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

REDUCTIONS = ('none', 'sum', 'mean', 'batchmean')


def binary_kl_with_logits(target_logits: torch.Tensor, input_logits: torch.Tensor) -> torch.Tensor:
    """Elementwise ``KLb(σ(target_logits) ‖ σ(input_logits))``.

    Computed as ``σ(a)(log σ(a) − log σ(b)) + σ(−a)(log σ(−a) − log σ(−b))`` with every log through
    ``logsigmoid``, so saturated logits (``|z| ≫ 17``, where ``σ`` rounds to 0 or 1 in fp32) stay
    finite, and identical inputs give exactly 0.

    Args:
        target_logits: logits ``a`` of the reference distribution (the teacher), any shape.
        input_logits: logits ``b`` of the approximating distribution (the student), same shape.

    Returns:
        Tensor of the broadcast shape, elementwise non-negative (up to rounding).
    """
    log_p_t = F.logsigmoid(target_logits)
    log_q_t = F.logsigmoid(-target_logits)
    log_p_s = F.logsigmoid(input_logits)
    log_q_s = F.logsigmoid(-input_logits)
    return log_p_t.exp() * (log_p_t - log_p_s) + log_q_t.exp() * (log_q_t - log_q_s)


def masked_logsumexp(x: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """``LSE_A(x) = log Σ_{a: mask_a} exp(x_a)`` along ``dim``.

    Non-members are filled with ``−inf`` before ``torch.logsumexp``. A slice with **no** member
    would give ``−inf`` and NaN gradients; such slices are evaluated on zeros instead and return
    ``0`` (a finite placeholder, no gradient reaches ``x``). Callers must zero the terms of empty
    slices themselves, e.g. with ``mask.any(dim)``.

    Args:
        x: values, e.g. ``[B, C]`` logits.
        mask: bool tensor of the same shape; True marks members of the subset.
        dim: the reduced dimension.

    Returns:
        ``x`` reduced over ``dim``: LSE over members, 0 for empty slices.
    """
    nonempty = mask.any(dim=dim, keepdim=True)
    filled = x.masked_fill(~mask, float('-inf'))
    filled = torch.where(nonempty, filled, torch.zeros_like(x))
    lse = torch.logsumexp(filled, dim=dim, keepdim=True)
    lse = torch.where(nonempty, lse, torch.zeros_like(lse))
    return lse.squeeze(dim)


def reduce_loss(loss: torch.Tensor, reduction: str) -> torch.Tensor:
    """Reduce an elementwise ``[B, ...]`` loss.

    Args:
        loss: elementwise loss, first dimension the batch.
        reduction: ``'none'`` (returned as is), ``'sum'`` (Σ), ``'mean'`` (Σ / numel, e.g. B·C),
            ``'batchmean'`` (Σ / B).

    Raises:
        ValueError: for an unknown reduction.
    """
    if reduction == 'none':
        return loss
    if reduction == 'sum':
        return loss.sum()
    if reduction == 'mean':
        return loss.sum() / max(loss.numel(), 1)
    if reduction == 'batchmean':
        return loss.sum() / max(loss.shape[0] if loss.dim() > 0 else 1, 1)
    raise ValueError(f'reduction must be one of {REDUCTIONS}, got {reduction!r}')


def reduce_valid(loss: torch.Tensor, valid: torch.Tensor, reduction: str) -> torch.Tensor:
    """Reduce an elementwise task loss over its non-ignored entries.

    Args:
        loss: ``[B, C]`` elementwise loss, finite everywhere (ignored entries are zeroed here).
        valid: bool ``[B, C]``, False at ignored (``-1``) targets.
        reduction: ``'sum'`` (Σ over valid entries), ``'mean'`` (that sum / number of valid
            entries; 0 when there are none) or ``'none'`` (``[B, C]``, 0 at ignored entries).

    Returns:
        The reduced loss, connected to ``loss`` even when no entry is valid.
    """
    loss = loss * valid
    if reduction == 'mean':
        return loss.sum() / valid.sum().clamp(min=1)
    return reduce_loss(loss, reduction)


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is in ``choices``; raise a ValueError naming ``name`` otherwise."""
    if value not in choices:
        raise ValueError(f'{name} must be one of {choices}, got {value!r}')
    return value


def check_non_negative(value: float, name: str, owner: str) -> float:
    """Return ``value`` as a float if it is ``>= 0``; raise a ValueError naming ``owner``, ``name``."""
    if not float(value) >= 0:  # also rejects NaN
        raise ValueError(f'{owner}: {name} must be >= 0, got {value}')
    return float(value)


def check_temperature(value: float, name: str = 'temperature') -> float:
    """Return ``value`` as a float if it is a positive temperature; raise a ValueError naming it."""
    value = float(value)
    if not value > 0:  # also rejects NaN
        raise ValueError(f'{name} must be > 0, got {value}')
    return value


def label_masks(gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Positive and negative sets of ``{1, 0, -1}`` targets (``-1``: ignored, in neither set).

    Args:
        gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.

    Returns:
        ``(pos, neg)``: two bool ``[B, C]`` masks, ``gt == 1`` and ``gt == 0``.
    """
    return gt == 1, gt == 0


def single_label_index(gt: torch.Tensor) -> torch.Tensor:
    """Class index of each row of one-hot single-label targets.

    Args:
        gt: ``[B, C]`` targets with exactly one ``1`` per row (other entries 0 or -1).

    Returns:
        ``[B]`` long tensor, the column of each row's ``1``.

    Raises:
        ValueError: if a row has no positive or several (multi-label data given to a single-label
            loss such as DKD).
    """
    if gt.dim() != 2:
        raise ValueError(
            f'gt must be [B, C] one-hot for a single-label loss, got shape {tuple(gt.shape)}'
        )
    positives = gt == 1
    counts = positives.sum(dim=1)
    if bool((counts != 1).any()):
        bad = (counts != 1).nonzero().flatten()[:5]
        raise ValueError(
            f'gt must be [B, C] one-hot (exactly one 1 per row) for a single-label '
            f'loss; rows {bad.tolist()} have {counts[bad].tolist()} positives'
        )
    return positives.to(torch.uint8).argmax(dim=1)


def stage_list(feats: torch.Tensor | Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """``feats`` as a list of stage tensors (a single tensor is one stage)."""
    return [feats] if isinstance(feats, torch.Tensor) else list(feats)


def match_spatial(s_feat: torch.Tensor, t_feat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Average-pool the larger of two ``[B, C, H, W]`` maps to the other's ``(H, W)``."""
    s_size, t_size = s_feat.shape[-2:], t_feat.shape[-2:]
    if s_size == t_size:
        return s_feat, t_feat
    if s_size[0] * s_size[1] > t_size[0] * t_size[1]:
        return F.adaptive_avg_pool2d(s_feat, t_size), t_feat
    return s_feat, F.adaptive_avg_pool2d(t_feat, s_size)


def check_stage_counts(s_feats: list, t_feats: list, loss: str) -> None:
    """Raise a ValueError naming ``loss`` if student and teacher give different stage counts."""
    if len(s_feats) != len(t_feats):
        raise ValueError(f'{loss}: {len(s_feats)} student stages but {len(t_feats)} teacher stages')


def current_epoch() -> int | None:
    """The 0-based epoch MMEngine's ``RuntimeInfoHook`` records in the ``MessageHub``, or None.

    None when no runner has recorded one (a loss used on its own, outside training).
    """
    from mmengine.logging import MessageHub

    epoch = MessageHub.get_current_instance().get_info('epoch')
    return None if epoch is None else int(epoch)


def warmup_factor(warmup_epochs: float, epoch: int | None = None) -> float:
    """Linear warm-up ``min((epoch + 1) / warmup_epochs, 1)`` as in mdistiller (DKD, ReviewKD).

    mdistiller counts epochs from 1 and scales by ``min(epoch / warmup, 1)``; MMEngine counts from
    0, hence the ``+ 1``: the first epoch gets ``1 / warmup_epochs``. ``warmup_epochs <= 0`` means
    no warm-up. Without a recorded epoch (no runner) the factor is 1.

    Args:
        warmup_epochs: length of the ramp in epochs.
        epoch: 0-based epoch; read from the ``MessageHub`` when None.
    """
    if warmup_epochs <= 0:
        return 1.0
    epoch = current_epoch() if epoch is None else epoch
    if epoch is None:
        return 1.0
    return min((epoch + 1) / warmup_epochs, 1.0)
