"""Stop training at the first NaN / inf or exploding loss, before it reaches the weights or a
checkpoint."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

import torch
from mmengine.dist import all_reduce, is_distributed
from mmengine.hooks import CheckpointHook, Hook

from mlkd.models.utils import unwrap_model
from mlkd.models.weights import non_finite_keys, show_keys
from mlkd.registry import HOOKS


class NonFiniteTrainingError(FloatingPointError):
    """A loss, gradient, weight or teacher output became NaN or infinite."""


class DivergedTrainingError(FloatingPointError):
    """The loss or the weights, though finite, grew by orders of magnitude (e.g. a learning rate
    far too high)."""


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


def _any_rank(flags: tuple[bool, ...], device: torch.device) -> tuple[bool, ...]:
    """Each flag or'ed over the ranks (one collective for all), so that every rank stops
    together (no collective hangs)."""
    if not is_distributed():
        return flags
    values = torch.tensor([float(flag) for flag in flags], device=device)
    all_reduce(values, op='sum')
    return tuple(bool(value > 0) for value in values.tolist())


@HOOKS.register_module()
class NonFiniteGuardHook(Hook):
    """Fail fast on NaN / inf instead of training on and checkpointing garbage.

    * **Losses**: the model's ``parse_losses`` is wrapped, so that a non-finite log var
      (``loss_cls``, ``loss_<name>``, ...) stops the run *before* its backward pass and optimizer
      step; the error names the terms, the epoch and the iteration.
    * **Gradients**: the optimizer wrapper's ``step`` is wrapped to refuse non-finite gradients,
      naming the parameters. A float16 run with dynamic loss scaling (``--amp``) is exempt: there
      an overflowing step is skipped by the scaler and the scale lowered, which is normal.
    * **Weights before a checkpoint**: before ``CheckpointHook`` (lower priority) rotates old
      checkpoints and saves, every parameter and buffer is checked, so rotation never deletes the
      last finite checkpoint for a non-finite one.
    * **Teacher at start-up**: a distiller's teacher (``model.teacher``) with non-finite weights,
      or non-finite outputs on a probe batch of zeros of ``probe_input_size``, fails before the
      first step.

    * **Divergence** (finite but exploding, e.g. a learning rate far too high): a total loss
      above ``divergence_factor`` times its level at the start of the run
      (:class:`LossDivergence`) stops the run before its step, like a non-finite one, naming
      the terms that grew; before a checkpoint, trainable weights whose norm grew above
      ``weight_growth_factor`` times their norm at the start stop it too, so that a step that
      exploded just before a checkpoint is not saved (nor rotates a good one away). Both raise
      :class:`DivergedTrainingError`; ``None`` switches either check off.

    Validation metrics refuse non-finite scores by themselves
    (:func:`mlkd.evaluation.metrics.functional.check_finite_scores`).

    Args:
        divergence_factor: how many times its starting level the total loss may reach. The
            default (1e4) is far above any normal fluctuation: a run's loss falls from its start.
        reference_iters: the starting level is the smallest total loss of this many first
            iterations.
        weight_growth_factor: how many times their starting norm (L2, over every trainable
            parameter) the weights may reach at a checkpoint.
    """

    priority = 'ABOVE_NORMAL'

    def __init__(
        self,
        divergence_factor: float | None = 1e4,
        reference_iters: int = 10,
        weight_growth_factor: float | None = 1e3,
    ) -> None:
        self._restore: list[Callable[[], None]] = []
        self._runner = None
        self._divergence_args = (divergence_factor, reference_iters)
        self._divergence = self._new_divergence()  # built here to fail at build on bad values
        if weight_growth_factor is not None and not weight_growth_factor > 1:
            raise ValueError(
                f'weight_growth_factor must be > 1 (or None to switch the check '
                f'off), got {weight_growth_factor!r}'
            )
        self.weight_growth_factor = weight_growth_factor
        self._start_weight_norm: float | None = None

    # ------------------------------------------------------------------ set-up
    def before_train(self, runner) -> None:
        self._runner = runner
        model = unwrap_model(runner.model)
        self._check_teacher(model)
        self._divergence = self._new_divergence()  # the reference is this run's
        self._start_weight_norm = self._trainable_norm(model)
        self._wrap(model, 'parse_losses', self._guarded_parse_losses)
        wrappers = runner.optim_wrapper
        wrappers = list(wrappers.values()) if hasattr(wrappers, 'optim_wrappers') else [wrappers]
        for wrapper in wrappers:
            scaler = getattr(wrapper, 'loss_scaler', None)
            scaled = scaler is not None and (
                not hasattr(scaler, 'is_enabled') or scaler.is_enabled()
            )
            if not scaled:
                self._wrap(wrapper, 'step', self._guarded_step)

    def _new_divergence(self) -> LossDivergence | None:
        factor, reference_iters = self._divergence_args
        return None if factor is None else LossDivergence(factor, reference_iters)

    def after_train(self, runner) -> None:
        for restore in reversed(self._restore):
            restore()
        self._restore.clear()

    def _wrap(self, owner, name: str, make: Callable) -> None:
        original = getattr(owner, name)
        own = name in vars(owner)  # e.g. a param scheduler's step counter on the optim wrapper
        # functools.wraps keeps the marks of an earlier wrapper (the counter's _with_counter).
        setattr(owner, name, functools.wraps(original)(make(original)))

        def restore() -> None:
            if own:
                setattr(owner, name, original)
            else:  # the instance attribute shadowed the class's method
                vars(owner).pop(name, None)

        self._restore.append(restore)

    def _where(self, epoch_done: bool = False) -> str:
        runner = self._runner
        # After an epoch the loop has counted its last iteration already.
        iteration = runner.iter if epoch_done else runner.iter + 1
        return (
            f'epoch {runner.epoch + 1}, iteration {iteration} (1-based; work dir {runner.work_dir})'
        )

    # ------------------------------------------------------------------ checks
    def _guarded_parse_losses(self, parse_losses: Callable) -> Callable:
        def guarded(losses):
            loss, log_vars = parse_losses(losses)
            bad = non_finite_keys(log_vars.items())
            if len(bad) > 1 and 'loss' in bad:
                bad.remove('loss')  # the total is non-finite because a term is: name the term
            terms = {k: float(v.detach()) for k, v in log_vars.items() if k != 'loss'}
            diverged = self._divergence is not None and self._divergence.update(
                float(loss.detach()), terms
            )
            any_bad, any_diverged = _any_rank((bool(bad), diverged), loss.device)
            if any_bad:
                values = ', '.join(f'{k}={float(v.detach()):.4g}' for k, v in log_vars.items())
                raise NonFiniteTrainingError(
                    f'non-finite loss at {self._where()}: '
                    f'{show_keys(bad, 5) if bad else "on another rank"}. Losses: {values}. '
                    'Training stopped before this step was applied; the checkpoints written so '
                    'far are kept. Lower the learning rate, check the data and the teacher, or '
                    'resume from the last checkpoint.'
                )
            if any_diverged:
                self._raise_diverged(loss, log_vars, terms, diverged)
            return loss, log_vars

        return guarded

    def _raise_diverged(
        self, loss: torch.Tensor, log_vars: Mapping, terms: Mapping[str, float], here: bool
    ) -> None:
        reference = self._divergence.reference['loss']
        grown = self._divergence.grown_terms(terms)
        values = ', '.join(f'{k}={float(v.detach()):.4g}' for k, v in log_vars.items())
        raise DivergedTrainingError(
            f'diverging loss at {self._where()}: '
            + (
                f'loss={float(loss.detach()):.4g} is more than {self._divergence.factor:g} times '
                f'its level at the start of the run ({reference:.4g}, the smallest of the first '
                f'{self._divergence.reference_iters} iterations)'
                if here
                else 'on another rank'
            )
            + (f'; grown terms: {show_keys(grown, 5)}' if grown else '')
            + f'. Losses: {values}. Training stopped before this step was applied; the '
            'checkpoints written so far are kept. The learning rate is likely too high (a '
            "scheduler's eta_max, or optim_wrapper.optimizer.lr): lower it or clip gradients "
            '(optim_wrapper.clip_grad). If such growth is expected, raise or switch off '
            'NonFiniteGuardHook(divergence_factor=...) in custom_hooks.'
        )

    @staticmethod
    def _trainable_norm(model: torch.nn.Module) -> float:
        norms = [p.detach().float().norm() for p in model.parameters() if p.requires_grad]
        return float(torch.stack(norms).norm()) if norms else 0.0

    def _guarded_step(self, step: Callable) -> Callable:
        def guarded(**kwargs):
            grads = [
                (name, param.grad)
                for name, param in unwrap_model(self._runner.model).named_parameters()
                if param.grad is not None
            ]
            bad = non_finite_keys(grads)
            if bad:  # DDP has averaged the gradients: every rank sees the same ones
                raise NonFiniteTrainingError(
                    f'non-finite gradient at {self._where()} in {show_keys(bad, 5)}; training '
                    'stopped before the optimizer applied it (the checkpoints written so far '
                    'are kept). Lower the learning rate or clip gradients '
                    '(optim_wrapper.clip_grad).'
                )
            return step(**kwargs)

        return guarded

    def _check_weights(self, runner, when: str, epoch_done: bool = False) -> None:
        model = unwrap_model(runner.model)
        bad = non_finite_keys(model.state_dict().items())
        norm = self._trainable_norm(model)
        grew = (
            self.weight_growth_factor is not None
            and bool(self._start_weight_norm)
            and norm > self.weight_growth_factor * self._start_weight_norm
        )
        any_bad, any_grew = _any_rank((bool(bad), grew), next(model.parameters()).device)
        if any_bad:
            raise NonFiniteTrainingError(
                f'non-finite weights {when} at {self._where(epoch_done)}: '
                f'{show_keys(bad, 5) if bad else "on another rank"}; no checkpoint was written and '
                'none was rotated away.'
            )
        if any_grew:
            raise DivergedTrainingError(
                f'diverged weights {when} at {self._where(epoch_done)}: the norm of the '
                'trainable weights '
                + (
                    f'grew from {self._start_weight_norm:.4g} at the start of the run to '
                    f'{norm:.4g}, more than {self.weight_growth_factor:g} times'
                    if grew
                    else 'grew too much on another rank'
                )
                + '; no checkpoint was written and none was rotated away. The learning rate is '
                'likely too high; if such growth is expected, raise or switch off '
                'NonFiniteGuardHook(weight_growth_factor=...) in custom_hooks.'
            )

    def _checkpoint_due(self, runner, by_epoch: bool) -> bool:
        for hook in runner.hooks:
            if not isinstance(hook, CheckpointHook) or hook.by_epoch != by_epoch:
                continue
            if by_epoch and (
                self.every_n_epochs(runner, hook.interval) or self.is_last_train_epoch(runner)
            ):
                return True
            if not by_epoch and (
                self.every_n_train_iters(runner, hook.interval) or self.is_last_train_iter(runner)
            ):
                return True
        return False

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if self._checkpoint_due(runner, by_epoch=False):
            self._check_weights(runner, 'before saving a checkpoint')

    def after_train_epoch(self, runner) -> None:
        if self._checkpoint_due(runner, by_epoch=True):
            self._check_weights(runner, 'before saving a checkpoint', epoch_done=True)

    def _check_teacher(self, model) -> None:
        teacher = getattr(model, 'teacher', None)
        if not isinstance(teacher, torch.nn.Module):
            return
        source = getattr(model, 'teacher_ckpt', None)
        bad = non_finite_keys(teacher.state_dict().items())
        if bad:
            raise NonFiniteTrainingError(
                f'the teacher (model.teacher_ckpt={source!r}) has non-finite weights: '
                f'{show_keys(bad, 5)}; distilling from it would give NaN losses'
            )
        size = getattr(model, 'probe_input_size', (224, 224))
        device = next(teacher.parameters()).device
        was_training = teacher.training
        teacher.eval()
        with torch.no_grad():
            logits = teacher(torch.zeros(2, 3, *size, device=device), mode='tensor')
        teacher.train(was_training)
        outputs = logits if isinstance(logits, (tuple, list)) else [logits]
        bad = non_finite_keys((f'output {i}', t) for i, t in enumerate(outputs))
        if bad:
            raise NonFiniteTrainingError(
                f'the teacher (model.teacher_ckpt={source!r}) gives non-finite outputs on a '
                f'probe batch of zeros {tuple(size)}: {show_keys(bad, 5)}'
            )
