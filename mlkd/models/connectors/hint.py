"""FitNet's hint regressor: maps a student feature map onto the teacher's (conv + BN + ReLU)."""

from __future__ import annotations

from collections.abc import Sequence

from torch import nn

from mlkd.registry import MODELS

from .stagewise import StagewiseConnector


def _sides(shapes: Sequence) -> int | list[int]:
    """Spatial side (last dimension) of one shape, or of each shape of a list."""
    if shapes and isinstance(shapes[0], Sequence):
        return [int(shape[-1]) for shape in shapes]
    return int(shapes[-1])


@MODELS.register_module()
class HintConnector(StagewiseConnector):
    """Convolutional regressor of FitNets (Romero et al., ICLR 2015), as mdistiller's ``ConvReg``.

    The convolution is chosen from the spatial sizes (square maps): student side twice the
    teacher's → 3×3 stride-2 conv; half → 4×4 stride-2 transposed conv; otherwise (equal or
    larger) a ``(1 + s − t)``-sized valid conv (1×1 when equal). Then BN and, with ``use_relu``,
    ReLU (mdistiller's default, which makes negative teacher responses unreachable — kept for
    parity). The sizes default to equal.

    Args:
        in_channels: student channels (int, or one per stage).
        out_channels: teacher channels.
        in_size: student spatial side (int or one per stage); None: same as ``out_size``.
        out_size: teacher spatial side; None: same as ``in_size``.
        use_relu: end with a ReLU.
        in_shapes / out_shapes: full source / target shapes (``(B, C, H, W)`` or a list), as the
            router's probe injects them; they give ``in_size`` / ``out_size`` (the last
            dimension) when those are not set, so a config needs no sizes.
    """

    def __init__(
        self,
        in_channels: int | Sequence[int],
        out_channels: int | Sequence[int],
        in_size: int | Sequence[int] | None = None,
        out_size: int | Sequence[int] | None = None,
        use_relu: bool = True,
        in_shapes: Sequence | None = None,
        out_shapes: Sequence | None = None,
    ) -> None:
        if in_size is None and in_shapes is not None:
            in_size = _sides(in_shapes)
        if out_size is None and out_shapes is not None:
            out_size = _sides(out_shapes)
        self._sizes = (in_size, out_size)
        self.use_relu = bool(use_relu)
        super().__init__(in_channels, out_channels)

    def _size(self, which: int, index: int) -> int | None:
        size = self._sizes[which]
        return size[index] if isinstance(size, Sequence) else size

    def build_stage(self, in_channels: int, out_channels: int, index: int) -> nn.Module:
        s_size, t_size = self._size(0, index), self._size(1, index)
        if s_size is None or t_size is None:
            s_size = t_size = s_size or t_size or 1
        if s_size == 2 * t_size:
            conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)
        elif 2 * s_size == t_size:
            conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)
        elif s_size >= t_size:
            conv = nn.Conv2d(in_channels, out_channels, kernel_size=1 + s_size - t_size)
        else:
            raise ValueError(
                f'HintConnector: student side {s_size} smaller than the teacher side '
                f'{t_size} by a factor other than 2'
            )
        layers = [conv, nn.BatchNorm2d(out_channels)]
        if self.use_relu:
            layers.append(nn.ReLU())
        return nn.Sequential(*layers)
