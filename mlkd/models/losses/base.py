"""The three loss contracts of mlkd: :class:`TaskLoss`, :class:`RoutedLoss`, :class:`StatefulLoss`.

Every registered loss derives from **exactly one** of :class:`TaskLoss` (a prediction against the
labels: BCE, ASL, Two-way, AN, ROLE...) or :class:`RoutedLoss` (anything else that reads named
tensors through the loss router: distillation between student and teacher, consistency terms,
contrastive terms on features). A loss that keeps state across steps — per-sample or per-class
buffers that must survive a checkpoint and stay equal on every DDP rank (ROLE's label matrix,
CRD's memory banks, SCL's heatmap store) — derives from :class:`StatefulLoss` as well.

What a subclass writes, for both :class:`TaskLoss` and :class:`RoutedLoss`, is ``compute``: the
*unweighted* value on fp32 inputs, usually one call of the pure tensor function that holds the
math. The contract's ``forward`` does the rest, the same way for every loss:

* casts the floating-point inputs to fp32 and switches autocast off (:func:`full_precision`), so
  a loss runs in fp32 whatever the networks run in;
* multiplies the value by the effective weight, ``loss_weight`` times the loss's epoch schedule
  (:meth:`RoutedLoss.weight_factor`: warm-ups, two-stage schedules) times the loss's
  :meth:`~_LossContract.input_weight` (1, unless a composable weight policy such as
  :class:`~.weight_reference.ReferenceWeighted` says otherwise); a dict value (one entry per
  declared term in ``terms``) gets the same weight on every term;
* for a task loss, the reduction (``reduction`` / ``reduction_override``) and the shape check;
* the world-size scaling of summed losses under DDP (a task loss, or a routed loss whose
  ``reduction`` is ``'sum'``): a per-process sum that DDP averages would give 1/W of the gradient,
  so it is multiplied by W, unless the router gave it the gathered batch (:attr:`inputs_gathered`:
  the sum is then over the whole batch already).

The names of ``compute``'s arguments are the loss's inputs: the router reads them once, at build
time, and supplies the named tensors (``s_logits``, ``t_logits``, ``gt``, ``s_<tap>``,
``sample_idx``... see :mod:`mlkd.models.algorithms.base`). The contract gives each loss class a
``forward`` whose signature is ``compute``'s (for a task loss: the heads' call plus ``compute``'s
further inputs), so ``inspect.signature(loss)``, ``help(loss)`` and the router all see the real
inputs, and a missing or unknown input is a ``TypeError`` naming it. A loss whose value compares the samples
of the batch sets ``compares_samples = True``: the router then all-gathers its inputs under DDP
(with gradient), so the value does not depend on the number of processes. Stateful losses always
get the global batch, so that every rank applies the same update to its copy of the state.

Worked examples (each a complete loss) are in ``docs/architecture.md`` §3.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

import torch
from mmengine.dist import get_world_size
from torch import nn

#: What the per-sample / per-class state of a :class:`StatefulLoss` is indexed by.
STATE_KEYS = ('sample', 'class')


# ----------------------------------------------------------------------------- precision
def as_fp32(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Cast inputs to float32 (network outputs are float16 / bfloat16 under mixed precision)."""
    return tuple(t.float() for t in tensors)


def to_fp32(value: Any) -> Any:
    """``value`` with every floating-point tensor in it (also in lists, tuples, dicts) as float32."""
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(to_fp32(v) for v in value)
    if isinstance(value, dict):
        return {key: to_fp32(v) for key, v in value.items()}
    return value


@contextmanager
def full_precision() -> Iterator[None]:
    """Switch off any active autocast (CUDA or CPU) for the enclosed block.

    Autocast decides precision per operation, not per input: inside it ``a @ b`` runs in float16
    even when ``a`` and ``b`` are float32, so casting the inputs alone does not keep a loss in fp32.
    """
    with ExitStack() as stack:
        for device_type in ('cuda', 'cpu'):
            if torch.is_autocast_enabled(device_type):
                stack.enter_context(torch.autocast(device_type, enabled=False))
        yield


def check_loss_weight(value: float, owner: str) -> float:
    """``value`` as a float if it is a finite weight ``>= 0``; a ValueError naming it otherwise."""
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f'{owner}: loss_weight must be a finite number >= 0, got {value}')
    return value


# ----------------------------------------------------------------------------- shared core
class _InputSignature:
    """``inspect.signature(loss)`` of a loss instance: its ``forward``'s inputs (``nn.Module``'s
    ``__call__`` alone shows ``(*args, **kwargs)``). ``None`` on the class, so that
    ``inspect.signature(LossClass)`` stays the constructor's."""

    def __get__(self, instance: Any, owner: type) -> inspect.Signature | None:
        if instance is None:
            return None
        signature = inspect.signature(owner.forward)
        return signature.replace(parameters=list(signature.parameters.values())[1:])


class _LossContract(nn.Module):
    """What :class:`TaskLoss` and :class:`RoutedLoss` share: the weight, terms, named inputs."""

    __signature__ = _InputSignature()

    #: Whether the value depends on the other samples of the batch (see the module docstring).
    compares_samples: bool = False
    #: Set by the router for each call: the inputs are the batch gathered from every process.
    inputs_gathered: bool = False
    #: Names of the terms of a dict result (logged as ``loss_<name>_<term>``); ``()``: a tensor.
    terms: tuple[str, ...] = ()
    #: Attributes that ``repr(loss)`` shows as ``name=value``: each class lists its own, and a
    #: subclass's come before its bases' (so ``loss_weight`` is last).
    repr_fields: tuple[str, ...] = ('loss_weight',)

    def __init__(self, loss_weight: float = 1.0) -> None:
        super().__init__()
        self.loss_weight = check_loss_weight(loss_weight, type(self).__name__)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A loss that writes compute (and not forward) gets a forward named by compute's inputs.
        if 'compute' in vars(cls) and 'forward' not in vars(cls):
            forward = cls._forward_of(cls.compute)
            forward.__name__, forward.__qualname__ = 'forward', f'{cls.__qualname__}.forward'
            forward.__module__ = cls.__module__
            cls.forward = forward

    @classmethod
    def _forward_of(cls, compute: Callable) -> Callable:
        """A ``forward`` for a subclass whose ``compute`` is ``compute`` (each contract's)."""
        raise NotImplementedError

    def compute(self, *inputs: Any) -> torch.Tensor | dict[str, torch.Tensor]:
        """The unweighted loss on fp32 inputs; written by each subclass."""
        raise NotImplementedError(f'{type(self).__name__} must implement compute()')

    def weight_factor(self) -> float:
        """Factor on ``loss_weight`` at this step (1; epoch-dependent schedules override it)."""
        return 1.0

    def input_weight(self, inputs: Mapping[str, Any]) -> float:
        """Factor on ``loss_weight`` for these inputs (by name, in ``compute``'s order): 1.
        A composable weight policy overrides it
        (:class:`~mlkd.models.losses.weight_reference.ReferenceWeighted`)."""
        return 1.0

    def world_size_factor(self, reduction: str | None) -> int:
        """W for a summed loss over this process's samples in training under DDP (so that DDP's
        averaged gradient is that of the sum over the whole batch), else 1 (module doc)."""
        local_sum = reduction == 'sum' and not self.inputs_gathered and self.training
        return get_world_size() if local_sum else 1

    def global_batch_size(self, local: int) -> int:
        """The batch a value stands for: ``local`` when the inputs are gathered already (or out
        of training), else ``local`` times the number of processes."""
        gathered = self.inputs_gathered or not self.training
        return local if gathered else local * get_world_size()

    def _weighted(
        self, value: torch.Tensor | dict, factor: float
    ) -> torch.Tensor | dict[str, torch.Tensor]:
        """``value`` (a tensor, or a dict of the declared ``terms``) times ``factor``."""
        owner = type(self).__name__
        if isinstance(value, dict):
            if set(value) != set(self.terms):
                raise RuntimeError(
                    f'{owner}: compute() returned the terms {sorted(value)}, but '
                    f'the loss declares terms={tuple(self.terms)}'
                )
            return {term: factor * part for term, part in value.items()}
        if self.terms:
            raise RuntimeError(
                f'{owner}: declares terms={tuple(self.terms)} but compute() '
                'returned a single tensor'
            )
        return factor * value

    def extra_repr(self) -> str:
        names = [name for cls in type(self).__mro__ for name in vars(cls).get('repr_fields', ())]
        return ', '.join(f'{name}={getattr(self, name)!r}' for name in dict.fromkeys(names))


# ----------------------------------------------------------------------------- TaskLoss
class TaskLoss(_LossContract):
    """Contract of the losses that compare a network's predictions with the labels.

    A subclass writes ``compute(self, logits, gt, reduction)``: fp32 ``[B, C]`` logits and targets
    (1 positive, 0 negative, -1 ignored: the entry belongs to no set and must not count), returning
    the unweighted loss reduced by ``reduction`` — one of the class attribute ``reductions``, whose
    first entry is the reference code's reduction and the default. Further inputs are further
    arguments of ``compute`` after ``reduction`` (ROLE's ``sample_idx``); the router supplies them
    by name.

    The contract's ``forward(logits, gt, avg_factor=None, reduction_override=None)`` (and, by
    name, ``compute``'s further inputs) is the call of
    mmpretrain's heads (``loss_module(cls_score, target, avg_factor=B)``, positional) and of the
    router (``logits`` and ``gt`` by name; in a distiller, map them:
    ``inputs=dict(logits='s_logits')``). It checks that logits and targets are ``[B, C]`` of one
    shape (the target *values* are validated once per batch, on the host, by the data
    preprocessor: a check here would synchronise the device at every call), evaluates ``compute``
    in fp32, multiplies a summed loss by the world size under DDP (``scale_by_world_size``), and
    applies ``loss_weight``.

    ``avg_factor`` is accepted and **ignored**: each loss keeps its reference code's reduction (a
    plain sum over the ``B·C`` entries for BCE, ASL, Hill and SPLC; means over sets for Two-way),
    and dividing by ``avg_factor`` would change the scale by ``B`` and the meaning of the papers'
    learning rates and loss weights. ``reduction='batchmean'``, where offered, is mmpretrain's
    "sum / B".

    Args:
        reduction: one of :attr:`reductions`; ``None`` = the first (the reference's).
        scale_by_world_size: with ``reduction='sum'`` under DDP, multiply by the world size. DDP
            averages gradients over ranks, so a per-rank sum would otherwise give ``1/W`` of the
            gradient of the sum over the global batch, which is what the references compute.
            Default True; no effect in a single process or in eval mode.
        loss_weight: factor applied to the loss (finite, ``>= 0``).
    """

    #: Reductions a subclass offers; the first is its reference default.
    reductions: tuple[str, ...] = ('sum', 'mean', 'batchmean', 'none')
    repr_fields = ('reduction',)

    def __init__(
        self,
        reduction: str | None = None,
        scale_by_world_size: bool = True,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.reduction = self._check_reduction(
            self.reductions[0] if reduction is None else reduction
        )
        self.scale_by_world_size = bool(scale_by_world_size)

    def _check_reduction(self, reduction: str) -> str:
        if reduction not in self.reductions:
            raise ValueError(
                f'{type(self).__name__}: reduction must be one of '
                f'{self.reductions}, got {reduction!r}'
            )
        return reduction

    def compute(
        self, logits: torch.Tensor, gt: torch.Tensor, reduction: str, **inputs: Any
    ) -> torch.Tensor:
        """The unweighted loss of fp32 ``[B, C]`` logits and targets, reduced by ``reduction``."""
        raise NotImplementedError(f'{type(self).__name__} must implement compute()')

    @classmethod
    def _forward_of(cls, compute: Callable) -> Callable:
        # The heads' call (logits, gt, avg_factor, reduction_override) + compute's further inputs.
        base = [
            p
            for p in inspect.signature(TaskLoss.forward).parameters.values()
            if p.kind != p.VAR_KEYWORD
        ]
        extras = [
            p.replace(kind=p.KEYWORD_ONLY) if p.kind == p.POSITIONAL_OR_KEYWORD else p
            for p in list(inspect.signature(compute).parameters.values())[4:]
        ]

        def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
            return TaskLoss.forward(self, *args, **kwargs)

        forward.__signature__ = inspect.Signature(
            base + extras, return_annotation=inspect.signature(TaskLoss.forward).return_annotation
        )
        forward.__doc__ = TaskLoss.forward.__doc__
        return forward

    def forward(
        self,
        logits: torch.Tensor,
        gt: torch.Tensor,
        avg_factor: float | None = None,
        reduction_override: str | None = None,
        **inputs: Any,
    ) -> torch.Tensor:
        """Args:
            logits: ``[B, C]`` logits (any float dtype; evaluated in fp32).
            gt: ``[B, C]`` float targets, 1 positive, 0 negative, -1 ignored.
            avg_factor: accepted for mmpretrain heads and ignored (see the class docstring).
            reduction_override: a reduction replacing ``self.reduction`` for this call.
            **inputs: the further inputs the subclass's ``compute`` declares.

        Returns:
            ``loss_weight`` × the loss: a scalar, or ``[B, C]`` for ``reduction='none'``.
        """
        del avg_factor  # the reference reductions do not divide by the batch size
        reduction = self._check_reduction(reduction_override or self.reduction)
        if logits.dim() != 2 or gt.shape != logits.shape:
            raise ValueError(
                f'{type(self).__name__}: expected [B, C] logits and targets of the '
                f'same shape, got logits {tuple(logits.shape)} and gt '
                f'{tuple(gt.shape)}'
            )
        with full_precision():
            loss = self.compute(logits.float(), gt.float(), reduction, **to_fp32(inputs))
        if self.scale_by_world_size:
            loss = loss * self.world_size_factor(reduction)
        weight = self.input_weight(dict(logits=logits, gt=gt, **inputs))
        return self._weighted(loss, self.loss_weight * self.weight_factor() * weight)


# ----------------------------------------------------------------------------- RoutedLoss
#: The named tensors that many routed losses read as the router supplies them, described once: a
#: ``compute`` without a docstring of its own is documented from this table (``help(loss)``).
NAMED_INPUTS = {
    's_logits': '``[B, C]`` student logits.',
    't_logits': '``[B, C]`` teacher logits.',
    'gt': '``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.',
}


def _named_inputs_doc(names: list[str]) -> str | None:
    """An ``Args:`` section for ``names`` if :data:`NAMED_INPUTS` describes them all, else None."""
    if not names or not set(names) <= set(NAMED_INPUTS):
        return None
    return '\n'.join(['Args:', *(f'    {name}: {NAMED_INPUTS[name]}' for name in names)])


class RoutedLoss(_LossContract):
    """Contract of the losses fed by the router with named tensors (distillation and the like).

    A subclass writes ``compute(self, <inputs>)`` whose argument names are the named tensors it
    consumes (``s_logits``, ``t_logits``, ``gt``, ``s_feats``, ``t_<tap>``, ``sample_idx``,
    connector outputs...; optional arguments are supplied when available), returning the
    unweighted value: a scalar tensor, or a dict with the keys declared in ``terms``. Its docstring
    describes the inputs; one that reads only inputs of :data:`NAMED_INPUTS` may leave it out (the
    contract writes it from that table). It may set:

    * ``compares_samples = True`` if the value depends on the other samples of the batch: under
      DDP the router then all-gathers the inputs with gradient (the loss itself communicates
      nothing and must give the same value on every rank for the same global batch);
    * ``terms = ('a', 'b')`` for a dict result (each term logged as ``loss_<name>_<term>``);
    * :meth:`weight_factor` for a schedule over epochs (read the 0-based epoch with
      :func:`~mlkd.models.losses.utils.current_epoch`);
    * :class:`~.weight_reference.ReferenceWeighted` as a further base (with ``scale_exponents``)
      to accept ``weight_reference``: a weight given for a reference batch size and class count.

    ``forward`` takes ``compute``'s inputs (the contract writes it for each loss, with
    ``compute``'s signature), casts floating inputs to fp32, evaluates ``compute`` with autocast
    off and returns ``loss_weight · weight_factor() · input_weight(inputs) · value``. Return a value
    connected to the graph even where nothing is valid (multiply by zero rather than returning a
    Python number), so that DDP sees the same parameters used at every step.

    Args:
        loss_weight: factor applied to the value (finite, ``>= 0``).
    """

    @classmethod
    def _forward_of(cls, compute: Callable) -> Callable:
        signature = inspect.signature(compute)
        inputs = signature.replace(parameters=list(signature.parameters.values())[1:])

        def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor | dict[str, torch.Tensor]:
            return self._evaluate(inputs.bind(*args, **kwargs))

        if compute.__doc__ is None:  # the standard inputs, described by the table
            compute.__doc__ = _named_inputs_doc(list(inputs.parameters))
        forward.__signature__ = signature
        forward.__doc__ = (
            'The weighted value of :meth:`compute` on these inputs, evaluated in fp32 (see '
            f':class:`RoutedLoss`).\n\n{inspect.getdoc(compute) or ""}'
        ).strip()
        return forward

    def forward(self, *inputs: Any, **named: Any) -> torch.Tensor | dict[str, torch.Tensor]:
        """The weighted value of ``compute(*inputs, **named)``, evaluated in fp32."""
        return self._evaluate(inspect.signature(self.compute).bind(*inputs, **named))

    def _evaluate(self, bound: inspect.BoundArguments) -> torch.Tensor | dict[str, torch.Tensor]:
        """``compute`` of the bound inputs in fp32 (autocast off), times the effective weight."""
        with full_precision():
            value = self.compute(*to_fp32(bound.args), **to_fp32(bound.kwargs))
        factor = self.loss_weight * self.weight_factor() * self.input_weight(bound.arguments)
        factor *= self.world_size_factor(getattr(self, 'reduction', None))
        return self._weighted(value, factor)


# ----------------------------------------------------------------------------- StatefulLoss
class StateSizeError(ValueError):
    """A loss's saved state does not fit this run (another dataset, class count or store size)."""


class StatefulLoss(nn.Module):
    """Mixin contract of the losses that keep state across steps (with TaskLoss or RoutedLoss).

    A subclass declares each piece of state once, in ``__init__``, with :meth:`register_state`:
    a tensor whose first axis is indexed by dataset sample (``keyed_by='sample'``, e.g. ROLE's
    ``[N, C]`` label logits, CRD's banks) or by class (``keyed_by='class'``, e.g. per-class
    queues or a ``[C, C]`` running statistic). What it gets for free:

    * **checkpoints and exact resume**: the state lives in the state dict (buffers, parameters, or
      host-memory tensors for stores too large for the device), so ``--resume`` continues with it
      bit for bit;
    * **a size check on load**: a state sized for another dataset or class count is refused with
      a :class:`StateSizeError` naming the state and both sizes — never resized, never half
      loaded, also when the checkpoint is loaded non-strictly;
    * **equal state on every DDP rank**: a stateful loss always receives the global batch
      (the router all-gathers its inputs), so every rank applies the same update to its copy;
    * :meth:`check_sample_idx`, the one range check of dataset indices against the state.

    Args of :meth:`register_state`: see there. Put :class:`StatefulLoss` anywhere in the bases
    (``class ROLELoss(TaskLoss, StatefulLoss)``).
    """

    #: Stateful losses always see the global batch (equal updates on every rank).
    compares_samples = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Whatever the order of the bases (TaskLoss / RoutedLoss say False), a stateful loss
        # compares samples: every rank must apply the update of the whole batch.
        cls.compares_samples = True

    def register_state(
        self, name: str, value: torch.Tensor, keyed_by: str, host: bool = False
    ) -> None:
        """Declare a piece of state.

        Args:
            name: attribute name, also its key in the state dict.
            value: the initial tensor, first axis indexed by sample or class. An
                ``nn.Parameter`` is registered as a parameter (trained with the network, e.g.
                ROLE's label logits), any other tensor as a buffer.
            keyed_by: ``'sample'`` or ``'class'`` (what the first axis counts; named in errors).
            host: keep it in host memory as a plain attribute (not moved by ``.to(device)``, not
                broadcast by DDP) for stores too large for the device; still saved and loaded.
        """
        if keyed_by not in STATE_KEYS:
            raise ValueError(
                f'{type(self).__name__}.{name}: keyed_by must be one of '
                f'{STATE_KEYS}, got {keyed_by!r}'
            )
        if not hasattr(self, '_state_keys'):
            self._state_keys: dict[str, tuple[str, bool]] = {}
        self._state_keys[name] = (keyed_by, bool(host))
        if host:
            object.__setattr__(self, name, value.detach().cpu())
        elif isinstance(value, nn.Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    @property
    def state_names(self) -> dict[str, str]:
        """``name -> keyed_by`` of the declared state."""
        return {name: keyed for name, (keyed, _) in getattr(self, '_state_keys', {}).items()}

    def check_sample_idx(self, sample_idx: torch.Tensor, num_samples: int) -> None:
        """Raise an IndexError if a dataset index is outside ``[0, num_samples)``.

        One host synchronisation per call: the state would otherwise be read out of bounds.
        """
        if sample_idx.numel() and (
            int(sample_idx.min()) < 0 or int(sample_idx.max()) >= num_samples
        ):
            raise IndexError(
                f'{type(self).__name__}: sample_idx in [{int(sample_idx.min())}, '
                f'{int(sample_idx.max())}] is outside the state of '
                f'num_samples={num_samples}; set num_samples to the training set '
                'size'
            )

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, (_, host) in getattr(self, '_state_keys', {}).items():
            if host:
                destination[prefix + name] = getattr(self, name)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        for name, (keyed_by, host) in getattr(self, '_state_keys', {}).items():
            key, current = prefix + name, getattr(self, name)
            if key not in state_dict:
                if host:
                    missing_keys.append(key)
                continue
            saved = state_dict[key]
            if tuple(saved.shape) != tuple(current.shape):
                axis = 'samples' if keyed_by == 'sample' else 'classes'
                raise StateSizeError(
                    f'{type(self).__name__}: the saved state {key!r} has shape '
                    f'{tuple(saved.shape)} ({saved.shape[0] if saved.dim() else "?"} {axis}), '
                    f'this run needs {tuple(current.shape)} ({current.shape[0]} {axis}): the '
                    'checkpoint was made for another dataset, class count or state size. '
                    'Refusing to resize it.'
                )
            if host:
                current.copy_(state_dict.pop(key).to(current.dtype))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


def is_stateful(loss: nn.Module | type) -> bool:
    """Whether a loss (or loss class) keeps state under the :class:`StatefulLoss` contract."""
    cls = loss if isinstance(loss, type) else type(loss)
    return issubclass(cls, StatefulLoss)


def needs_global_batch(loss_cls: type) -> bool:
    """Whether the router gathers the loss's inputs under DDP by default."""
    return bool(getattr(loss_cls, 'compares_samples', False)) or is_stateful(loss_cls)
