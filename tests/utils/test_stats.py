"""mlkd.utils.stats: paired differences and their t-interval against a hand computation."""

import math

import pytest

from mlkd.utils.stats import paired_differences


def test_paired_differences_match_a_hand_computation():
    # Differences 1..5 in scrambled order: mean 3, sample std sqrt(2.5), t_{0.975, 4} from a table.
    treated = [81.0, 72.0, 78.0, 94.0, 65.0]
    control = [80.0, 70.0, 75.0, 90.0, 60.0]
    paired = paired_differences(treated, control)
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert (paired.n, paired.mean, paired.std) == (5, 3.0, pytest.approx(math.sqrt(2.5)))
    assert (paired.low, paired.high) == (pytest.approx(3.0 - half), pytest.approx(3.0 + half))
    one = paired_differences([2.0], [1.5])
    assert (one.n, one.mean) == (1, 0.5) and math.isnan(one.std) and math.isnan(one.low)


def test_unpaired_or_empty_samples_are_refused():
    with pytest.raises(ValueError, match='differ in length: 2 vs 3'):
        paired_differences([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match='empty'):
        paired_differences([], [])
