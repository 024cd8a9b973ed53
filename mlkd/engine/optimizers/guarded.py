"""An optimizer wrapper that never applies a step of NaN / inf gradients or losses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import torch
from mmengine.logging import print_log
from mmengine.optim import OptimWrapper
from torch import nn

from mlkd.models.algorithms.loss_guard import (
    LOSS_GUARD_DEFAULTS,
    LossGuard,
    NonFiniteTrainingError,
    training_position,
)
from mlkd.models.utils import unwrap_model
from mlkd.models.weights import non_finite_keys, show_keys
from mlkd.registry import OPTIM_WRAPPERS


@OPTIM_WRAPPERS.register_module()
class GuardedOptimWrapper(OptimWrapper):
    """mmengine's ``OptimWrapper`` that refuses to apply a step of non-finite values.

    * **Gradients**: :meth:`step` raises :class:`~mlkd.models.algorithms.NonFiniteTrainingError`
      naming the parameters with a NaN / inf gradient, before the optimizer applies it (and
      before gradient clipping). Under dynamic loss scaling (float16 :class:`MixedPrecision
      OptimWrapper`) an overflowing step is normal: the scaler skips it and lowers the scale, so
      the check is left to the scaler there.
    * **Losses** of a model that does not check its own (mmpretrain's ``ImageClassifier``, whose
      total is its one term, or an mlkd algorithm with ``model.loss_guard=None``):
      :meth:`update_params` applies a :class:`~mlkd.models.algorithms.LossGuard` (NaN / inf,
      divergence) to the total before the backward pass. An mlkd algorithm with a
      ``model.loss_guard`` checks each term in its ``parse_losses``, which runs first and names
      the terms; this one then stands aside (the log says which guard is active).

    The errors name the epoch and iteration (the runner's message hub). The model is the one the
    training step enters :meth:`optim_context` with.

    Args:
        loss_guard: settings of the loss guard for models without their own
            (``divergence_factor``, ``reference_iters``); ``None`` switches it off.
        **kwargs: :class:`mmengine.optim.OptimWrapper` arguments (``optimizer``, ``clip_grad``,
            ``accumulative_counts``).
    """

    def __init__(self, loss_guard: Mapping | None = LOSS_GUARD_DEFAULTS, **kwargs) -> None:
        super().__init__(**kwargs)
        self._init_guard(loss_guard)

    def _init_guard(self, loss_guard: Mapping | None) -> None:
        self.loss_guard = LossGuard.from_config(loss_guard, 'optim_wrapper.loss_guard')
        self._stepped_model: nn.Module | None = None
        self._guard_reported = False

    @contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        self._stepped_model = model
        with super().optim_context(model):
            yield

    def update_params(self, loss: torch.Tensor, step_kwargs=None, zero_kwargs=None) -> None:
        guarded_by_model = self._model_guards_losses()
        if not self._guard_reported:
            self._guard_reported = True
            print_log(
                'losses checked by '
                + (
                    'model.loss_guard (each term; optim_wrapper.loss_guard unused)'
                    if guarded_by_model
                    else f'optim_wrapper.loss_guard={self.loss_guard} (the total)'
                ),
                logger='current',
            )
        if self.loss_guard is not None and not guarded_by_model:
            self.loss_guard(loss, {'loss': loss})
        super().update_params(loss, step_kwargs=step_kwargs, zero_kwargs=zero_kwargs)

    def step(self, **kwargs) -> None:
        if not self._loss_scaling():
            self._check_gradients()
        super().step(**kwargs)

    def _model_guards_losses(self) -> bool:
        model = None if self._stepped_model is None else unwrap_model(self._stepped_model)
        return getattr(model, 'loss_guard', None) is not None

    def _loss_scaling(self) -> bool:
        scaler = getattr(self, 'loss_scaler', None)
        return scaler is not None and (not hasattr(scaler, 'is_enabled') or scaler.is_enabled())

    def _check_gradients(self) -> None:
        if self._stepped_model is not None:
            named = unwrap_model(self._stepped_model).named_parameters()
        else:  # stepped outside a training step: name the parameters by their place
            named = (
                (f'param_groups[{g}][{i}]', p)
                for g, group in enumerate(self.optimizer.param_groups)
                for i, p in enumerate(group['params'])
            )
        bad = non_finite_keys((name, p.grad) for name, p in named if p.grad is not None)
        if bad:  # DDP has averaged the gradients: every rank sees the same ones
            raise NonFiniteTrainingError(
                f'non-finite gradient at {training_position()} in {show_keys(bad, 5)}; training '
                'stopped before the optimizer applied it (the checkpoints written so far are '
                'kept). Lower the learning rate or clip gradients (optim_wrapper.clip_grad).'
            )
