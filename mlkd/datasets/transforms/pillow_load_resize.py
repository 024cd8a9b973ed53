"""Decode and squish-resize in PIL in one step: the L2D protocol's first two transforms, faster.

The L2D-protocol dataset configs decode with PIL and resize with PIL
(``LoadImageFromFile(imdecode_backend='pillow')`` then ``Resize(keep_ratio=False,
backend='pillow')``). Between the two, mmcv turns the PIL image into a BGR numpy view and the
resize turns that view back into a PIL image: two conversions of the full-size image, the second
on a negative-stride view, which cost about as much as the decode itself
(``docs/benchmarks/gpu.md``, data pipeline). This transform keeps the PIL image from decode to
resize and converts once, at the output size. Resizing treats every channel alike, so the result
is the same array, pixel for pixel, with the same result keys.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import mmcv
import numpy as np
from mmcv.transforms import BaseTransform
from mmengine import fileio
from PIL import Image, ImageOps

from mlkd.registry import TRANSFORMS

__all__ = ['PillowLoadResize']

_FILTERS = {
    'nearest': Image.Resampling.NEAREST,
    'bilinear': Image.Resampling.BILINEAR,
    'bicubic': Image.Resampling.BICUBIC,
    'box': Image.Resampling.BOX,
    'lanczos': Image.Resampling.LANCZOS,
    'hamming': Image.Resampling.HAMMING,
}


@TRANSFORMS.register_module()
class PillowLoadResize(BaseTransform):
    """``LoadImageFromFile(imdecode_backend='pillow')`` + ``Resize(scale, keep_ratio=False,
    backend='pillow', interpolation)`` in one transform, with the same output.

    Decodes ``img_path`` with PIL (EXIF orientation applied, as mmcv's pillow backend does),
    resizes to ``scale`` ignoring the aspect ratio with PIL's ``interpolation`` filter, and stores
    a BGR ``uint8`` ``[h, w, 3]`` array. Images that PIL does not hold as RGB or grayscale
    (e.g. CMYK, palette, LA) go through mmcv's two functions unchanged, so every image gives the
    array the two-step pipeline gives.

    Required keys: ``img_path``. Added keys: ``img``, ``img_shape`` (``(h, w)`` after resizing),
    ``ori_shape`` (``(H, W)`` as decoded), ``scale`` (``(w, h)``), ``scale_factor``
    (``(w / W, h / H)``), ``keep_ratio`` (``False``).

    Args:
        scale: output ``(w, h)``, or one int for a square.
        interpolation: PIL filter name (``'bilinear'``, the L2D protocol's, ``'nearest'``,
            ``'bicubic'``, ``'box'``, ``'lanczos'``, ``'hamming'``).
        backend_args: file backend arguments, as ``LoadImageFromFile``'s.
    """

    def __init__(
        self,
        scale: int | Sequence[int],
        interpolation: str = 'bilinear',
        backend_args: dict | None = None,
    ) -> None:
        if isinstance(scale, int):
            scale = (scale, scale)
        if len(scale) != 2 or min(scale) < 1:
            raise ValueError(f'PillowLoadResize: scale must be (w, h) >= 1, got {scale!r}')
        if interpolation not in _FILTERS:
            raise ValueError(
                f'PillowLoadResize: interpolation must be one of {sorted(_FILTERS)}, '
                f'got {interpolation!r}'
            )
        self.scale = (int(scale[0]), int(scale[1]))
        self.interpolation = interpolation
        self.backend_args = backend_args

    def transform(self, results: dict) -> dict:
        content = fileio.get(results['img_path'], backend_args=self.backend_args)
        image = ImageOps.exif_transpose(Image.open(io.BytesIO(content)))
        if image.mode in ('RGB', 'L'):
            original = (image.height, image.width)
            rgb = image if image.mode == 'RGB' else image.convert('RGB')
            resized = rgb.resize(self.scale, _FILTERS[self.interpolation])
            img = np.ascontiguousarray(np.asarray(resized)[:, :, ::-1])  # RGB -> BGR
        else:  # rare modes: mmcv's own conversion, then its resize
            decoded = mmcv.imfrombytes(content, backend='pillow')
            original = decoded.shape[:2]
            img = mmcv.imresize(
                decoded, self.scale, interpolation=self.interpolation, backend='pillow'
            )
        results['img'] = img
        results['img_shape'] = img.shape[:2]
        results['ori_shape'] = original
        results['scale'] = self.scale
        results['scale_factor'] = (self.scale[0] / original[1], self.scale[1] / original[0])
        results['keep_ratio'] = False
        return results

    def __repr__(self) -> str:
        return f'{type(self).__name__}(scale={self.scale}, interpolation={self.interpolation!r})'
