"""RandAugment as the ASL / L2D / 3D recipes run it: the UDA variant of ``randaugment==1.0.2``.

This is not torchvision's or timm's RandAugment. Each image gets an ordered pair of operations,
each drawn uniformly from 15 operations × magnitude levels 1–9, and each applied with
probability 0.5 (methods.md section 4.1.3). The package itself uses ``np.int`` and no longer
imports with numpy >= 1.24; this is a fresh implementation of its behaviour on PIL images.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mmcv.transforms import BaseTransform
from PIL import Image, ImageEnhance, ImageOps

from mlkd.registry import TRANSFORMS

__all__ = ['UDARandAugment', 'UDA_OPERATIONS', 'apply_uda_operation', 'uda_magnitude']

#: The 15 operations, in the package's order.
UDA_OPERATIONS = (
    'invert',
    'cutout',
    'sharpness',
    'autocontrast',
    'posterize',
    'shear_x',
    'translate_x',
    'translate_y',
    'shear_y',
    'rotate',
    'equalize',
    'contrast',
    'color',
    'solarize',
    'brightness',
)

# Magnitude of level l (0..9) is grid[l] of a 10-point linspace, as in the package.
_GRIDS = {
    'shear_x': np.linspace(0.0, 0.3, 10),
    'shear_y': np.linspace(0.0, 0.3, 10),
    'translate_x': np.linspace(0.0, 150 / 331, 10),  # fraction of the image width
    'translate_y': np.linspace(0.0, 150 / 331, 10),
    'rotate': np.linspace(0.0, 30.0, 10),  # degrees
    'color': np.linspace(0.0, 0.9, 10),  # enhancement factor 1 ± m
    'contrast': np.linspace(0.0, 0.9, 10),
    'sharpness': np.linspace(0.0, 0.9, 10),
    'brightness': np.linspace(0.0, 0.9, 10),
    'posterize': np.round(np.linspace(8, 4, 10)).astype(int),  # bits kept
    'solarize': np.linspace(256.0, 0.0, 10),  # threshold
    'cutout': np.round(np.linspace(0, 20, 10)).astype(int),  # square side in pixels
}
# Operations whose magnitude gets a random sign when applied (rotate does not: the package
# always rotates counter-clockwise).
_SIGNED = frozenset(
    {
        'shear_x',
        'shear_y',
        'translate_x',
        'translate_y',
        'color',
        'contrast',
        'sharpness',
        'brightness',
    }
)
_ENHANCERS = {
    'color': ImageEnhance.Color,
    'contrast': ImageEnhance.Contrast,
    'sharpness': ImageEnhance.Sharpness,
    'brightness': ImageEnhance.Brightness,
}
_UNSCALED: dict[str, Callable[[Image.Image], Image.Image]] = {
    'autocontrast': ImageOps.autocontrast,
    'equalize': ImageOps.equalize,
    'invert': ImageOps.invert,
}


def uda_magnitude(operation: str, level: int) -> float | int:
    """Magnitude of ``operation`` at ``level`` (0–9; policies draw 1–9); 0 for unscaled ops."""
    if operation not in UDA_OPERATIONS:
        raise KeyError(
            f'unknown UDA RandAugment operation {operation!r}; expected one of {UDA_OPERATIONS}'
        )
    if not 0 <= level <= 9:
        raise ValueError(f'UDA RandAugment level must be in 0..9, got {level}')
    grid = _GRIDS.get(operation)
    return 0.0 if grid is None else grid[level].item()


def _affine(img: Image.Image, coeffs: tuple, resample: int, fill: tuple) -> Image.Image:
    return img.transform(img.size, Image.AFFINE, coeffs, resample, fillcolor=fill)


def _cutout(img: Image.Image, side: int, fill: tuple) -> Image.Image:
    """Paint the half-open square ``[c - side//2, c + side//2)`` around a uniform centre ``c``."""
    width, height = img.size
    # Draw order as in the package: the horizontal centre first.
    cx, cy = int(np.random.randint(width)), int(np.random.randint(height))
    half = side // 2
    x1, x2 = max(0, cx - half), min(width, cx + half)
    y1, y2 = max(0, cy - half), min(height, cy + half)
    out = np.array(img)
    out[y1:y2, x1:x2] = fill
    return Image.fromarray(out)


def apply_uda_operation(
    img: Image.Image,
    operation: str,
    magnitude: float,
    fill: tuple = (128, 128, 128),
    cutout_fill: tuple = (125, 122, 113),
) -> Image.Image:
    """Apply one operation to an RGB PIL image; ``magnitude`` already carries its sign.

    Geometric operations follow PIL's inverse-mapping convention, as the package does: shear
    ``(1, m, 0, 0, 1, 0)`` (bicubic), translation by ``m`` × the image size (nearest), rotation by
    ``magnitude`` degrees counter-clockwise (nearest). Areas moved in from outside get ``fill``.
    """
    if operation in ('shear_x', 'shear_y'):
        shear_x = operation == 'shear_x'
        coeffs = (1, magnitude, 0, 0, 1, 0) if shear_x else (1, 0, 0, magnitude, 1, 0)
        return _affine(img, coeffs, Image.BICUBIC, fill)
    if operation == 'translate_x':
        return _affine(img, (1, 0, magnitude * img.size[0], 0, 1, 0), Image.NEAREST, fill)
    if operation == 'translate_y':
        return _affine(img, (1, 0, 0, 0, 1, magnitude * img.size[1]), Image.NEAREST, fill)
    if operation == 'rotate':
        return img.rotate(magnitude, resample=Image.NEAREST, fillcolor=fill)
    if operation in _ENHANCERS:
        return _ENHANCERS[operation](img).enhance(1.0 + magnitude)
    if operation == 'posterize':
        return ImageOps.posterize(img, int(magnitude))
    if operation == 'solarize':
        return ImageOps.solarize(img, magnitude)
    if operation == 'cutout':
        return _cutout(img, int(magnitude), cutout_fill)
    if operation in _UNSCALED:
        return _UNSCALED[operation](img)
    raise KeyError(f'unknown UDA RandAugment operation {operation!r}')


@TRANSFORMS.register_module()
class UDARandAugment(BaseTransform):
    """The RandAugment of the L2D / ASL training recipes (``randaugment==1.0.2``, UDA style).

    Per image: ``num_ops`` (2) draws of an ``(operation, level)`` pair, uniform over the 15
    :data:`UDA_OPERATIONS` × levels 1–9; each is applied in turn with probability ``prob`` (0.5),
    and signed operations flip their sign with probability 0.5 when applied. Magnitude grids
    (level l of 10 points): shear 0–0.3, translate 0–150/331 of the size, rotate 0–30°
    (counter-clockwise only, as in the package), colour / contrast / sharpness / brightness factor
    1 ± (0–0.9), posterize bits round(8 → 4), solarize threshold 256 → 0, cutout side
    round(0 → 20) px filled with (125, 122, 113); affine fill (128, 128, 128).

    Differences from the package, none of which changes the distribution: all draws come from
    numpy's global RNG (which MMEngine seeds per worker and epoch) instead of Python's
    ``random``; the rotation fill is set directly rather than by compositing an RGBA rotation
    onto grey; the cutout paints a numpy slice rather than looping over pixels.

    Required keys: ``img`` (``uint8`` ``[H, W, 3]``). Modified keys: ``img`` (a new array; the
    input is not written to). Added keys: ``uda_ops`` (list of ``(operation, level, applied)``).

    Args:
        num_ops: operations drawn per image (2).
        prob: probability of applying each drawn operation (0.5).
        channel_order: ``'bgr'`` (default; mmcv's ``LoadImageFromFile``) or ``'rgb'``. Colour
            operations and fills are defined on RGB, so BGR images are flipped in and out.
        fill: RGB fill of the geometric operations.
        cutout_fill: RGB fill of the cutout operation.
    """

    def __init__(
        self,
        num_ops: int = 2,
        prob: float = 0.5,
        channel_order: str = 'bgr',
        fill: Sequence[int] = (128, 128, 128),
        cutout_fill: Sequence[int] = (125, 122, 113),
    ) -> None:
        if num_ops < 0:
            raise ValueError(f'UDARandAugment: num_ops must be >= 0, got {num_ops}')
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f'UDARandAugment: prob must be in [0, 1], got {prob}')
        if channel_order not in ('bgr', 'rgb'):
            raise ValueError(
                f"UDARandAugment: channel_order must be 'bgr' or 'rgb', got {channel_order!r}"
            )
        for name, value in (('fill', fill), ('cutout_fill', cutout_fill)):
            if len(value) != 3:
                raise ValueError(f'UDARandAugment: {name} must have 3 values (RGB), got {value}')
        self.num_ops = int(num_ops)
        self.prob = float(prob)
        self.channel_order = channel_order
        self.fill = tuple(int(v) for v in fill)
        self.cutout_fill = tuple(int(v) for v in cutout_fill)

    def transform(self, results: dict) -> dict | None:
        img = results.get('img')
        if (
            not isinstance(img, np.ndarray)
            or img.ndim != 3
            or img.shape[2] != 3
            or img.dtype != np.uint8
        ):
            raise TypeError(
                'UDARandAugment expects results["img"] to be a uint8 numpy array of '
                f'shape [H, W, 3], got {type(img).__name__} '
                f'{getattr(img, "shape", None)} {getattr(img, "dtype", "")}'
            )
        rgb = img[..., ::-1] if self.channel_order == 'bgr' else img
        pil = Image.fromarray(np.ascontiguousarray(rgb))
        record = []
        for _ in range(self.num_ops):
            operation = UDA_OPERATIONS[np.random.randint(len(UDA_OPERATIONS))]
            level = int(np.random.randint(1, 10))
            applied = bool(np.random.rand() < self.prob)
            if applied:
                magnitude = uda_magnitude(operation, level)
                if operation in _SIGNED and np.random.rand() < 0.5:
                    magnitude = -magnitude
                pil = apply_uda_operation(pil, operation, magnitude, self.fill, self.cutout_fill)
            record.append((operation, level, applied))
        out = np.asarray(pil)
        results['img'] = np.ascontiguousarray(
            out[..., ::-1] if self.channel_order == 'bgr' else out
        )
        results['uda_ops'] = record
        return results

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(num_ops={self.num_ops}, prob={self.prob}, '
            f'channel_order={self.channel_order!r})'
        )
