"""Paired comparisons over seeds: the mean difference and its Student-t interval.

Results that compare two settings are reported as paired differences over seeds (the same seed:
the same initial weights and batches) with their spread (docs/demo.md). Used by the analysis
tools that compare runs (``tools/analysis_tools``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlkd.utils.tables import mean_std

__all__ = ['PairedDifferences', 'paired_differences', 't_quantile']


def t_quantile(probability: float, dof: int) -> float:
    """Quantile of Student's t distribution with ``dof`` degrees of freedom (scipy's)."""
    from scipy.stats import t

    return float(t.ppf(probability, dof))


@dataclass(frozen=True)
class PairedDifferences:
    """``treated − control`` over ``n`` pairs.

    Attributes:
        n: the number of pairs.
        mean: the mean difference.
        std: its sample standard deviation (n − 1), NaN for one pair.
        low, high: the Student-t interval ``mean ± t_{(1 + level) / 2, n − 1} · std / √n``, NaN
            for one pair.
    """

    n: int
    mean: float
    std: float
    low: float
    high: float


def paired_differences(
    treated: Sequence[float], control: Sequence[float], level: float = 0.95
) -> PairedDifferences:
    """The differences ``treated[i] − control[i]`` (pair ``i``: one seed), their mean, sample
    std and ``level`` Student-t interval.

    Raises:
        ValueError: the two sequences differ in length, or are empty.
    """
    if len(treated) != len(control):
        raise ValueError(f'paired samples differ in length: {len(treated)} vs {len(control)}')
    if not treated:
        raise ValueError('paired samples are empty')
    diffs = [a - b for a, b in zip(treated, control)]
    mean, std = mean_std(diffs)
    if std is None:
        return PairedDifferences(1, mean, math.nan, math.nan, math.nan)
    half = t_quantile(0.5 + level / 2, len(diffs) - 1) * std / math.sqrt(len(diffs))
    return PairedDifferences(len(diffs), mean, std, mean - half, mean + half)
