"""MultiDigits: a small, real, download-free multi-label image dataset.

Every image is a ``grid x grid`` mosaic of handwritten digit scans taken from the copy of the
UCI optical digits data that ships inside scikit-learn (:func:`sklearn.datasets.load_digits`,
1797 scans of 8x8 pixels, intensities 0..16). Between 1 and ``max_digits`` cells hold a digit
(upsampled to the cell size); the label of the image is the *set* of digit classes present.

Why this dataset exists: the toolbox needs a multi-label task that is real (actual handwriting,
not synthetic blobs), small enough to train a teacher and a student on two CPU cores in minutes,
and available offline in CI. Train and val are composed from *disjoint* source scans, so val
accuracy measures generalisation to unseen handwriting rather than recognition of memorised
pixels re-arranged in a new mosaic.

Images are materialised in memory at construction time (a few MB for the defaults), so a pipeline
starts directly with augmentations such as ``RandomFlip`` / ``RandomCrop`` and ends with
``PackInputs``; there is no ``LoadImageFromFile`` step. :func:`export_image_folder` writes the
same samples to disk for path-based datasets such as :class:`~mlkd.datasets.MultiLabelImageList`.
"""

from __future__ import annotations

import functools
import os
import os.path as osp
from collections.abc import Sequence
from typing import Any

import numpy as np
from mmpretrain.datasets import MultiLabelDataset

from mlkd.registry import DATASETS

from .observed_labels import ObservedLabelsMixin

__all__ = ['MultiDigits', 'export_image_folder', 'load_digit_scans']

_VARIANTS = ('multi_label', 'single_label', 'single_positive')
_SPLITS = ('train', 'val', 'test')
_SCAN_MAX = 16.0  # sklearn's 8x8 digit scans take integer values 0..16
_DEFAULT_NUM_SAMPLES = {'train': 2000, 'val': 500, 'test': 500}
# Mosaics are composed in chunks so that large ``image_size``/``num_samples`` settings do not
# allocate one huge float buffer; the chunk size is a constant because the noise stream is drawn
# per chunk and must not depend on anything but the arguments.
_CHUNK = 1024


def check_generated_split(dataset: str, split: str, kwargs: dict) -> None:
    """Refuse a split name outside train / val / test and file arguments (``ann_file``,
    ``data_root``, ``data_prefix``) given to an in-memory dataset; drops their empty values from
    ``kwargs`` (in place), which mmengine's dataset would otherwise receive."""
    for key in ('ann_file', 'data_root', 'data_prefix'):
        if kwargs.get(key):
            raise TypeError(
                f'{dataset} does not read files; remove `{key}` from its '
                'config (images are generated from sklearn.datasets.load_digits)'
            )
        kwargs.pop(key, None)
    if split not in _SPLITS:
        raise ValueError(f'{dataset}: split must be one of {_SPLITS}, got {split!r}')


@functools.lru_cache(maxsize=1)
def load_digit_scans() -> tuple[np.ndarray, np.ndarray]:
    """Return the scikit-learn digit scans, loaded once per process.

    Returns:
        tuple: ``images`` float32 array of shape (1797, 8, 8) with values in [0, 16] and
        ``targets`` int64 array of shape (1797,) with the digit class 0..9 of each scan.
        Both arrays are read-only because they are shared through the cache.
    """
    from sklearn.datasets import load_digits  # imported lazily: sklearn import costs ~0.5 s

    digits = load_digits()
    images = np.asarray(digits.images, dtype=np.float32)
    targets = np.asarray(digits.target, dtype=np.int64)
    images.setflags(write=False)
    targets.setflags(write=False)
    return images, targets


def _interp_matrix(src: int, dst: int) -> np.ndarray:
    """Linear-interpolation matrix ``W`` of shape (dst, src) so that ``W @ x`` resamples ``x``.

    Pixel centres are aligned (the ``align_corners=False`` convention), so a digit keeps its
    position inside the cell for any cell size, including sizes that are not multiples of 8.
    """
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5
    pos = np.clip(pos, 0.0, src - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, src - 1)
    frac = pos - lo
    weights = np.zeros((dst, src), dtype=np.float64)
    rows = np.arange(dst)
    np.add.at(weights, (rows, lo), 1.0 - frac)
    np.add.at(weights, (rows, hi), frac)
    return weights.astype(np.float32)


def split_source_indices(
    split: str, val_fraction: float = 0.3, split_seed: int = 0, test_fraction: float = 0.0
) -> np.ndarray:
    """Indices of the sklearn scans reserved for ``split``.

    The 1797 scans are permuted once with ``split_seed`` (independent of the sampling ``seed``,
    so a train set built with one seed and a val set built with another never share a scan).
    The first ``round(1797 * val_fraction)`` permuted scans form the val pool, the next
    ``round(1797 * test_fraction)`` the test pool, the rest train. With ``test_fraction = 0`` (the
    default) there is no test pool and train / val are what they were before the test split
    existed.

    Returns:
        np.ndarray: sorted int64 indices, shape (num_scans_in_split,).
    """
    images, _ = load_digit_scans()
    num_scans = len(images)
    perm = np.random.default_rng(split_seed).permutation(num_scans)
    num_val = int(round(num_scans * val_fraction))
    num_test = int(round(num_scans * test_fraction))
    if split == 'test' and num_test == 0:
        raise ValueError(
            'MultiDigits: split="test" needs test_fraction > 0 (the same value for '
            'the train, val and test datasets, so that their scan pools are disjoint)'
        )
    if num_val + num_test >= num_scans:
        raise ValueError(
            f'MultiDigits: val_fraction ({val_fraction}) + test_fraction '
            f'({test_fraction}) leave no scans for train'
        )
    pools = {
        'val': perm[:num_val],
        'test': perm[num_val : num_val + num_test],
        'train': perm[num_val + num_test :],
    }
    return np.sort(pools[split]).astype(np.int64)


@DATASETS.register_module()
class MultiDigits(ObservedLabelsMixin, MultiLabelDataset):
    """Mosaics of 1..``max_digits`` handwritten digits, labelled by the set of digits present.

    Each data_info (what :meth:`get_data_info` returns, before the pipeline) holds:

    - ``img``: uint8 array (H, W, 3), H = W = ``image_size``; the three channels are equal.
      The digits are bright strokes on a dark background with mild uniform noise.
    - ``img_shape`` / ``ori_shape``: ``(H, W)``.
    - ``gt_label``: sorted list of class indices used as the target (see ``variant``).
    - ``gt_label_full``: sorted list of all digit classes present (equals ``gt_label`` except
      for the training split of the ``single_positive`` variant).
    - ``cell_labels``: list of ``grid * grid`` ints, row-major over the cells, the digit class in
      each cell or -1 for an empty cell.
    - ``source_ids``: list of ``grid * grid`` ints, the index of the sklearn scan drawn in each
      cell (into :func:`load_digit_scans`) or -1 for an empty cell.
    - ``sample_idx``: index of the sample.

    Args:
        split: ``'train'``, ``'val'`` or ``'test'`` (needs ``test_fraction > 0``); selects the
            (disjoint) pool of source scans.
        num_samples: number of mosaics; ``None`` gives 2000 for train and 500 for val / test.
        image_size: side of the square image in pixels; must be divisible by ``grid``.
        grid: cells per side; a mosaic has ``grid * grid`` cells.
        max_digits: largest number of digits in one image (1..``grid * grid``); the count is
            uniform over 1..``max_digits``. Two cells may show the same class.
        variant: ``'multi_label'`` (default), ``'single_label'`` (exactly one digit per image,
            so ``gt_label`` is ``[class]`` and mmpretrain's single-label heads and ``Accuracy``
            work), or ``'single_positive'`` (the images of ``'multi_label'`` for the same
            arguments, but in the train split ``gt_label`` keeps one positive chosen at random
            with ``seed`` and every other class is listed in ``gt_label_ignored``, through
            ``observed_labels=dict(mode='single_positive', seed=seed)``; the val split keeps
            full labels). Any split also takes ``observed_labels`` directly (see
            :mod:`mlkd.datasets.observed_labels`).
        seed: seed of the sampling; the same arguments give bit-identical data.
        noise: largest background-noise value added to every pixel (0..255); 0 disables it.
        contrast: range of the random per-digit brightness factor.
        val_fraction: fraction of the 1797 scans reserved for val. Use the same value (and
            ``split_seed``) for the train and the val dataset, otherwise the pools may overlap.
        test_fraction: fraction of the scans reserved for test (default 0: no test pool). Use
            the same value for all three datasets.
        split_seed: seed of the train/val partition of the scans.
        pipeline: transforms applied to each data_info (no image loading needed).
        test_mode: passed to :class:`mmengine.dataset.BaseDataset`.
        **kwargs: other :class:`mmpretrain.datasets.BaseDataset` arguments (``indices``,
            ``serialize_data``, ``lazy_init``, ``metainfo``, ...). ``ann_file``/``data_root``
            are meaningless here and rejected.

    Attributes:
        source_indices (np.ndarray): sorted indices (into :func:`load_digit_scans`) of the scans
            this split may draw from, shape (num_pool,). Train, val and test pools are disjoint.
    """

    METAINFO = {'classes': tuple(str(i) for i in range(10))}

    def __init__(
        self,
        split: str = 'train',
        num_samples: int | None = None,
        image_size: int = 32,
        grid: int = 2,
        max_digits: int = 4,
        variant: str = 'multi_label',
        seed: int = 0,
        noise: int = 16,
        contrast: Sequence[float] = (0.7, 1.0),
        val_fraction: float = 0.3,
        test_fraction: float = 0.0,
        split_seed: int = 0,
        pipeline: Sequence = (),
        test_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        check_generated_split('MultiDigits', split, kwargs)
        if variant not in _VARIANTS:
            raise ValueError(f'MultiDigits: variant must be one of {_VARIANTS}, got {variant!r}')
        if not isinstance(grid, int) or grid < 1:
            raise ValueError(f'MultiDigits: grid must be a positive int, got {grid!r}')
        if not isinstance(image_size, int) or image_size < grid:
            raise ValueError(
                f'MultiDigits: image_size must be an int >= grid ({grid}), got {image_size!r}'
            )
        if image_size % grid != 0:
            raise ValueError(
                f'MultiDigits: image_size ({image_size}) must be divisible by '
                f'grid ({grid}) so that all cells have the same size'
            )
        if not isinstance(max_digits, int) or not 1 <= max_digits <= grid * grid:
            raise ValueError(
                f'MultiDigits: max_digits must be in 1..grid*grid '
                f'(= {grid * grid} for grid={grid}), got {max_digits!r}'
            )
        if num_samples is None:
            num_samples = _DEFAULT_NUM_SAMPLES[split]
        if not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(
                f'MultiDigits: num_samples must be a positive int, got {num_samples!r}'
            )
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f'MultiDigits: seed must be a non-negative int, got {seed!r}')
        if not 0 <= noise <= 255:
            raise ValueError(f'MultiDigits: noise must be in 0..255, got {noise!r}')
        if len(contrast) != 2 or not 0.0 < contrast[0] <= contrast[1] <= 1.0:
            raise ValueError(
                f'MultiDigits: contrast must be (low, high) with '
                f'0 < low <= high <= 1, got {contrast!r}'
            )
        if not 0.0 < val_fraction < 1.0:
            raise ValueError(f'MultiDigits: val_fraction must be in (0, 1), got {val_fraction!r}')

        self.split = split
        self.num_samples = num_samples
        self.image_size = image_size
        self.grid = grid
        self.max_digits = max_digits
        self.variant = variant
        self.seed = seed
        self.noise = int(noise)
        self.contrast = (float(contrast[0]), float(contrast[1]))
        if not 0.0 <= test_fraction < 1.0:
            raise ValueError(f'MultiDigits: test_fraction must be in [0, 1), got {test_fraction!r}')
        self.val_fraction = float(val_fraction)
        self.test_fraction = float(test_fraction)
        self.split_seed = int(split_seed)
        self.source_indices = split_source_indices(split, val_fraction, split_seed, test_fraction)

        if variant == 'single_positive' and split == 'train':
            # The shared observed-label mechanism (mlkd/datasets/observed_labels.py) keeps one
            # positive per image and marks the other classes unobserved (gt_label_ignored).
            kwargs.setdefault('observed_labels', dict(mode='single_positive', seed=seed))
        # The attributes above must exist before super().__init__, which calls load_data_list.
        super().__init__(ann_file='', pipeline=pipeline, test_mode=test_mode, **kwargs)

    @property
    def cell_size(self) -> int:
        """Side of one mosaic cell in pixels (``image_size // grid``)."""
        return self.image_size // self.grid

    def _compose(self) -> dict[str, np.ndarray]:
        """Draw the layout of every sample and render the mosaics.

        Returns:
            dict with ``images`` uint8 (N, H, W), ``cell_labels`` int64 (N, grid*grid) and
            ``source_ids`` int64 (N, grid*grid), both -1 for empty cells.
        """
        pool, pool_targets = self._source_pool()
        n, cells, c = self.num_samples, self.grid * self.grid, self.cell_size
        # The split is part of the entropy so that train and val built with the same seed
        # differ in their layouts as well as in their source scans.
        rng = np.random.default_rng([self.seed, _SPLITS.index(self.split)])

        # single_label forces one digit; single_positive shares multi_label's layouts because
        # it only differs in the training targets (drawn from a separate stream below).
        max_digits = 1 if self.variant == 'single_label' else self.max_digits
        counts = rng.integers(1, max_digits + 1, size=n)
        # The rank of a random key gives a uniformly random cell order per sample; the first
        # ``count`` cells of that order are occupied.
        rank = rng.random((n, cells)).argsort(axis=1).argsort(axis=1)
        occupied = rank < counts[:, None]
        pool_pos = rng.integers(0, len(self.source_indices), size=(n, cells))
        source_ids = np.where(occupied, self.source_indices[pool_pos], -1)
        cell_labels = np.where(occupied, pool_targets[pool_pos], -1)
        gain = rng.uniform(self.contrast[0], self.contrast[1], size=(n, cells))
        gain = np.where(occupied, gain, 0.0).astype(np.float32)

        # Upsample every pool scan once: (P, c, c).
        weights = _interp_matrix(pool.shape[-1], c)
        pool_up = np.einsum('ij,pjk,lk->pil', weights, pool, weights, optimize=True)

        size = self.image_size
        images = np.empty((n, size, size), dtype=np.uint8)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            tiles = pool_up[pool_pos[start:stop]] * gain[start:stop, :, None, None]
            # (m, g*g, c, c) -> (m, g, c, g, c) -> (m, H, W): cell (r, q) lands at rows
            # r*c..(r+1)*c and columns q*c..(q+1)*c, row-major like cell_labels.
            m = stop - start
            mosaic = tiles.reshape(m, self.grid, self.grid, c, c).transpose(0, 1, 3, 2, 4)
            mosaic = mosaic.reshape(m, size, size)
            if self.noise > 0:
                mosaic = mosaic + rng.integers(0, self.noise + 1, size=mosaic.shape, dtype=np.uint8)
            images[start:stop] = np.clip(np.rint(mosaic), 0, 255).astype(np.uint8)
        return dict(images=images, cell_labels=cell_labels, source_ids=source_ids)

    def _source_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """The scans this split draws its cells from, in the order of ``source_indices``.

        Returns:
            tuple: ``scans`` float32 (P, s, s) with values in 0..255 and ``targets`` int64 (P,),
            the class of each scan; P = ``len(self.source_indices)``.
        """
        scans, targets = load_digit_scans()
        return (
            scans[self.source_indices] * np.float32(255.0 / _SCAN_MAX),
            targets[self.source_indices],
        )

    def load_data_list(self) -> list[dict]:
        """Materialise all samples; called once by ``full_init``.

        Returns:
            list of data_info dicts (see the class docstring), length ``num_samples``.
        """
        composed = self._compose()
        images = composed['images']
        cell_labels = composed['cell_labels']
        source_ids = composed['source_ids']
        full_labels = [sorted({int(v) for v in row if v >= 0}) for row in cell_labels]

        shape = (self.image_size, self.image_size)
        data_list = []
        for idx in range(self.num_samples):
            # Pipelines expect an (H, W, C) image; the copy makes each sample own its memory.
            img = np.repeat(images[idx][:, :, None], 3, axis=2)
            data_list.append(
                dict(
                    img=img,
                    img_shape=shape,
                    ori_shape=shape,
                    gt_label=list(full_labels[idx]),
                    gt_label_full=list(full_labels[idx]),
                    cell_labels=cell_labels[idx].tolist(),
                    source_ids=source_ids[idx].tolist(),
                    sample_idx=idx,
                )
            )
        return data_list

    def get_label_matrix(self, full: bool = False) -> np.ndarray:
        """Multi-hot targets of all samples.

        Args:
            full: use ``gt_label_full`` instead of ``gt_label``.

        Returns:
            np.ndarray: uint8 array of shape (len(self), number of classes).
        """
        key = 'gt_label_full' if full else 'gt_label'
        matrix = np.zeros((len(self), len(self.metainfo['classes'])), dtype=np.uint8)
        for idx in range(len(self)):
            matrix[idx, self.get_data_info(idx)[key]] = 1
        return matrix

    def export_image_folder(self, out_dir: str, **kwargs: Any) -> dict[str, str]:
        """Write this dataset to ``out_dir``; see :func:`export_image_folder`."""
        return export_image_folder(self, out_dir, **kwargs)

    def extra_repr(self) -> list[str]:
        """Lines shown by ``repr(dataset)``."""
        return [
            f'Split: \t{self.split} ({len(self.source_indices)} source scans)',
            f'Variant: \t{self.variant}',
            f'Image size: \t{self.image_size} (grid {self.grid}x{self.grid}, '
            f'max {self.max_digits} digits)',
            f'Seed: \t{self.seed}',
        ]


def export_image_folder(
    dataset: Any,
    out_dir: str,
    img_dir: str = 'images',
    ann_name: str = 'ann.txt',
    classes_name: str = 'classes.txt',
    label_key: str = 'gt_label',
) -> dict[str, str]:
    """Write an in-memory dataset as PNG files plus a :class:`MultiLabelImageList` annotation.

    Layout written::

        out_dir/classes.txt          one class name per line
        out_dir/ann.txt              "images/000000.png 3 7 9" per sample
        out_dir/images/000000.png    ...

    Args:
        dataset: any dataset whose ``get_data_info(i)`` returns ``img`` (uint8, (H, W, 3) or
            (H, W)) and ``label_key`` (list of class indices), and whose ``metainfo`` has
            ``classes``; typically :class:`MultiDigits`.
        out_dir: destination directory (created if missing).
        img_dir: sub-directory of ``out_dir`` for the images.
        ann_name: name of the annotation file inside ``out_dir``.
        classes_name: name of the class-name file inside ``out_dir``.
        label_key: which label list to write, e.g. ``'gt_label_full'``.

    Returns:
        dict with ``data_root``, ``ann_file`` and ``classes`` paths, ready to be passed to
        ``MultiLabelImageList(data_root=..., ann_file=..., classes=...)``.

    Images are written with OpenCV, which treats (H, W, 3) arrays as BGR, so that
    ``LoadImageFromFile`` (also OpenCV, BGR) returns exactly the stored array.
    """
    import mmcv

    os.makedirs(osp.join(out_dir, img_dir), exist_ok=True)
    classes = list(dataset.metainfo['classes'])
    classes_path = osp.join(out_dir, classes_name)
    with open(classes_path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(classes) + '\n')

    width = max(6, len(str(len(dataset) - 1)))
    lines = []
    for idx in range(len(dataset)):
        info = dataset.get_data_info(idx)
        rel_path = f'{img_dir}/{idx:0{width}d}.png'
        if not mmcv.imwrite(info['img'], osp.join(out_dir, rel_path)):
            raise OSError(f'export_image_folder: could not write {osp.join(out_dir, rel_path)}')
        labels = ' '.join(str(int(v)) for v in info[label_key])
        lines.append(f'{rel_path} {labels}'.rstrip())
    ann_path = osp.join(out_dir, ann_name)
    with open(ann_path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
    return dict(data_root=out_dir, ann_file=ann_name, classes=classes_path)
