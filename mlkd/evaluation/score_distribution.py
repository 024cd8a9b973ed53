"""Distributions of a classifier's scores.

* each image's top-k scores, as in Fig. F.1 (appendix F) of the supplement of T. Verelst et al.,
  "Spatial Consistency Loss for Training Multi-Label Classifiers from Single-Label Annotations",
  WACV 2023 (:func:`top_score_histogram`);
* a teacher's scores on positive and on negative labels and its per-label accuracy, Table C.4 of
  the supplement of C. Li, G. Cheng, "Positive Divide and Negative Discrepancy: A New Perspective
  on Multi-Label Logit Distillation" (:func:`label_score_statistics`,
  :func:`label_score_histograms`).
"""

from __future__ import annotations

import numpy as np

__all__ = ['top_score_histogram', 'label_score_statistics', 'label_score_histograms']


def top_score_histogram(
    scores: np.ndarray, k: int = 4, bins: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of the ``k`` highest scores of each image (the SCL paper's Fig. F.1).

    Args:
        scores: ``[N, C]`` probabilities in [0, 1] (a dump's ``scores``).
        k: how many of the top scores per image (rank 1 = highest).
        bins: number of equal-width bins on [0, 1].

    Returns:
        ``counts`` ``[k, bins]`` (row r: the histogram of the (r+1)-th highest score) and
        ``edges`` ``[bins + 1]``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or not 1 <= k <= scores.shape[1]:
        raise ValueError(f'scores must be [N, C] with C >= k={k}; got {scores.shape}')
    _check_probabilities(scores, 'top_score_histogram')
    top = -np.sort(-scores, axis=1)[:, :k]
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = _bin_index(top, edges)
    counts = np.zeros((k, bins), dtype=np.int64)
    np.add.at(counts, (np.broadcast_to(np.arange(k), index.shape), index), 1)
    return counts, edges


def _check_probabilities(scores: np.ndarray, caller: str) -> None:
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        raise ValueError(
            f'{caller} expects probabilities in [0, 1] (sigmoid scores); got values '
            f'in [{scores.min():g}, {scores.max():g}]'
        )


def _bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value among equal-width ``edges`` on [0, 1]; 1.0 falls in the last bin."""
    return np.clip(np.searchsorted(edges, values, side='right') - 1, 0, len(edges) - 2)


def _check_scores_and_targets(
    scores: np.ndarray, targets: np.ndarray, caller: str
) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64)
    targets = np.asarray(targets)
    if scores.ndim != 2 or targets.shape != scores.shape:
        raise ValueError(
            f'{caller}: scores and targets must both be [N, C]; got scores '
            f'{scores.shape} and targets {targets.shape}'
        )
    if not np.isin(targets, (-1, 0, 1)).all():
        raise ValueError(
            f'{caller}: targets must be 1 (positive), 0 (negative) or -1 (ignored); '
            f'got values {np.unique(targets)[:6].tolist()}'
        )
    _check_probabilities(scores, caller)
    return scores, targets


def label_score_statistics(
    scores: np.ndarray, targets: np.ndarray, threshold: float = 0.5
) -> dict[str, float]:
    """Per-label accuracy and mean scores on positive / negative labels (3D Table C.4).

    For every (image, label) entry with a target ``y`` in {0, 1} (``-1`` entries are left out
    everywhere): the prediction is ``s >= threshold``, correct when it equals ``y``. Two
    averages of each quantity are returned:

    * over entries (the table's reading of "calculated and averaged on the training split",
      the default one to compare with the paper): ``accuracy = #correct / #entries``,
      ``positive_score = mean of s over entries with y = 1``, ``negative_score`` likewise over
      ``y = 0``;
    * over classes (``class_*``): the same per class, then the mean over the classes that have
      such entries (a class with no positive entry does not enter ``class_positive_score``).

    When every entry is labelled the two accuracies coincide (each class has N entries).

    Args:
        scores: ``[N, C]`` probabilities in [0, 1] (sigmoid of the logits).
        targets: ``[N, C]`` 1 / 0 / -1 (the data preprocessor's ``gt_score``).
        threshold: a score at or above it predicts positive.

    Returns:
        ``accuracy``, ``class_accuracy`` (fractions in [0, 1]), ``positive_score``,
        ``negative_score``, ``class_positive_score``, ``class_negative_score``, and the counts
        ``num_images``, ``num_positive``, ``num_negative`` (entries). A mean over no entry is
        ``nan``.
    """
    scores, targets = _check_scores_and_targets(scores, targets, 'label_score_statistics')
    positive, negative = targets == 1, targets == 0
    labelled = positive | negative
    correct = ((scores >= threshold) == positive) & labelled

    def entry_mean(values: np.ndarray, mask: np.ndarray) -> float:
        return float(values[mask].mean()) if mask.any() else float('nan')

    def class_mean(values: np.ndarray, mask: np.ndarray) -> float:
        count = mask.sum(axis=0)
        present = count > 0
        if not present.any():
            return float('nan')
        per_class = np.where(mask, values, 0.0).sum(axis=0)[present] / count[present]
        return float(per_class.mean())

    return dict(
        accuracy=entry_mean(correct.astype(np.float64), labelled),
        class_accuracy=class_mean(correct.astype(np.float64), labelled),
        positive_score=entry_mean(scores, positive),
        negative_score=entry_mean(scores, negative),
        class_positive_score=class_mean(scores, positive),
        class_negative_score=class_mean(scores, negative),
        num_images=int(len(scores)),
        num_positive=int(positive.sum()),
        num_negative=int(negative.sum()),
    )


def label_score_histograms(
    scores: np.ndarray, targets: np.ndarray, bins: int = 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Histograms of the scores on positive and on negative labels (``-1`` entries left out).

    Args:
        scores: ``[N, C]`` probabilities in [0, 1].
        targets: ``[N, C]`` 1 / 0 / -1.
        bins: number of equal-width bins on [0, 1] (a score of 1.0 falls in the last one).

    Returns:
        ``positive_counts [bins]``, ``negative_counts [bins]`` and ``edges [bins + 1]``.
    """
    scores, targets = _check_scores_and_targets(scores, targets, 'label_score_histograms')
    if bins < 1:
        raise ValueError(f'label_score_histograms: bins must be >= 1, got {bins}')
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = _bin_index(scores, edges)
    positive_counts = np.bincount(index[targets == 1], minlength=bins)
    negative_counts = np.bincount(index[targets == 0], minlength=bins)
    return positive_counts, negative_counts, edges
