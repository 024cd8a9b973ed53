"""DigitScenes: a bundled multi-label benchmark with COCO-like label statistics.

MultiDigits has 10 labels, about 4.5 per image, every class equally frequent and every digit the
same size and brightness: a teacher's scores on it carry little that the labels do not. A
DigitScenes image is a small "scene" of coloured handwritten digits (the scans of
:func:`~mlkd.datasets.multidigits.load_digit_scans`, upsampled like MultiDigits' cells) painted at
random places and sizes over a noisy background, and its labels are the set of (colour, digit)
classes present: 4 colours x 10 digits = 40 classes by default (``num_colours`` up to 10: 100
classes), named ``'red_3'`` and so on. What makes it COCO-like:

* **Long tail.** Classes follow a Zipf prior (``zipf_exponent``; the most frequent class is tens of
  times more frequent than the rarest) in an order drawn once from ``world_seed``.
* **Co-occurrence.** Each image belongs to one of ``num_topics`` latent scene topics, each a
  fixed set of ``topic_size`` classes; an object's class comes from the image's topic with
  probability ``topic_weight``, otherwise from the global prior. Classes of a topic co-occur.
* **Counts.** An image holds ``1 + Poisson(mean_objects - 1)`` objects (at most ``max_objects``;
  two may share a class), about 2-4 distinct labels on average.
* **Hard positives.** Each object is hard with probability ``hard_fraction``: either small
  (``hard_size`` pixels instead of ``object_size``) or faint (opacity ``hard_alpha`` instead of
  ``alpha``), with equal probability. Hard objects are painted first, so later objects occlude them.
* **Missed annotations** (off by default). ``missed_annotation=(easy, hard)``: the probability
  that an object of each kind is not annotated, as annotators miss small and faint objects; a
  class is a positive of ``gt_label`` when at least one of its objects is annotated, and
  ``gt_label_full`` keeps the true set. A config sets it on the training split only.

Nothing is downloaded: the class structure (priors, topics) depends on ``world_seed`` alone, so
train / val / test share it; images and layouts come from ``seed`` and the split, and the three
splits draw from disjoint pools of digit scans (``val_fraction`` / ``test_fraction`` /
``split_seed``, as :class:`~mlkd.datasets.MultiDigits`). Images are materialised in memory at
construction (vectorised over images; one pass per object slot and size), so a pipeline starts
with augmentations and ends with ``PackInputs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mmpretrain.datasets import MultiLabelDataset

from mlkd.registry import DATASETS

from .multidigits import (
    _SCAN_MAX,
    _SPLITS,
    MultiDigits,
    _interp_matrix,
    check_generated_split,
    load_digit_scans,
    split_source_indices,
)
from .observed_labels import ObservedLabelsMixin

__all__ = ['DIGIT_SCENE_CLASSES', 'PALETTE', 'DigitScenes', 'digit_scene_classes', 'scene_world']

#: Object colours (RGB factors of full intensity) in class order: class = colour index * 10 +
#: digit. A dataset of ``num_colours`` colours uses the first ones; the default four come first so
#: that every 40-class dataset keeps its bytes. Some are near each other on purpose (red / orange /
#: pink, blue / purple): a faint object's colour is then uncertain, as a class's look is in photos.
PALETTE = {
    'red': (1.0, 0.2, 0.2),
    'green': (0.2, 1.0, 0.25),
    'blue': (0.3, 0.45, 1.0),
    'yellow': (1.0, 0.95, 0.2),
    'cyan': (0.2, 0.95, 0.95),
    'magenta': (1.0, 0.25, 0.9),
    'orange': (1.0, 0.55, 0.1),
    'white': (1.0, 1.0, 1.0),
    'purple': (0.6, 0.3, 1.0),
    'pink': (1.0, 0.65, 0.75),
}
_DEFAULT_COLOURS = 4


def digit_scene_classes(num_colours: int = _DEFAULT_COLOURS) -> tuple[str, ...]:
    """Class names of a DigitScenes of ``num_colours`` colours (1..10): ``'<colour>_<digit>'``
    in class order (``num_colours * 10`` of them)."""
    if not isinstance(num_colours, int) or not 1 <= num_colours <= len(PALETTE):
        raise ValueError(
            f'DigitScenes: num_colours must be an int in 1..{len(PALETTE)}, got {num_colours!r}'
        )
    return tuple(
        f'{colour}_{digit}' for colour in list(PALETTE)[:num_colours] for digit in range(10)
    )


DIGIT_SCENE_CLASSES = digit_scene_classes()
_DEFAULT_NUM_SAMPLES = {'train': 3000, 'val': 1000, 'test': 1000}
# Images composed at a time (bounds the float buffer; the random streams do not depend on it).
_CHUNK = 1024


def scene_world(
    num_topics: int,
    topic_size: int,
    zipf_exponent: float,
    world_seed: int,
    num_classes: int = len(DIGIT_SCENE_CLASSES),
) -> tuple[np.ndarray, np.ndarray]:
    """The class structure shared by every split: the class prior and the topics.

    Returns:
        tuple: ``prior`` float64 ``[C]`` (Zipf: ``1 / rank**zipf_exponent`` over a random order
        of the classes, normalised; C = ``num_classes``) and ``topics`` bool ``[num_topics, C]``:
        a random partition of the classes into ``num_topics`` groups (so every class belongs to a
        topic), each topic topped up to ``topic_size`` classes with classes drawn uniformly from
        the others (so topics overlap).
    """
    if topic_size * num_topics < num_classes:
        raise ValueError(
            f'DigitScenes: num_topics x topic_size ({num_topics} x {topic_size}) must cover the '
            f'{num_classes} classes'
        )
    rng = np.random.default_rng([world_seed, 28])
    rank = rng.permutation(num_classes)
    prior = 1.0 / (rank + 1.0) ** zipf_exponent
    prior /= prior.sum()
    group = rng.permutation(num_classes) % num_topics  # class -> its topic of the partition
    topics = group[None, :] == np.arange(num_topics)[:, None]
    # Top up each topic with its lowest random keys among the classes outside it.
    keys = np.where(topics, np.inf, rng.random((num_topics, num_classes)))
    extra = topic_size - topics.sum(axis=1, keepdims=True)
    topics |= keys.argsort(axis=1).argsort(axis=1) < extra
    return prior, topics


def _draw_categorical(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One draw per row of ``probs [..., K]`` (rows sum to 1), by inverse CDF."""
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random(probs.shape[:-1] + (1,)) * cdf[..., -1:]
    return np.minimum((u >= cdf).sum(axis=-1), probs.shape[-1] - 1)


@DATASETS.register_module()
class DigitScenes(ObservedLabelsMixin, MultiLabelDataset):
    """Scenes of coloured handwritten digits with long-tailed, co-occurring labels.

    Each data_info holds ``img`` (uint8 ``(H, W, 3)``), ``img_shape`` / ``ori_shape``,
    ``gt_label`` (sorted annotated classes), ``gt_label_full`` (sorted classes present),
    ``object_labels`` / ``object_hard`` (per object slot, ``max_objects`` long: the class, or -1
    for an empty slot, and whether the object is hard), ``topic`` and ``sample_idx``.

    Args:
        split: ``'train'``, ``'val'`` or ``'test'`` (its own pool of digit scans).
        num_samples: images; ``None`` gives 3000 / 1000 / 1000.
        image_size: side of the square image.
        seed: seed of the layouts, images and annotation misses (with the split).
        world_seed: seed of the class prior and the topics (shared by the splits).
        num_colours: colours of :data:`PALETTE` in use (1..10); the classes are their
            ``num_colours * 10`` (colour, digit) pairs.
        num_topics / topic_size / topic_weight: the latent scene topics (see the module doc).
        zipf_exponent: exponent of the class prior.
        mean_objects / max_objects: objects per image, ``1 + Poisson(mean_objects - 1)`` clipped.
        object_size / hard_size: inclusive ranges of an easy / small object's side in pixels.
        alpha / hard_alpha: ranges of an easy / faint object's opacity.
        hard_fraction: probability that an object is hard (small or faint, equally likely).
        missed_annotation: ``(easy, hard)`` probabilities that an object is not annotated.
        noise: largest background-noise value (0..255) added to every channel of every pixel.
        grid / jitter: ``None`` places objects freely (they overlap at will); an int places each
            object of an image in its own cell of a ``grid x grid`` layout, shifted by up to
            ``jitter`` pixels (objects larger than a cell still overlap their neighbours).
        val_fraction / test_fraction / split_seed: the scan pools, as in MultiDigits.
        pipeline / test_mode / **kwargs: :class:`mmpretrain.datasets.BaseDataset` arguments
            (also ``observed_labels``, :mod:`mlkd.datasets.observed_labels`).
    """

    METAINFO = {'classes': DIGIT_SCENE_CLASSES}

    def __init__(
        self,
        split: str = 'train',
        num_samples: int | None = None,
        image_size: int = 32,
        seed: int = 0,
        world_seed: int = 0,
        num_colours: int = _DEFAULT_COLOURS,
        num_topics: int = 8,
        topic_size: int = 8,
        topic_weight: float = 0.8,
        zipf_exponent: float = 1.0,
        mean_objects: float = 3.5,
        max_objects: int = 6,
        object_size: Sequence[int] = (11, 16),
        hard_size: Sequence[int] = (6, 8),
        alpha: Sequence[float] = (0.75, 1.0),
        hard_alpha: Sequence[float] = (0.25, 0.45),
        hard_fraction: float = 0.3,
        missed_annotation: Sequence[float] = (0.0, 0.0),
        noise: int = 24,
        grid: int | None = None,
        jitter: float = 2.0,
        val_fraction: float = 0.2,
        test_fraction: float = 0.2,
        split_seed: int = 0,
        pipeline: Sequence = (),
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        check_generated_split('DigitScenes', split, kwargs)
        num_samples = _DEFAULT_NUM_SAMPLES[split] if num_samples is None else num_samples
        self._check_int('num_samples', num_samples, 1)
        self._check_int('seed', seed, 0)
        self._check_int('world_seed', world_seed, 0)
        self._check_int('num_colours', num_colours, 1, len(PALETTE))
        num_classes = num_colours * 10
        self._check_int('num_topics', num_topics, 1)
        self._check_int('topic_size', topic_size, 1, num_classes)
        self._check_int('max_objects', max_objects, 1)
        self._check_int('noise', noise, 0, 255)
        for name, value in (('topic_weight', topic_weight), ('hard_fraction', hard_fraction)):
            self._check_range(name, (value, value), 0.0, 1.0)
        if not 1.0 <= mean_objects <= max_objects:
            raise ValueError(
                f'DigitScenes: mean_objects must be in [1, max_objects={max_objects}], '
                f'got {mean_objects!r}'
            )
        if zipf_exponent < 0:
            raise ValueError(f'DigitScenes: zipf_exponent must be >= 0, got {zipf_exponent!r}')
        self._check_range('object_size', object_size, 2, image_size)
        self._check_range('hard_size', hard_size, 2, image_size)
        self._check_range('alpha', alpha, 0.0, 1.0)
        self._check_range('hard_alpha', hard_alpha, 0.0, 1.0)
        if len(missed_annotation) != 2 or not all(0.0 <= p < 1.0 for p in missed_annotation):
            raise ValueError(
                'DigitScenes: missed_annotation must be (easy, hard) probabilities in [0, 1), '
                f'got {missed_annotation!r}'
            )
        self.split = split
        self.num_samples = num_samples
        self.image_size = int(image_size)
        self.seed = seed
        self.world_seed = world_seed
        self.topic_weight = float(topic_weight)
        self.mean_objects = float(mean_objects)
        self.max_objects = max_objects
        self.object_size = (int(object_size[0]), int(object_size[1]))
        self.hard_size = (int(hard_size[0]), int(hard_size[1]))
        self.alpha = (float(alpha[0]), float(alpha[1]))
        self.hard_alpha = (float(hard_alpha[0]), float(hard_alpha[1]))
        self.hard_fraction = float(hard_fraction)
        self.missed_annotation = (float(missed_annotation[0]), float(missed_annotation[1]))
        self.noise = noise
        if grid is not None:
            self._check_int('grid', grid, 1)
            if grid * grid < max_objects:
                raise ValueError(
                    f'DigitScenes: grid placement needs grid * grid >= max_objects ({max_objects}), '
                    f'got grid={grid}'
                )
        if jitter < 0:
            raise ValueError(f'DigitScenes: jitter must be >= 0, got {jitter!r}')
        self.grid = grid
        self.jitter = float(jitter)
        self.num_colours = num_colours
        self.prior, self.topics = scene_world(
            num_topics, topic_size, zipf_exponent, world_seed, num_classes
        )
        self.source_indices = split_source_indices(split, val_fraction, split_seed, test_fraction)
        # The class names follow num_colours unless the config names them itself.
        metainfo = {
            'classes': digit_scene_classes(num_colours),
            **(kwargs.pop('metainfo', None) or {}),
        }
        named = metainfo['classes']
        if not isinstance(named, str) and len(named) != num_classes:
            raise ValueError(
                f'DigitScenes: metainfo.classes names {len(named)} classes, but num_colours='
                f'{num_colours} makes {num_classes}'
            )
        super().__init__(
            ann_file='', metainfo=metainfo, pipeline=pipeline, test_mode=test_mode, **kwargs
        )

    @staticmethod
    def _check_int(name: str, value: Any, low: int, high: int | None = None) -> None:
        if not isinstance(value, int) or value < low or (high is not None and value > high):
            bound = f'in {low}..{high}' if high is not None else f'>= {low}'
            raise ValueError(f'DigitScenes: {name} must be an int {bound}, got {value!r}')

    @staticmethod
    def _check_range(name: str, value: Sequence, low: float, high: float) -> None:
        if len(value) != 2 or not low <= value[0] <= value[1] <= high:
            raise ValueError(
                f'DigitScenes: {name} must be (low, high) with {low} <= low <= high <= {high}, '
                f'got {value!r}'
            )

    # ------------------------------------------------------------------ layout
    def _layout(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Draw every image's topic and objects; arrays ``[N]`` or ``[N, M]`` (M = max_objects),
        object slots in painting order (hard objects first), empty slots last with class -1."""
        n, m = self.num_samples, self.max_objects
        topic = rng.integers(0, len(self.topics), size=n)
        counts = np.minimum(1 + rng.poisson(self.mean_objects - 1.0, size=n), m)
        in_topic = self.topics[topic] * self.prior  # [N, C]
        in_topic /= in_topic.sum(axis=1, keepdims=True)
        from_topic = rng.random((n, m)) < self.topic_weight
        probs = np.where(from_topic[..., None], in_topic[:, None, :], self.prior)
        classes = _draw_categorical(rng, probs)
        hard = rng.random((n, m)) < self.hard_fraction
        small = rng.random((n, m)) < 0.5  # a hard object is small, otherwise faint
        size = np.where(
            hard & small,
            rng.integers(self.hard_size[0], self.hard_size[1] + 1, size=(n, m)),
            rng.integers(self.object_size[0], self.object_size[1] + 1, size=(n, m)),
        )
        alpha = np.where(
            hard & ~small,
            rng.uniform(*self.hard_alpha, size=(n, m)),
            rng.uniform(*self.alpha, size=(n, m)),
        )
        top, left = self._corners(rng, size)
        missed = rng.random((n, m)) < np.where(hard, *self.missed_annotation[::-1])
        scan_key = rng.random((n, m))
        active = np.arange(m)[None, :] < counts[:, None]
        # Painting order: active hard objects, then active easy ones, then empty slots.
        order = np.argsort(np.where(active, np.where(hard, 0, 1), 2), axis=1, kind='stable')
        take = lambda a: np.take_along_axis(a, order, axis=1)  # noqa: E731
        active = take(active)
        return dict(
            topic=topic,
            classes=np.where(active, take(classes), -1),
            hard=take(hard) & active,
            size=take(size),
            alpha=take(alpha),
            top=take(top),
            left=take(left),
            missed=take(missed) & active,
            scan_key=take(scan_key),
            active=active,
        )

    def _corners(self, rng: np.random.Generator, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top-left corners ``[N, M]`` of objects of sides ``size [N, M]``.

        Free placement (``grid=None``): uniform over the positions where the object fits, so
        objects overlap freely. Grid placement: every object of an image gets its own cell of a
        ``grid x grid`` layout (a uniformly random set of cells), centred in it and shifted by up
        to ``jitter`` pixels each way, then clipped into the image; objects larger than a cell
        overlap their neighbours partly.
        """
        n, m = size.shape
        if self.grid is None:
            top = np.floor(rng.random((n, m)) * (self.image_size - size + 1)).astype(np.int64)
            left = np.floor(rng.random((n, m)) * (self.image_size - size + 1)).astype(np.int64)
            return top, left
        cell = rng.random((n, self.grid * self.grid)).argsort(axis=1)[:, :m]
        pitch = self.image_size / self.grid
        shift = rng.uniform(-self.jitter, self.jitter, size=(2, n, m))
        corners = []
        for axis, index in enumerate((cell // self.grid, cell % self.grid)):
            centre = (index + 0.5) * pitch + shift[axis]
            corner = np.rint(centre - size / 2.0).astype(np.int64)
            corners.append(np.clip(corner, 0, self.image_size - size))
        return corners[0], corners[1]

    def _scan_ids(self, classes: np.ndarray, scan_key: np.ndarray) -> np.ndarray:
        """A scan of this split's pool showing each object's digit, ``[N, M]`` indices into the
        pool (uniform among the pool's scans of that digit; 0 for empty slots)."""
        _, targets = load_digit_scans()
        pool_digits = targets[self.source_indices]
        by_digit = np.argsort(pool_digits, kind='stable')
        counts = np.bincount(pool_digits, minlength=10)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        digit = np.where(classes >= 0, classes % 10, 0)
        within = np.floor(scan_key * counts[digit]).astype(np.int64)
        return by_digit[starts[digit] + within]

    def _render(self, layout: dict, rng: np.random.Generator) -> np.ndarray:
        """Paint the objects (alpha over, in slot order) and add noise: uint8 ``[N, H, W, 3]``."""
        scans, _ = load_digit_scans()
        pool = scans[self.source_indices].astype(np.float32) / np.float32(_SCAN_MAX)
        scan_ids = self._scan_ids(layout['classes'], layout['scan_key'])
        palette = list(PALETTE.values())[: self.num_colours]
        colours = np.array(palette, dtype=np.float32) * np.float32(255.0)
        sizes = np.unique(layout['size'][layout['active']])
        # Every pool scan resampled once per object size that occurs: {size: [P, size, size]}.
        resampled = {}
        for side in sizes:
            weights = _interp_matrix(pool.shape[-1], int(side))
            resampled[int(side)] = np.einsum('ij,pjk,lk->pil', weights, pool, weights)
        n, size = self.num_samples, self.image_size
        images = np.empty((n, size, size, 3), dtype=np.uint8)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            canvas = np.zeros((stop - start, size, size, 3), dtype=np.float32)
            for slot in range(self.max_objects):
                for side in sizes:
                    rows = np.flatnonzero(
                        layout['active'][start:stop, slot]
                        & (layout['size'][start:stop, slot] == side)
                    )
                    if rows.size == 0:
                        continue
                    obj = rows + start
                    mask = resampled[int(side)][scan_ids[obj, slot]]  # [k, s, s] in 0..1
                    mask = mask * layout['alpha'][obj, slot, None, None].astype(np.float32)
                    colour = colours[layout['classes'][obj, slot] // 10]  # [k, 3]
                    span = np.arange(side)
                    ys = layout['top'][obj, slot, None] + span  # [k, s]
                    xs = layout['left'][obj, slot, None] + span
                    where = (rows[:, None, None], ys[:, :, None], xs[:, None, :])
                    under = canvas[where]  # [k, s, s, 3]
                    a = mask[..., None]
                    canvas[where] = under * (1.0 - a) + a * colour[:, None, None, :]
            if self.noise > 0:
                canvas += rng.integers(0, self.noise + 1, size=canvas.shape).astype(np.float32)
            images[start:stop] = np.clip(np.rint(canvas), 0, 255).astype(np.uint8)
        return images

    def load_data_list(self) -> list[dict]:
        """Materialise all samples (called once by ``full_init``)."""
        rng = np.random.default_rng([self.seed, _SPLITS.index(self.split), 28])
        layout = self._layout(rng)
        images = self._render(layout, rng)
        classes = layout['classes']
        annotated = np.where(layout['missed'], -1, classes)
        shape = (self.image_size, self.image_size)
        data_list = []
        for idx in range(self.num_samples):
            data_list.append(
                dict(
                    img=images[idx],
                    img_shape=shape,
                    ori_shape=shape,
                    gt_label=sorted({int(c) for c in annotated[idx] if c >= 0}),
                    gt_label_full=sorted({int(c) for c in classes[idx] if c >= 0}),
                    object_labels=classes[idx].tolist(),
                    object_hard=layout['hard'][idx].tolist(),
                    topic=int(layout['topic'][idx]),
                    sample_idx=idx,
                )
            )
        return data_list

    #: Multi-hot ``uint8 [N, C]`` of ``gt_label`` (``full=True``: ``gt_label_full``).
    get_label_matrix = MultiDigits.get_label_matrix

    def extra_repr(self) -> list[str]:
        """Lines shown by ``repr(dataset)``."""
        return [
            f'Split: \t{self.split} ({len(self.source_indices)} source scans)',
            f'Image size: \t{self.image_size}, up to {self.max_objects} objects '
            f'(mean {self.mean_objects}), hard fraction {self.hard_fraction}',
            f'Seed: \t{self.seed} (world {self.world_seed})',
        ]
