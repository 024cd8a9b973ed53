"""mAP by object size on COCO, as in Fig. D.1 (appendix D) of the supplement of T. Verelst et al.,
"Spatial Consistency Loss for Training Multi-Label Classifiers from Single-Label Annotations",
WACV 2023.

Object size of a positive label: an (image, class) pair is positive when the image has at least
one instance of the class; its size is the **largest** relative box area of those instances,
``bbox_w * bbox_h / (image_w * image_h)`` (crowd regions included, as they make the label). The
positives of the split are cut into ``num_bins`` bins of equal count (quantiles of the sizes).
For a bin, the mAP ranks every image of the split for each class: the positives inside the bin
are positives, every negative of the split is a negative, and positives of the other bins are
left out (-1); a class without positives in the bin is excluded from that bin's mean.
"""

from __future__ import annotations

import json
import os.path as osp

import numpy as np
import torch

from mlkd.datasets.coco import _lookup, ordered_categories

from .metrics.functional import average_precision, mean_of_ap

__all__ = ['coco_positive_areas', 'size_bin_edges', 'map_by_object_size']


def coco_positive_areas(
    ann_file: str, class_order: str = 'alphabetical', keep_unlabeled: bool = False
) -> np.ndarray:
    """Relative size of every positive label of an instances json, in the dataset's layout.

    Rows and columns follow :class:`mlkd.datasets.COCOMultiLabel` with the same ``class_order``
    and ``keep_unlabeled`` (json ``images`` order, images without annotation dropped), i.e. the
    order of a ``tools/test.py --out`` dump of that dataset.

    Returns:
        ``[N, C]`` float64: the largest relative box area of the class in the image, NaN where
        the class is absent.

    Raises:
        FileNotFoundError / ValueError naming ``ann_file`` and the field at fault.
    """
    if not osp.isfile(ann_file):
        raise FileNotFoundError(f'instances json {ann_file!r} not found')
    with open(ann_file, encoding='utf-8') as f:
        content = json.load(f)
    cat_ids, _ = ordered_categories(content['categories'], class_order, ann_file)
    try:
        image_ids = np.array([int(img['id']) for img in content['images']], dtype=np.int64)
        image_area = np.array(
            [float(img['width']) * float(img['height']) for img in content['images']]
        )
        anns = content['annotations']
        ann_image = np.array([int(a['image_id']) for a in anns], dtype=np.int64)
        ann_cat = np.array([int(a['category_id']) for a in anns], dtype=np.int64)
        box = np.array([[float(v) for v in a['bbox'][2:4]] for a in anns]).reshape(-1, 2)
    except (KeyError, TypeError, ValueError, IndexError):
        raise ValueError(
            f'{ann_file}: images need integer "id", "width", "height"; annotations '
            f'need "image_id", "category_id" and "bbox" [x, y, w, h]'
        ) from None
    rows = _lookup(image_ids, np.arange(len(image_ids)), ann_image)
    cols = _lookup(np.array(cat_ids, dtype=np.int64), np.arange(len(cat_ids)), ann_cat)
    if (rows < 0).any() or (cols < 0).any():
        raise ValueError(
            f'{ann_file}: an annotation names an image or category id that is not listed'
        )
    if (image_area[rows] <= 0).any():
        raise ValueError(f'{ann_file}: an annotated image has a zero width or height')
    areas = np.full((len(image_ids), len(cat_ids)), -np.inf)
    np.maximum.at(areas, (rows, cols), box[:, 0] * box[:, 1] / image_area[rows])
    areas[np.isneginf(areas)] = np.nan
    if not keep_unlabeled:
        areas = areas[~np.isnan(areas).all(axis=1)]
    return areas


def size_bin_edges(areas: np.ndarray, num_bins: int) -> np.ndarray:
    """``[num_bins + 1]`` edges cutting the finite ``areas`` into bins of (nearly) equal count."""
    sizes = areas[np.isfinite(areas)]
    if num_bins < 1 or sizes.size < num_bins:
        raise ValueError(f'cannot cut {sizes.size} positive sizes into {num_bins} bins')
    return np.quantile(sizes, np.linspace(0.0, 1.0, num_bins + 1))


def map_by_object_size(
    scores: np.ndarray, labels: np.ndarray, areas: np.ndarray, edges: np.ndarray
) -> list[dict]:
    """mAP of the positives of each size bin against all negatives (module docstring).

    Args:
        scores: ``[N, C]`` model scores.
        labels: ``[N, C]`` 1 positive, 0 negative, -1 ignored (a dump's ``labels``).
        areas: ``[N, C]`` relative size of each positive (NaN elsewhere), e.g.
            :func:`coco_positive_areas`.
        edges: ``[B + 1]`` increasing bin edges; bin ``b`` holds sizes in
            ``[edges[b], edges[b + 1])``, the last bin also its upper edge.

    Returns:
        one ``dict(low, high, num_positives, mAP)`` per bin (mAP in percent, NaN for an empty bin).
    """
    scores, labels, areas = (np.asarray(a) for a in (scores, labels, areas))
    if not scores.shape == labels.shape == areas.shape:
        raise ValueError(
            f'scores {scores.shape}, labels {labels.shape} and areas {areas.shape} '
            f'must have the same [N, C] shape'
        )
    positive = labels > 0
    if np.isnan(areas[positive]).any():
        row, col = np.argwhere(positive & np.isnan(areas))[0]
        raise ValueError(
            f'sample {row} class {col} is positive in the labels but has no box in '
            f'the annotations: the dump and the json (or class_order) disagree'
        )
    bins = np.clip(
        np.searchsorted(edges, np.nan_to_num(areas, nan=-1.0), side='right') - 1, 0, len(edges) - 2
    )
    scores_t = torch.from_numpy(np.ascontiguousarray(scores, dtype=np.float64))
    results = []
    for b in range(len(edges) - 1):  # a handful of bins; each is one vectorised AP pass
        in_bin = positive & (bins == b)
        target = np.where(positive & ~in_bin, -1.0, np.where(in_bin, 1.0, labels))
        ap = average_precision(scores_t, torch.from_numpy(target), empty_policy='exclude')
        results.append(
            dict(
                low=float(edges[b]),
                high=float(edges[b + 1]),
                num_positives=int(in_bin.sum()),
                mAP=mean_of_ap(ap),
            )
        )
    return results
