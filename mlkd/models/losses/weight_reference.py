"""Loss weights that keep their meaning across batch sizes and class counts (``weight_reference``).

A paper's weight ``w`` balances its term against the task loss of the paper's setting. The
unweighted value of a term grows like ``B^a · C^b`` at a fixed per-entry discrepancy
(``scale_exponents = (a, b)``: MLD sums over classes and divides by ``B``: (0, 1); L_PD and L_NDD:
(0, 0); CD and ID sum over the positives of the batch: (1, 0)), while the BCE-sum task loss grows
like ``B · C`` (a mean-reduced task loss does not grow). With
``weight_reference=dict(batch_size=B_ref, num_classes=C_ref)`` the applied weight is

    w · B^(t − a) · C^(t − b) / (B_ref^(1 − a) · C_ref^(1 − b)),   t = 1 (sum) or 0 (mean),

which keeps ``weighted term / task loss`` at its value in the reference setting for the current
batch size ``B`` and class count ``C``, read from the loss's first input (``[B, C, ...]``: the
student logits or label embeddings) at every call. For MultiDigits (C = 10, B = 64, BCE-sum) and
:data:`PAPER_REFERENCE` (B = 64, C = 80) this divides the L_PD, L_NDD, CD and ID weights by 8 and
leaves MLD's unchanged. It is a first-order rule on loss *values*; the gradient ratios it produces
are measured, not assumed (``LossDiagnosticsHook``, docs/diagnosis.md).

A :class:`~mlkd.models.losses.base.RoutedLoss` opts in by deriving from :class:`ReferenceWeighted`
as well and declaring its ``scale_exponents``; the rule itself is :func:`reference_scale`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The setting every weight of the L2D / 3D recipes was tuned in: batch 64, 80 COCO classes, task
#: loss BCE summed over the batch and the classes (docs/methods.md §4.1.1, §4.4.1).
PAPER_REFERENCE = dict(batch_size=64, num_classes=80)
TASK_REDUCTIONS = ('sum', 'mean')


def reference_scale(
    exponents: tuple[float, float], reference: Mapping[str, Any], batch_size: int, num_classes: int
) -> float:
    """Factor on a loss weight tuned in the ``reference`` setting, for a batch of ``batch_size``
    × ``num_classes``, of a term growing like ``B^a · C^b`` (``exponents = (a, b)``; module doc).

    Args:
        exponents: ``(a, b)``.
        reference: ``dict(batch_size=B_ref, num_classes=C_ref, task_reduction='sum' | 'mean')``.
        batch_size, num_classes: ``B`` and ``C`` of the batch.
    """
    a, b = exponents
    t = 1.0 if reference['task_reduction'] == 'sum' else 0.0
    return (
        batch_size ** (t - a)
        * num_classes ** (t - b)
        / (reference['batch_size'] ** (1.0 - a) * reference['num_classes'] ** (1.0 - b))
    )


def check_reference(reference: Mapping | None, owner: str) -> dict | None:
    """``reference`` with ``task_reduction`` filled in (default ``'sum'``), after checking it;
    ``None`` stays ``None``. Raises a ValueError naming ``owner`` and the key at fault."""
    if reference is None:
        return None
    if (
        not isinstance(reference, Mapping)
        or not {'batch_size', 'num_classes'} <= set(reference)
        or not set(reference) <= {'batch_size', 'num_classes', 'task_reduction'}
    ):
        raise ValueError(
            f'{owner}: weight_reference must be None or dict(batch_size=..., '
            f"num_classes=..., task_reduction='sum'|'mean'), got {reference!r}"
        )
    ref = {'task_reduction': 'sum', **reference}
    for key in ('batch_size', 'num_classes'):
        if not isinstance(ref[key], int) or ref[key] < 1:
            raise ValueError(
                f'{owner}: weight_reference.{key} must be a positive int, got {ref[key]!r}'
            )
    if ref['task_reduction'] not in TASK_REDUCTIONS:
        raise ValueError(
            f'{owner}: weight_reference.task_reduction must be one of '
            f'{TASK_REDUCTIONS}, got {ref["task_reduction"]!r}'
        )
    return ref


class ReferenceWeighted:
    """Mixin of a :class:`~mlkd.models.losses.base.RoutedLoss` whose weight may be given for a
    reference setting (``weight_reference``, off by default; module doc).

    Put it before the contract in the bases (``class MLDLoss(ReferenceWeighted, RoutedLoss)``) and
    declare ``scale_exponents = (a, b)``. The loss then takes ``weight_reference`` in its
    constructor and multiplies its weight by :meth:`reference_scale` of the batch's ``B`` and
    ``C``, read from its first input.

    Args:
        loss_weight: factor applied to the value (finite, ``>= 0``).
        weight_reference: ``None`` (the weight is applied literally), or
            ``dict(batch_size=..., num_classes=..., task_reduction='sum' | 'mean')`` where
            ``batch_size`` / ``num_classes`` describe the reference setting (its task loss a BCE
            sum) and ``task_reduction`` this run's task loss (default ``'sum'``).
    """

    #: ``(a, b)`` with the unweighted loss ∝ ``B^a · C^b`` (declared by each loss).
    scale_exponents: tuple[float, float]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        exponents = getattr(cls, 'scale_exponents', None)
        if not (isinstance(exponents, tuple) and len(exponents) == 2):
            raise TypeError(
                f'{cls.__name__}: a ReferenceWeighted loss declares scale_exponents = (a, b), '
                f'got {exponents!r}'
            )

    def __init__(self, loss_weight: float = 1.0, weight_reference: Mapping | None = None) -> None:
        super().__init__(loss_weight)
        self.weight_reference = check_reference(weight_reference, type(self).__name__)

    def reference_scale(self, batch_size: int, num_classes: int) -> float:
        """Factor on ``loss_weight`` for a batch of ``batch_size`` × ``num_classes`` (1 if off)."""
        if self.weight_reference is None:
            return 1.0
        return reference_scale(self.scale_exponents, self.weight_reference, batch_size, num_classes)

    def input_weight(self, inputs: Mapping[str, Any]) -> float:
        # The whole batch under DDP: the task loss's sum stands for it, so must the reference.
        batch_size, num_classes = next(iter(inputs.values())).shape[:2]
        scale = self.reference_scale(self.global_batch_size(batch_size), num_classes)
        return super().input_weight(inputs) * scale

    def extra_repr(self) -> str:
        if self.weight_reference is None:
            return super().extra_repr()
        return f'{super().extra_repr()}, weight_reference={self.weight_reference}'
