"""Shared plumbing of the CIFAR-layout backbones: output selection, freezing, BN eval, init.

Each backbone lists its modules as a stem plus ``num_stages`` stages; ``out_indices`` index those
stages (negative indices count from the end) and ``forward`` returns the selected stage outputs as a
tuple in stage order, as mmpretrain backbones do, so that ``GlobalAveragePooling`` and a head can
follow. The default initialisation (Kaiming-normal, fan-out, ReLU gain for convolutions, zero conv
bias, unit-weight zero-bias norms) equals the explicit loops of the CRD/mdistiller model files.
It is applied by ``init_weights()``, which the MMEngine runner calls; pass ``init_cfg=None``
(PyTorch's default init) or a ``Pretrained`` entry to override it.

Tap points: every backbone names the modules whose outputs are its features, so that a forward
hook (:class:`mlkd.models.algorithms.taps.Taps`) can record them by module path without changing
the network: :attr:`CifarBackbone.stem_path` (the stem output, mdistiller's ``feats[0]``),
:meth:`CifarBackbone.stage_paths` (exactly the tensors ``forward`` returns for each output index)
and :meth:`CifarBackbone.preact_paths` (each output before its final ReLU, as OFD and ReviewKD
use them). Paths are relative to the backbone; inside an ``ImageClassifier`` prefix ``backbone.``.
The table of every network's paths is in ``docs/model_zoo.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mmpretrain.models.backbones.base_backbone import BaseBackbone
from torch import Tensor, nn
from torch.nn.modules.batchnorm import _BatchNorm

__all__ = ['CifarBackbone', 'CifarBlockBackbone', 'CIFAR_INIT_CFG']

CIFAR_INIT_CFG = [
    dict(type='Kaiming', layer=['Conv2d']),  # mode='fan_out', nonlinearity='relu', normal, bias 0
    dict(type='Constant', val=1, layer=['_BatchNorm', 'GroupNorm']),
]


def normalize_out_indices(out_indices: int | Sequence[int], num_outputs: int) -> tuple[int, ...]:
    """Map possibly negative ``out_indices`` to sorted, unique, non-negative stage indices.

    Raises:
        ValueError: an index outside ``[-num_outputs, num_outputs)`` or an empty selection.
    """
    if isinstance(out_indices, int):
        out_indices = (out_indices,)
    result = set()
    for index in out_indices:
        if not -num_outputs <= index < num_outputs:
            raise ValueError(f'out index {index} is outside the {num_outputs} outputs')
        result.add(index % num_outputs)
    if not result:
        raise ValueError('out_indices selects no output')
    return tuple(sorted(result))


class CifarBackbone(BaseBackbone):
    """Base of the CIFAR-layout backbones.

    Subclasses set ``stem_names`` (module paths applied before the first stage) and ``stage_names``
    (one entry per selectable output; an entry may be a tuple of module paths when a stage ends with
    extra modules such as WRN's final BN), build their modules, then call :meth:`_finish_init`.

    The keyword arguments below are shared by every CIFAR backbone; a subclass takes its own
    architecture arguments and passes these through (``**common``).

    Args:
        in_channels: input image channels.
        out_indices: stage outputs to return; ``-1`` is the last stage.
        frozen_stages: freeze the stem and stages ``0..frozen_stages-1`` (no gradients, eval mode);
            ``-1`` freezes nothing, ``0`` only the stem.
        norm_cfg: norm layer config (``None``: BatchNorm), kept as :attr:`norm_cfg`.
        norm_eval: keep every BN layer in eval mode while training (frozen running statistics).
        init_cfg: MMEngine init config; the default reproduces the reference initialisation.
    """

    stem_names: tuple[str, ...] = ()
    stage_names: tuple[str | tuple[str, ...], ...] = ()
    #: module path whose output is the stem feature (mdistiller's ``feats[0]``)
    stem_path: str = ''

    def __init__(
        self,
        *,
        in_channels: int = 3,
        out_indices: int | Sequence[int] = (-1,),
        frozen_stages: int = -1,
        norm_cfg: dict | None = None,
        norm_eval: bool = False,
        init_cfg: dict | list | None = CIFAR_INIT_CFG,
    ) -> None:
        super().__init__(init_cfg=init_cfg)
        self.in_channels = in_channels
        self.norm_cfg = norm_cfg or dict(type='BN')
        self._out_indices_arg = out_indices
        self.frozen_stages = frozen_stages
        self.norm_eval = norm_eval
        self.out_indices: tuple[int, ...] = ()

    @property
    def num_stages(self) -> int:
        """Number of selectable stage outputs."""
        return len(self.stage_names)

    def stage_paths(self) -> list[str]:
        """Module paths whose outputs are the stage outputs, one per output index, in order.

        Recording them with a forward hook gives the same tensors as ``forward`` with every
        output index selected. Default: the stage modules themselves.
        """
        return list(self.stage_names)

    def preact_paths(self) -> list[str]:
        """Module paths of each output before its final ReLU (same length as :meth:`stage_paths`
        unless a subclass says otherwise)."""
        raise NotImplementedError(f'{type(self).__name__} defines no pre-activation taps')

    def _last_block_paths(self, suffix: str, stages: Sequence[str] | None = None) -> list[str]:
        """``<stage>.<last block>.<suffix>`` for each of ``stages`` (default: ``stage_names``).

        The per-stage taps of mdistiller (``preact_feats``, ``get_bn_before_relu``) sit in the last
        block of a stage, which is an ``nn.Sequential`` of blocks.
        """
        stages = self.stage_names if stages is None else stages
        return [f'{name}.{len(self.get_submodule(name)) - 1}.{suffix}' for name in stages]

    def _finish_init(self) -> None:
        """Validate ``out_indices`` and ``frozen_stages`` once the stages exist, then freeze."""
        self.out_indices = normalize_out_indices(self._out_indices_arg, self.num_stages)
        if not -1 <= self.frozen_stages <= self.num_stages:
            raise ValueError(
                f'frozen_stages must lie in [-1, {self.num_stages}], got {self.frozen_stages}'
            )
        self._freeze_stages()

    def _run_stages(self, x: Tensor) -> tuple[Tensor, ...]:
        """Run the stages in order on the stem output, keeping those in ``out_indices``."""
        outs = []
        for i, name in enumerate(self.stage_names):
            x = getattr(self, name)(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def _stage_modules(self, index: int) -> list[nn.Module]:
        names = self.stage_names[index]
        names = (names,) if isinstance(names, str) else names
        return [self.get_submodule(name) for name in names]

    def _freeze_stages(self) -> None:
        if self.frozen_stages < 0:
            return
        modules = [self.get_submodule(name) for name in self.stem_names]
        for index in range(self.frozen_stages):
            modules += self._stage_modules(index)
        for module in modules:
            module.eval()
            for param in module.parameters():
                param.requires_grad = False

    def train(self, mode: bool = True) -> CifarBackbone:
        """Set the mode, then re-apply freezing and ``norm_eval``."""
        super().train(mode)
        self._freeze_stages()
        if mode and self.norm_eval:
            for module in self.modules():
                if isinstance(module, _BatchNorm):
                    module.eval()
        return self


class CifarBlockBackbone(CifarBackbone):
    """A CIFAR backbone whose stem is ``conv1 → bn1 → relu`` and whose stages are ``nn.Sequential``
    of blocks that record their output before the final ReLU as ``preact`` (the CIFAR ResNets,
    ShuffleNetV1).

    A subclass sets ``stage_names`` and builds ``conv1``, ``bn1``, ``relu`` and the stages; the
    keyword arguments are those of :class:`CifarBackbone`.
    """

    stem_names = ('conv1', 'bn1')
    stem_path = 'relu'

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        """``[B, in_channels, H, W]`` -> tuple of the selected stage outputs (shapes: the class)."""
        return self._run_stages(self.relu(self.bn1(self.conv1(x))))

    def preact_paths(self) -> list[str]:
        """Module paths of each stage's pre-activation output (mdistiller's ``preact_feats``)."""
        return self._last_block_paths('preact')
