"""Never write a checkpoint of NaN / inf or exploded weights, and never start from a broken
teacher.

The checks of each training step live where the step happens: an mlkd algorithm's
``parse_losses`` checks its loss terms (``model.loss_guard``,
:mod:`mlkd.models.algorithms.loss_guard`) and :class:`~mlkd.engine.optimizers.GuardedOptimWrapper`
the gradients (and the total loss of models without a guard of their own). This hook adds what
only the runner sees: the weights just before a checkpoint is written, and the teacher before the
first step.
"""

from __future__ import annotations

import torch
from mmengine.hooks import CheckpointHook, Hook

from mlkd.models.algorithms.loss_guard import (
    DivergedTrainingError,
    NonFiniteTrainingError,
    any_rank,
)
from mlkd.models.utils import unwrap_model
from mlkd.models.weights import non_finite_keys, show_keys
from mlkd.registry import HOOKS


@HOOKS.register_module()
class NonFiniteGuardHook(Hook):
    """Fail fast on NaN / inf weights instead of checkpointing garbage.

    * **Weights before a checkpoint**: before ``CheckpointHook`` (lower priority) rotates old
      checkpoints and saves, every parameter and buffer is checked, so rotation never deletes the
      last finite checkpoint for a non-finite one; trainable weights whose norm grew above
      ``weight_growth_factor`` times their norm when this process started training (after
      ``--resume``: the resumed weights', as the loss guard's reference) stop it too
      (:class:`~mlkd.models.algorithms.DivergedTrainingError`), so that a step that exploded just
      before a checkpoint is not saved (nor rotates a good one away).
    * **Teacher at start-up**: a distiller's teacher (``model.teacher``, or each of
      ``model.teachers``) with non-finite weights,
      or non-finite outputs on a probe batch of zeros of ``probe_input_size``, fails before the
      first step.

    The losses and gradients of every step are checked by the model's ``parse_losses`` and the
    optimizer wrapper (module doc); validation metrics refuse non-finite scores by themselves
    (:func:`mlkd.evaluation.metrics.functional.check_finite_scores`).

    Args:
        weight_growth_factor: how many times their starting norm (L2, over every trainable
            parameter) the weights may reach at a checkpoint; ``None`` switches the check off.
    """

    priority = 'ABOVE_NORMAL'

    def __init__(self, weight_growth_factor: float | None = 1e3) -> None:
        if weight_growth_factor is not None and not weight_growth_factor > 1:
            raise ValueError(
                f'weight_growth_factor must be > 1 (or None to switch the check '
                f'off), got {weight_growth_factor!r}'
            )
        self.weight_growth_factor = weight_growth_factor
        self._start_weight_norm: float | None = None

    def before_train(self, runner) -> None:
        model = unwrap_model(runner.model)
        self._check_teacher(model)
        self._start_weight_norm = self._trainable_norm(model)

    @staticmethod
    def _where(runner, epoch_done: bool = False) -> str:
        # After an epoch the loop has counted its last iteration already.
        iteration = runner.iter if epoch_done else runner.iter + 1
        return (
            f'epoch {runner.epoch + 1}, iteration {iteration} (1-based; work dir {runner.work_dir})'
        )

    @staticmethod
    def _trainable_norm(model: torch.nn.Module) -> float:
        norms = [p.detach().float().norm() for p in model.parameters() if p.requires_grad]
        return float(torch.stack(norms).norm()) if norms else 0.0

    def _check_weights(self, runner, when: str, epoch_done: bool = False) -> None:
        model = unwrap_model(runner.model)
        bad = non_finite_keys(model.state_dict().items())
        norm = self._trainable_norm(model)
        grew = (
            self.weight_growth_factor is not None
            and bool(self._start_weight_norm)
            and norm > self.weight_growth_factor * self._start_weight_norm
        )
        any_bad, any_grew = any_rank((bool(bad), grew), next(model.parameters()).device)
        if any_bad:
            raise NonFiniteTrainingError(
                f'non-finite weights {when} at {self._where(runner, epoch_done)}: '
                f'{show_keys(bad, 5) if bad else "on another rank"}; no checkpoint was written and '
                'none was rotated away.'
            )
        if any_grew:
            raise DivergedTrainingError(
                f'diverged weights {when} at {self._where(runner, epoch_done)}: the norm of the '
                'trainable weights '
                + (
                    f'grew from {self._start_weight_norm:.4g} when this process started '
                    f'training to '
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
        teachers = {}
        if isinstance(getattr(model, 'teacher', None), torch.nn.Module):
            teachers['model.teacher_ckpt'] = (model.teacher, getattr(model, 'teacher_ckpt', None))
        for name, teacher in getattr(model, 'teachers', {}).items():  # a multi-teacher distiller
            ckpt = getattr(model, 'teacher_ckpts', {}).get(name)
            teachers[f'model.teachers.{name}.ckpt'] = (teacher, ckpt)
        for key, (teacher, source) in teachers.items():
            self._check_one_teacher(teacher, f'{key}={source!r}', model)

    @staticmethod
    def _check_one_teacher(teacher: torch.nn.Module, source: str, model) -> None:
        bad = non_finite_keys(teacher.state_dict().items())
        if bad:
            raise NonFiniteTrainingError(
                f'the teacher ({source}) has non-finite weights: '
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
                f'the teacher ({source}) gives non-finite outputs on a '
                f'probe batch of zeros {tuple(size)}: {show_keys(bad, 5)}'
            )
