"""Automatic mixed precision on whatever device the run uses (CUDA, or CPU)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import torch
from mmengine.device import get_device
from mmengine.logging import print_log
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from torch import nn

from mlkd.models.algorithms.loss_guard import LOSS_GUARD_DEFAULTS
from mlkd.registry import OPTIM_WRAPPERS

from .guarded import GuardedOptimWrapper

_DTYPES = {'float16': torch.float16, 'bfloat16': torch.bfloat16}


@OPTIM_WRAPPERS.register_module()
class MixedPrecisionOptimWrapper(GuardedOptimWrapper, AmpOptimWrapper):
    """mmengine's ``AmpOptimWrapper`` that also runs on CPU, using ``torch.amp`` throughout.

    mmengine's wrapper refuses to be built without an accelerator and creates a deprecated
    ``torch.cuda.amp.GradScaler``, which disables itself (no loss scaling) on any other device.
    This one autocasts on the run's device and scales the loss with a ``torch.amp.GradScaler``
    for that device, so the same ``--amp`` run — fp16 activations, dynamic loss scaling, steps
    skipped on overflow, scaler state in checkpoints — can be exercised on a CPU host and then
    used unchanged on GPUs. ``step``, ``backward`` and the checkpoint format (``loss_scaler`` in
    the optimizer state) are mmengine's, so checkpoints move between the two wrappers. Steps are
    guarded as by :class:`GuardedOptimWrapper` (non-finite gradients are left to the scaler while
    it scales the loss).

    Args:
        dtype: ``'float16'`` or ``'bfloat16'`` (or the torch dtype). ``None`` (default) picks
            the device's autocast default: float16 on CUDA, bfloat16 on CPU.
        loss_scale: ``'dynamic'`` (default), a float (static scale) or a dict of
            ``torch.amp.GradScaler`` arguments, as in mmengine. Loss scaling is switched off
            for bfloat16, whose exponent range is float32's, unless ``scale_bf16=True``.
        scale_bf16: keep loss scaling with bfloat16 (default False).
        device: autocast device type; default: where mmengine puts the model
            (``mmengine.device.get_device()``).
        loss_guard: see :class:`GuardedOptimWrapper`.
        **kwargs: :class:`mmengine.optim.OptimWrapper` arguments (``optimizer``, ``clip_grad``,
            ``accumulative_counts``).
    """

    def __init__(
        self,
        dtype: str | torch.dtype | None = None,
        loss_scale: str | float | dict = 'dynamic',
        scale_bf16: bool = False,
        device: str | None = None,
        loss_guard: Mapping | None = LOSS_GUARD_DEFAULTS,
        **kwargs,
    ) -> None:
        # mmengine's __init__ asserts an accelerator and builds a CUDA scaler: skip it.
        OptimWrapper.__init__(self, **kwargs)
        self._init_guard(loss_guard)
        self.device_type = device or get_device()
        if self.device_type not in ('cuda', 'cpu'):
            raise ValueError(
                f'MixedPrecisionOptimWrapper: device {self.device_type!r} is not '
                "supported; use mmengine's AmpOptimWrapper on npu/mlu/musa"
            )
        if dtype is None:
            dtype = torch.float16 if self.device_type == 'cuda' else torch.bfloat16
        dtype = _DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype
        if dtype not in _DTYPES.values():
            raise ValueError(
                f'MixedPrecisionOptimWrapper: dtype must be one of {sorted(_DTYPES)}, got {dtype!r}'
            )
        if (
            self.device_type == 'cuda'
            and dtype == torch.bfloat16
            and not torch.cuda.is_bf16_supported()
        ):
            raise RuntimeError(
                "MixedPrecisionOptimWrapper: this CUDA device has no bfloat16; use dtype='float16'"
            )
        self.cast_dtype = dtype

        self._scale_update_param = None
        enabled = dtype == torch.float16 or scale_bf16
        if loss_scale == 'dynamic':
            scaler_kwargs = {}
        elif isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool):
            self._scale_update_param = float(loss_scale)
            scaler_kwargs = dict(init_scale=float(loss_scale))
        elif isinstance(loss_scale, dict):
            scaler_kwargs = dict(loss_scale)
        else:
            raise TypeError(
                'MixedPrecisionOptimWrapper: loss_scale must be "dynamic", a float '
                f'or a dict, got {loss_scale!r}'
            )
        scaler_kwargs.setdefault('enabled', enabled)
        self.loss_scaler = torch.amp.GradScaler(self.device_type, **scaler_kwargs)
        print_log(
            f'mixed precision: autocast {self.device_type} to {dtype}, loss scaling '
            f'{"on" if self.loss_scaler.is_enabled() else "off"}',
            logger='current',
        )

    @contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        self._stepped_model = model
        # OptimWrapper's context handles no_sync during gradient accumulation.
        with (
            OptimWrapper.optim_context(self, model),
            torch.autocast(device_type=self.device_type, dtype=self.cast_dtype),
        ):
            yield
