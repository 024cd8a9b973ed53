"""One-cycle schedules: the learning rate under per-group multipliers, and the momentum (Adam β1).

:class:`OneCycleLRWithMultipliers` is MMEngine's ``OneCycleLR`` with each parameter group's peak
scaled by that group's learning-rate multiplier (``paramwise_cfg`` ``lr_mult``). MMEngine's
``OneCycleLR`` sets the same absolute learning rate on every group at every step, so a multiplier
(ROLE's 10x label-estimate rate, a 0.1x backbone) silently had no effect.

ASL and L2D train with ``torch.optim.lr_scheduler.OneCycleLR`` whose default ``cycle_momentum``
moves Adam's β1 from ``max_momentum`` (0.95) down to ``base_momentum`` (0.85) while the learning
rate warms up and back to 0.95 while it anneals. MMEngine's ``OneCycleLR`` schedules the learning
rate only; :class:`OneCycleMomentum` adds the β1 (or SGD momentum) half with the same phase
boundaries, so the pair reproduces torch's trajectories exactly (tested against torch).
"""

from __future__ import annotations

import math

from mmengine.optim.scheduler.lr_scheduler import OneCycleLR
from mmengine.optim.scheduler.momentum_scheduler import MomentumSchedulerMixin
from mmengine.optim.scheduler.param_scheduler import INF, _ParamScheduler

from mlkd.registry import PARAM_SCHEDULERS


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


def lr_multipliers(optimizer) -> list[float]:
    """Each parameter group's learning rate divided by the optimizer's base learning rate.

    MMEngine's ``DefaultOptimWrapperConstructor`` gives a group with ``lr_mult`` (or
    ``bias_lr_mult``...) the rate ``base_lr * lr_mult`` and keeps no multiplier in the group, so
    the multiplier is read back as that ratio. A scheduler built earlier in the list may have
    changed ``lr`` already; it saved the configured rate as ``initial_lr`` first, which is used
    then. ``--auto-scale-lr`` scales the groups' rates but not the base rate, so its factor is
    part of every ratio (and scales the one-cycle peak, as it scales any other schedule).

    Args:
        optimizer: a torch optimizer or an MMEngine ``OptimWrapper``.

    Raises:
        ValueError: if the base learning rate is missing or zero (no ratio exists).
    """
    inner = getattr(optimizer, 'optimizer', optimizer)
    base_lr = inner.defaults.get('lr')
    if not base_lr:
        raise ValueError(
            f'{type(inner).__name__} has base learning rate {base_lr!r}: the '
            'per-group multipliers (group lr / base lr) are undefined; set '
            'optim_wrapper.optimizer.lr to a positive value'
        )
    return [group.get('initial_lr', group['lr']) / base_lr for group in optimizer.param_groups]


@PARAM_SCHEDULERS.register_module()
class OneCycleLRWithMultipliers(OneCycleLR):
    """MMEngine's ``OneCycleLR`` whose peak for each parameter group is ``eta_max * lr_mult``.

    Every group follows the same one-cycle shape (warm-up from ``peak / div_factor`` to the peak,
    annealing to ``peak / div_factor / final_div_factor``) with its own peak, so the ratio of two
    groups' learning rates is their multipliers' ratio at every step. A group without a
    multiplier (group lr == base lr) gets exactly ``eta_max``: without ``lr_mult`` the schedule
    is bit-identical to ``OneCycleLR`` (tested).

    Args:
        optimizer: the (wrapped) optimizer; its groups' multipliers are read at construction
            (:func:`lr_multipliers`).
        eta_max: the peak learning rate of a group with multiplier 1 (one float).
        **kwargs: the other arguments of MMEngine's ``OneCycleLR`` (``total_steps``,
            ``pct_start``, ``div_factor``, ``final_div_factor``, ``three_phase``, ``begin``,
            ``end``, ``by_epoch``...).
    """

    def __init__(self, optimizer, eta_max: float = 0, **kwargs) -> None:
        if isinstance(eta_max, (list, tuple)):
            raise ValueError(
                'OneCycleLRWithMultipliers takes one eta_max (the peak at lr_mult 1) '
                f"and derives each group's peak from its multiplier; got {eta_max!r}"
            )
        peaks = [eta_max * multiplier for multiplier in lr_multipliers(optimizer)]
        super().__init__(optimizer, eta_max=peaks, **kwargs)


@PARAM_SCHEDULERS.register_module()
class OneCycleMomentum(MomentumSchedulerMixin, _ParamScheduler):
    """Cycle momentum (Adam β1) inversely to the one-cycle learning rate.

    Phase 1 (the learning-rate warm-up, ``pct_start * total_steps`` steps): ``max_momentum`` →
    ``base_momentum``; phase 2: back to ``max_momentum`` at ``total_steps - 1``. Same phase
    boundaries and annealing function as torch's ``OneCycleLR``.

    Args:
        optimizer: the (wrapped) optimizer; Adam-type optimizers have their β1 scheduled.
        base_momentum: momentum at the peak of the learning rate.
        max_momentum: momentum at the start and the end of the cycle.
        total_steps: length of the cycle; with ``by_epoch=True`` and ``convert_to_iter_based``
            in the config it is given in epochs and converted to iterations.
        pct_start: fraction of the cycle spent in phase 1.
        anneal_strategy: 'cos' or 'linear'.
    """

    def __init__(
        self,
        optimizer,
        base_momentum: float = 0.85,
        max_momentum: float = 0.95,
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = 'cos',
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if total_steps is None:
            if end == INF:
                raise ValueError('OneCycleMomentum needs `total_steps` or a finite `end`')
            total_steps = end - begin
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f'`total_steps` must be a positive int, got {total_steps!r}')
        if not 0.0 <= float(pct_start) <= 1.0:
            raise ValueError(f'`pct_start` must be in [0, 1], got {pct_start!r}')
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError(
                f"`anneal_strategy` must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self.total_steps = total_steps
        self.base_momentum = base_momentum
        self.max_momentum = max_momentum
        self.warmup_end = float(pct_start * total_steps) - 1
        self.anneal = _anneal_cos if anneal_strategy == 'cos' else _anneal_linear
        super().__init__(
            optimizer, begin=begin, end=end, last_step=last_step, by_epoch=by_epoch, verbose=verbose
        )

    @classmethod
    def build_iter_from_epoch(
        cls, *args, begin=0, end=INF, total_steps=None, by_epoch=True, epoch_length=None, **kwargs
    ):
        """Convert an epoch-based config (``total_steps`` in epochs) to per-iteration steps."""
        if not by_epoch:
            raise ValueError('only epoch-based configs can be converted to iteration-based')
        if not epoch_length or epoch_length <= 0:
            raise ValueError(f'`epoch_length` must be a positive int, got {epoch_length!r}')
        begin = int(begin * epoch_length)
        end = end if end == INF else int(end * epoch_length)
        total_steps = None if total_steps is None else int(total_steps * epoch_length)
        return cls(*args, begin=begin, end=end, total_steps=total_steps, by_epoch=False, **kwargs)

    def momentum_at(self, step: int) -> float:
        """Momentum after ``step`` scheduler steps (step 0 = before the first update)."""
        if step > self.total_steps:
            raise ValueError(
                f'OneCycleMomentum stepped {step} times, past total_steps {self.total_steps}'
            )
        if step <= self.warmup_end:
            return self.anneal(self.max_momentum, self.base_momentum, step / self.warmup_end)
        pct = (step - self.warmup_end) / (self.total_steps - 1 - self.warmup_end)
        return self.anneal(self.base_momentum, self.max_momentum, pct)

    def _get_value(self) -> list[float]:
        value = self.momentum_at(self.last_step)
        return [value for _ in self.optimizer.param_groups]
