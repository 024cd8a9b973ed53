"""Optimizer construction that leaves frozen sub-networks (the teacher) out entirely."""

from __future__ import annotations

from mmengine.optim import DefaultOptimWrapperConstructor
from torch import nn

from mlkd.registry import OPTIM_WRAPPER_CONSTRUCTORS


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class FrozenAwareOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """``DefaultOptimWrapperConstructor`` that skips sub-modules whose parameters are all frozen.

    The default constructor hands a frozen teacher's parameters to the optimizer anyway (SGD and
    Adam then skip them) and logs one warning per parameter when ``paramwise_cfg`` is set: hundreds
    of lines for a ResNet-101 teacher. Whole frozen sub-modules are left out here; a frozen
    parameter inside a trainable module is still handled (and reported) as before.
    """

    def add_params(
        self, params: list, module: nn.Module, prefix: str = '', is_dcn_module=None
    ) -> None:
        own = list(module.parameters())
        if prefix and own and not any(p.requires_grad for p in own):
            return
        super().add_params(params, module, prefix=prefix, is_dcn_module=is_dcn_module)
