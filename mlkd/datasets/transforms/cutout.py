"""ASL / L2D's always-on half-size cutout, filled with one random colour.

mmpretrain's ``Cutout`` pastes a fixed fill value with a probability; the ASL / ML-Decoder / L2D
training recipes instead paint, on every image, one box whose side is half the image size in a
colour drawn at random per image (their ``CutoutPIL(cutout_factor=0.5)``). This module is a fresh
numpy implementation of that behaviour (methods.md section 4.1.3).
"""

from __future__ import annotations

import numpy as np
from mmcv.transforms import BaseTransform

from mlkd.registry import TRANSFORMS

__all__ = ['RandomColorCutout']


@TRANSFORMS.register_module()
class RandomColorCutout(BaseTransform):
    """Paint one randomly placed box of side ``int(cutout_factor * S + 0.5)`` in a random colour.

    For an image of height ``H`` and width ``W`` the nominal box sides are
    ``side_h = int(cutout_factor * H + 0.5)`` and ``side_w = int(cutout_factor * W + 0.5)`` (112 at
    224 px). The centre ``(cy, cx)`` is uniform over the pixel grid, so the box may hang over the
    border; it is clipped to the image. Random draws, all from numpy's global RNG (which MMEngine
    seeds per worker), in this order: ``cy = randint(H)``, ``cx = randint(W)``, then the colour
    ``randint(0, 256, size=C)``. When ``prob < 1`` one ``rand()`` is drawn first to decide whether
    to apply; with the default ``prob=1`` nothing is drawn for it, keeping the L2D draw order.

    Box extent (rows; columns alike):

    * ``inclusive=True`` (default, L2D parity): rows ``clip(cy - side_h // 2, 0, H)`` to
      ``clip(cy + side_h // 2, 0, H)`` **inclusive**, because L2D draws the box with PIL's
      ``ImageDraw.rectangle``, which paints both corner pixels. An unclipped box therefore spans
      ``2 * (side // 2) + 1`` pixels (113 at 224 px).
    * ``inclusive=False``: rows ``[cy - side_h // 2, cy - side_h // 2 + side_h)``, exactly
      ``side_h`` pixels before clipping.

    L2D reads ``PIL.Image.size`` (``(W, H)``) as ``(h, w)``, i.e. it swaps the axes; that only
    matters for non-square images, and the L2D pipeline resizes to a square first. This class uses
    the true axes.

    Required keys: ``img`` (``np.ndarray``, ``[H, W, C]`` or ``[H, W]``, any dtype; uint8 in
    practice). Modified keys: ``img`` (a painted copy; the input array is not written to, so a
    cached or shared array stays intact). Added keys: ``cutout_box`` (``(y1, x1, y2, x2)`` with
    exclusive ends, the painted region after clipping) and ``cutout_color`` (``tuple[int]``, one
    value per channel), or neither when the transform was skipped.

    Args:
        cutout_factor: box side as a fraction of the image side, in ``(0, 1]``.
        prob: probability of applying the cutout; L2D applies it always.
        inclusive: see above.
        max_value: the colour is drawn uniformly from ``0 .. max_value`` per channel (255 for
            uint8 images). The channel order of the image (BGR after mmcv loading) is irrelevant
            because every channel is drawn independently and uniformly.
    """

    def __init__(
        self,
        cutout_factor: float = 0.5,
        prob: float = 1.0,
        inclusive: bool = True,
        max_value: int = 255,
    ) -> None:
        if not 0.0 < cutout_factor <= 1.0:
            raise ValueError(
                f'RandomColorCutout: cutout_factor must be in (0, 1], got {cutout_factor}'
            )
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f'RandomColorCutout: prob must be in [0, 1], got {prob}')
        if max_value < 0:
            raise ValueError(f'RandomColorCutout: max_value must be >= 0, got {max_value}')
        self.cutout_factor = float(cutout_factor)
        self.prob = float(prob)
        self.inclusive = bool(inclusive)
        self.max_value = int(max_value)

    @staticmethod
    def _span(centre: int, side: int, size: int, inclusive: bool) -> tuple[int, int]:
        """Clipped ``[start, stop)`` of one axis of the box."""
        half = side // 2
        start = centre - half
        # PIL's rectangle paints the end coordinate too, hence the +1 in parity mode.
        stop = centre + half + 1 if inclusive else start + side
        return min(max(start, 0), size), min(max(stop, 0), size)

    def transform(self, results: dict) -> dict | None:
        """Paint the box into a copy of ``results['img']``.

        Args:
            results: transform state with ``img`` of shape ``[H, W, C]`` or ``[H, W]``.

        Returns:
            ``results`` with ``img`` (same shape and dtype), ``cutout_box`` and ``cutout_color``.
        """
        if 'img' not in results:
            raise KeyError('RandomColorCutout needs results["img"]; put it after LoadImageFromFile')
        img = results['img']
        if not isinstance(img, np.ndarray) or img.ndim not in (2, 3):
            raise TypeError(
                'RandomColorCutout expects results["img"] to be a numpy array of '
                f'shape [H, W, C] or [H, W], got {type(img).__name__} '
                f'{getattr(img, "shape", None)}'
            )
        # Decide first so that the draw order with prob == 1 matches L2D's (centre, then colour).
        if self.prob < 1.0 and np.random.rand() >= self.prob:
            return results
        height, width = img.shape[:2]
        channels = 1 if img.ndim == 2 else img.shape[2]
        side_h = int(self.cutout_factor * height + 0.5)
        side_w = int(self.cutout_factor * width + 0.5)
        cy = int(np.random.randint(height))
        cx = int(np.random.randint(width))
        color = np.random.randint(0, self.max_value + 1, size=channels)

        y1, y2 = self._span(cy, side_h, height, self.inclusive)
        x1, x2 = self._span(cx, side_w, width, self.inclusive)
        out = img.copy()
        out[y1:y2, x1:x2] = color.astype(img.dtype) if img.ndim == 3 else img.dtype.type(color[0])
        results['img'] = out
        results['cutout_box'] = (y1, x1, y2, x2)
        results['cutout_color'] = tuple(int(c) for c in color)
        return results

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(cutout_factor={self.cutout_factor}, '
            f'prob={self.prob}, inclusive={self.inclusive}, max_value={self.max_value})'
        )
