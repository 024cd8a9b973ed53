"""MultiGlyphs: the demo's pretraining task, mosaics of synthetic glyphs that are not digits.

The papers' teachers and students start from ImageNet-pretrained weights; the MultiDigits demo
stands this in with a pretraining stage on a *different* task (``configs/pretrain/``,
``docs/demo.md``). A MultiGlyphs image is laid out exactly like a MultiDigits image (a ``grid x
grid`` mosaic, 1..``max_digits`` occupied cells, per-cell brightness, background noise; the
composition code is MultiDigits'), but each cell holds one of 12 geometric glyphs (plus, cross,
squares, diamonds, a triangle, bars, a checker, dots, a bow tie) instead of a handwritten digit;
the label is the set of glyph classes present. No glyph class is a digit, and no pixel comes from
the digit scans, so pretraining on it sees nothing of the demo's data.

The glyphs are drawn from a seed, without any file: every glyph is a shape given by inequalities
on its coordinates, jittered per glyph (centre, scale, stroke width), rendered at 4 x 4 samples
per pixel and averaged. Only additions, multiplications, divisions and comparisons of float64
numbers are used (no trigonometry, whose last bit varies between math libraries), so the same
arguments give bit-identical images on any IEEE-754 machine with the same numpy random stream
(``tests/datasets/test_multiglyphs.py`` checks a recorded digest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mlkd.registry import DATASETS

from .multidigits import _SPLITS, MultiDigits

__all__ = ['GLYPH_CLASSES', 'MultiGlyphs', 'render_glyphs']

#: Side of a rendered glyph in pixels (upsampled to the mosaic's cell size like a digit scan).
GLYPH_SIZE = 16
#: Samples per pixel side (anti-aliasing by averaging ``_SUPERSAMPLE**2`` inside-tests).
_SUPERSAMPLE = 4

Shape = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _plus(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    inside = (np.abs(x) < 1) & (np.abs(y) < 1)
    return inside & ((np.abs(x) < t) | (np.abs(y) < t))


def _cross(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    inside = (np.abs(x) < 1) & (np.abs(y) < 1)
    # |x - y| / sqrt(2) is the distance to the diagonal; 1.5 t keeps the stroke width close to t.
    return inside & ((np.abs(x - y) < 1.5 * t) | (np.abs(x + y) < 1.5 * t))


def _square(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    r = np.maximum(np.abs(x), np.abs(y))
    return (r < 1) & (r > 1 - 2 * t)


def _filled_square(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.maximum(np.abs(x), np.abs(y)) < 0.75


def _diamond(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    r = np.abs(x) + np.abs(y)
    return (r < 1.1) & (r > 1.1 - 3 * t)


def _filled_diamond(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.abs(x) + np.abs(y) < 1.0


def _triangle(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    # Apex at the top (y = -0.9), base at y = 0.8; y grows downwards as in an image.
    return (y > -0.9) & (y < 0.8) & (np.abs(x) < (y + 0.9) / 1.7)


def _two_bars(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (np.abs(x) < 1) & (np.abs(np.abs(y) - 0.5) < t)


def _two_pillars(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (np.abs(y) < 1) & (np.abs(np.abs(x) - 0.5) < t)


def _checker(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (x * y > 0) & (np.abs(x) < 0.9) & (np.abs(y) < 0.9)


def _four_dots(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    dx, dy = np.abs(x) - 0.5, np.abs(y) - 0.5
    return dx * dx + dy * dy < (t + 0.12) * (t + 0.12)


def _bow_tie(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (np.abs(y) < np.abs(x)) & (np.abs(x) < 0.95)


#: Glyph class names, in label order, and their shapes (inside-tests on centred, scaled
#: coordinates in about [-1, 1]; ``t`` is the stroke half-width).
_SHAPES: dict[str, Shape] = {
    'plus': _plus,
    'cross': _cross,
    'square': _square,
    'filled_square': _filled_square,
    'diamond': _diamond,
    'filled_diamond': _filled_diamond,
    'triangle': _triangle,
    'two_bars': _two_bars,
    'two_pillars': _two_pillars,
    'checker': _checker,
    'four_dots': _four_dots,
    'bow_tie': _bow_tie,
}
GLYPH_CLASSES = tuple(_SHAPES)


def render_glyphs(per_class: int, seed: int | list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``per_class`` jittered glyphs of every class.

    Each glyph gets its own centre offset (uniform in ±0.15 of the half-side), scale (0.65..0.9)
    and stroke half-width (0.14..0.24, in the glyph's own units), all from
    ``np.random.default_rng(seed)``.

    Args:
        per_class: glyphs per class (>= 1).
        seed: seed (or seed sequence) of the jitter.

    Returns:
        tuple: ``glyphs`` float32 (12 * per_class, 16, 16) with values in 0..255 (multiples of
        255 / 16) and ``targets`` int64 (12 * per_class,), class-major (all glyphs of class 0,
        then class 1, ...).
    """
    if not isinstance(per_class, int) or per_class < 1:
        raise ValueError(f'render_glyphs: per_class must be a positive int, got {per_class!r}')
    rng = np.random.default_rng(seed)
    num_classes, side = len(GLYPH_CLASSES), GLYPH_SIZE * _SUPERSAMPLE
    jitter = dict(
        cx=rng.uniform(-0.15, 0.15, size=(num_classes, per_class, 1, 1)),
        cy=rng.uniform(-0.15, 0.15, size=(num_classes, per_class, 1, 1)),
        scale=rng.uniform(0.65, 0.9, size=(num_classes, per_class, 1, 1)),
        half_width=rng.uniform(0.14, 0.24, size=(num_classes, per_class, 1, 1)),
    )
    # Sample positions in [-1, 1]: exact binary fractions, (side,) broadcast to (1, side, side).
    pos = (np.arange(side, dtype=np.float64) + 0.5) / (side / 2) - 1.0
    glyphs = np.empty((num_classes, per_class, GLYPH_SIZE, GLYPH_SIZE), dtype=np.float32)
    # One vectorised render per class (12 shapes, each its own inequalities).
    for k, shape in enumerate(_SHAPES.values()):
        x = (pos[None, None, :] - jitter['cx'][k]) / jitter['scale'][k]
        y = (pos[None, :, None] - jitter['cy'][k]) / jitter['scale'][k]
        inside = shape(x, y, jitter['half_width'][k]).astype(np.float64)
        # Average each pixel's SUPERSAMPLE x SUPERSAMPLE block of inside-tests.
        coverage = inside.reshape(
            per_class, GLYPH_SIZE, _SUPERSAMPLE, GLYPH_SIZE, _SUPERSAMPLE
        ).mean(axis=(2, 4))
        glyphs[k] = coverage * 255.0
    targets = np.repeat(np.arange(num_classes, dtype=np.int64), per_class)
    return glyphs.reshape(-1, GLYPH_SIZE, GLYPH_SIZE), targets


@DATASETS.register_module()
class MultiGlyphs(MultiDigits):
    """Mosaics of 1..``max_digits`` synthetic glyphs, labelled by the set of glyphs present.

    Same layout, arguments and data_info keys as :class:`MultiDigits` (``max_digits`` is the
    largest number of glyphs per image; ``source_ids`` index this split's glyph pool), except
    that the cells come from a pool of ``glyphs_per_class`` glyphs per class rendered for this
    split alone (:func:`render_glyphs`, seeded by ``(glyph_seed, split)``): train, val and test
    pools are different drawings, disjoint by construction. ``val_fraction``, ``test_fraction``
    and ``split_seed`` (MultiDigits' scan partition) do not apply and are rejected.

    Args:
        glyphs_per_class: size of this split's pool, per class.
        glyph_seed: seed of the pools' drawings (``seed`` draws the mosaics, as in MultiDigits).
        **kwargs: :class:`MultiDigits` arguments.
    """

    METAINFO = {'classes': GLYPH_CLASSES}

    def __init__(self, glyphs_per_class: int = 100, glyph_seed: int = 0, **kwargs: Any) -> None:
        for key in ('val_fraction', 'test_fraction', 'split_seed'):
            if key in kwargs:
                raise TypeError(
                    f'MultiGlyphs: `{key}` selects digit scans and does not apply; '
                    'each split draws its own glyphs (remove it from the config)'
                )
        if not isinstance(glyphs_per_class, int) or glyphs_per_class < 1:
            raise ValueError(
                f'MultiGlyphs: glyphs_per_class must be a positive int, got {glyphs_per_class!r}'
            )
        if not isinstance(glyph_seed, int) or glyph_seed < 0:
            raise ValueError(
                f'MultiGlyphs: glyph_seed must be a non-negative int, got {glyph_seed!r}'
            )
        # Read by _source_pool, which MultiDigits.__init__ reaches through load_data_list.
        self.glyphs_per_class = glyphs_per_class
        self.glyph_seed = glyph_seed
        # MultiDigits' digit-scan pools are not used; test_fraction > 0 only lets split='test'
        # pass MultiDigits' check.
        super().__init__(test_fraction=0.2, val_fraction=0.2, **kwargs)
        self.source_indices = np.arange(len(GLYPH_CLASSES) * glyphs_per_class, dtype=np.int64)

    def _source_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """This split's glyph pool: float32 (P, 16, 16) in 0..255 and int64 (P,) classes."""
        self.source_indices = np.arange(len(GLYPH_CLASSES) * self.glyphs_per_class, dtype=np.int64)
        return render_glyphs(self.glyphs_per_class, [self.glyph_seed, _SPLITS.index(self.split)])

    def extra_repr(self) -> list[str]:
        """Lines shown by ``repr(dataset)``."""
        return [
            f'Split: \t{self.split} ({len(self.source_indices)} glyphs, '
            f'{self.glyphs_per_class} per class)'
        ] + super().extra_repr()[1:]
