"""Refuse a training step whose loss is NaN / inf or has exploded, naming the terms at fault.

A :class:`LossGuard` is called with each step's total loss and its terms before anything is
back-propagated: by an mlkd algorithm's ``parse_losses`` (:class:`~.base.RoutedAlgorithm`, which
knows the terms) and by :class:`~mlkd.engine.optimizers.GuardedOptimWrapper` for a model that does
not guard its own losses (mmpretrain's ``ImageClassifier``: its total is its one term). The
gradients, the weights before a checkpoint and the teacher at start-up are checked by the optimizer
wrapper and :class:`~mlkd.engine.hooks.NonFiniteGuardHook`; every check raises one of the two
errors below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

import torch
from mmengine.dist import all_reduce, is_distributed
from mmengine.logging import MessageHub

from mlkd.models.weights import show_keys

#: The settings of an algorithm's guard when its config names none (``model.loss_guard``).
LOSS_GUARD_DEFAULTS = MappingProxyType(dict(divergence_factor=1e4, reference_iters=10))


class NonFiniteTrainingError(FloatingPointError):
    """A loss, gradient, weight or teacher output became NaN or infinite."""


class DivergedTrainingError(FloatingPointError):
    """The loss or the weights, though finite, grew by orders of magnitude (e.g. a learning rate
    far too high)."""


def training_position() -> str:
    """``'epoch E, iteration I (1-based)'`` of the step being taken, from the runner's message hub
    (mmengine's ``RuntimeInfoHook`` records them before every iteration)."""
    hub = MessageHub.get_current_instance()
    epoch, iteration = hub.get_info('epoch'), hub.get_info('iter')
    if iteration is None:
        return 'an iteration outside a training loop'
    where = f'iteration {iteration + 1} (1-based)'
    return where if epoch is None else f'epoch {epoch + 1}, {where}'


def any_rank(flags: tuple[bool, ...], device: torch.device) -> tuple[bool, ...]:
    """Each flag or'ed over the ranks (one collective for all), so that every rank stops
    together (no collective hangs)."""
    if not is_distributed():
        return flags
    values = torch.tensor([float(flag) for flag in flags], device=device)
    all_reduce(values, op='sum')
    return tuple(bool(value > 0) for value in values.tolist())


class LossDivergence:
    """Tells when a finite loss has exploded: the total exceeds ``factor`` times its level at the
    start of the run.

    The level (the *reference*) is the smallest total loss of the first ``reference_iters``
    iterations this process sees (after ``--resume`` too): an exploding loss is caught from the
    second iteration on, and the reference is a value the run actually reached. Each term keeps
    its own reference so that the error can name the terms that grew. A reference that is not
    positive (a run whose loss starts at 0) switches the check off for that quantity.
    """

    def __init__(self, factor: float, reference_iters: int = 10) -> None:
        if not factor > 1:
            raise ValueError(
                f'divergence_factor must be > 1 (or None to switch the check off), got {factor!r}'
            )
        if reference_iters < 1:
            raise ValueError(f'reference_iters must be >= 1, got {reference_iters!r}')
        self.factor, self.reference_iters = factor, reference_iters
        self.seen = 0
        self.reference: dict[str, float] = {}

    def update(self, total: float, terms: Mapping[str, float]) -> bool:
        """Record one iteration's ``total`` loss and its ``terms``; ``True`` when it diverged."""
        values = {'loss': total, **terms}
        if self.seen < self.reference_iters:
            for key, value in values.items():
                if math.isfinite(value):
                    self.reference[key] = min(value, self.reference.get(key, math.inf))
            self.seen += 1
        return self._grew(self.reference.get('loss'), total)

    def grown_terms(self, terms: Mapping[str, float]) -> list[str]:
        """The terms above ``factor`` times their own reference, the most grown first."""
        grown = [k for k, v in terms.items() if self._grew(self.reference.get(k), v)]
        return sorted(grown, key=lambda k: -terms[k] / self.reference[k])

    def _grew(self, reference: float | None, value: float) -> bool:
        return reference is not None and reference > 0 and value > self.factor * reference


class LossGuard:
    """Checks each step's losses before they are back-propagated.

    * a non-finite term raises :class:`NonFiniteTrainingError` naming it (the total is named only
      when no term is at fault);
    * a total above ``divergence_factor`` times its level at the start of the run
      (:class:`LossDivergence`) raises :class:`DivergedTrainingError` naming the terms that grew.

    Both name the epoch and iteration and list every term's value. Under DDP the decision is
    or'ed over the ranks, so that every rank stops at the same step.

    Args:
        divergence_factor: how many times its starting level the total loss may reach; ``None``
            switches the divergence check off. The default (1e4) is far above any normal
            fluctuation: a run's loss falls from its start.
        reference_iters: the starting level is the smallest total loss of this many first
            iterations.
        config_key: where the guard is configured (named in the errors, e.g.
            ``'model.loss_guard'``).
    """

    def __init__(
        self,
        divergence_factor: float | None = 1e4,
        reference_iters: int = 10,
        config_key: str = 'loss_guard',
    ) -> None:
        self.config_key = config_key
        self.divergence = (
            None
            if divergence_factor is None
            else LossDivergence(divergence_factor, reference_iters)
        )

    @classmethod
    def from_config(cls, cfg: Mapping | None, config_key: str) -> LossGuard | None:
        """``None`` for ``cfg=None`` (switched off), else a guard with ``cfg``'s settings."""
        if cfg is None:
            return None
        unknown = set(cfg) - set(LOSS_GUARD_DEFAULTS)
        if unknown:
            raise TypeError(
                f'{config_key} has unknown key(s) {sorted(unknown)}; known: '
                "'divergence_factor', 'reference_iters'"
            )
        return cls(**{**LOSS_GUARD_DEFAULTS, **cfg}, config_key=config_key)

    def __repr__(self) -> str:
        factor = None if self.divergence is None else self.divergence.factor
        return f'LossGuard(divergence_factor={factor})'

    def __call__(self, loss: torch.Tensor, log_vars: Mapping[str, torch.Tensor]) -> None:
        """Check the total ``loss`` and the scalar ``log_vars`` of one step (``loss`` among them:
        mmengine's ``parse_losses``). One device synchronisation."""
        scalars = torch.stack([v.detach().float().reshape(()) for v in log_vars.values()])
        values = dict(zip(log_vars, scalars.tolist()))
        bad = [key for key, value in values.items() if not math.isfinite(value)]
        if len(bad) > 1 and 'loss' in bad:
            bad.remove('loss')  # the total is non-finite because a term is: name the term
        terms = {k: v for k, v in values.items() if k != 'loss'}
        total = values.get('loss', float(loss.detach()))
        diverged = self.divergence is not None and self.divergence.update(total, terms)
        any_bad, any_diverged = any_rank((bool(bad), diverged), loss.device)
        listed = ', '.join(f'{k}={v:.4g}' for k, v in values.items())
        if any_bad:
            raise NonFiniteTrainingError(
                f'non-finite loss at {training_position()}: '
                f'{show_keys(bad, 5) if bad else "on another rank"}. Losses: {listed}. '
                'Training stopped before this step was applied; the checkpoints written so far '
                'are kept. Lower the learning rate, check the data and the teacher, or resume '
                'from the last checkpoint.'
            )
        if any_diverged:
            raise DivergedTrainingError(
                f'diverging loss at {training_position()}: '
                + (self._growth(total) if diverged else 'on another rank')
                + self._grown(terms)
                + f'. Losses: {listed}. Training stopped before this step was applied; the '
                'checkpoints written so far are kept. The learning rate is likely too high (a '
                "scheduler's eta_max, or optim_wrapper.optimizer.lr): lower it or clip gradients "
                '(optim_wrapper.clip_grad). If such growth is expected, raise '
                f'{self.config_key}.divergence_factor, or set it to None to switch the check off.'
            )

    def _growth(self, total: float) -> str:
        watch = self.divergence
        return (
            f'loss={total:.4g} is more than {watch.factor:g} times its level at the start of the '
            f'run ({watch.reference["loss"]:.4g}, the smallest of the first '
            f'{watch.reference_iters} iterations)'
        )

    def _grown(self, terms: Mapping[str, float]) -> str:
        grown = self.divergence.grown_terms(terms)
        return f'; grown terms: {show_keys(grown, 5)}' if grown else ''
