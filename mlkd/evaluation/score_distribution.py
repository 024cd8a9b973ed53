"""Distribution of each image's top-k scores, as in Fig. F.1 (appendix F) of the supplement of
T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from Single-Label
Annotations", WACV 2023."""
from __future__ import annotations

import numpy as np

__all__ = ['top_score_histogram']


def top_score_histogram(scores: np.ndarray, k: int = 4,
                        bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
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
    if scores.min() < 0 or scores.max() > 1:
        raise ValueError('top_score_histogram expects probabilities in [0, 1] (sigmoid scores)')
    top = -np.sort(-scores, axis=1)[:, :k]
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, top, side='right') - 1, 0, bins - 1)
    counts = np.zeros((k, bins), dtype=np.int64)
    np.add.at(counts, (np.broadcast_to(np.arange(k), index.shape), index), 1)
    return counts, edges
