"""The top-k score histogram, checked against hand-counted bins."""

import numpy as np
import pytest

from mlkd.evaluation.score_distribution import (
    label_score_histograms,
    label_score_statistics,
    top_score_histogram,
)


def test_top_score_histogram_by_hand():
    scores = np.array(
        [
            [0.95, 0.15, 0.55, 0.35, 0.05],
            [0.25, 0.25, 0.25, 0.25, 0.92],
            [1.0, 0.0, 0.45, 0.51, 0.0],
        ]
    )
    counts, edges = top_score_histogram(scores, k=4, bins=10)
    expected = np.zeros((4, 10), dtype=int)
    expected[0, 9] = 3  # .95 .92 1.0
    expected[1, 5], expected[1, 2] = 2, 1  # .55 .51 | .25
    expected[2, 3], expected[2, 2], expected[2, 4] = 1, 1, 1  # .35 .25 .45
    expected[3, 1], expected[3, 2], expected[3, 0] = 1, 1, 1  # .15 .25 0.0
    np.testing.assert_array_equal(counts, expected)
    np.testing.assert_allclose(edges, np.linspace(0, 1, 11))
    with pytest.raises(ValueError, match='probabilities'):
        top_score_histogram(scores * 2)


def test_label_score_statistics_by_hand():
    # 3 images x 3 labels; the -1 entry (image 2, label 1) counts nowhere.
    scores = np.array([[0.9, 0.2, 0.6], [0.4, 0.1, 0.05], [0.7, 0.99, 0.5]])
    targets = np.array([[1, 0, 0], [1, 0, 0], [1, -1, 1]])
    stats = label_score_statistics(scores, targets)
    # correct at >= 0.5: row 0: T T F; row 1: F T T; row 2: T (ignored) T -> 6 of 8
    assert stats['accuracy'] == pytest.approx(6 / 8)
    # per class: class 0: 2/3, class 1: 2/2, class 2: 2/3 -> mean 7/9
    assert stats['class_accuracy'] == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert stats['positive_score'] == pytest.approx((0.9 + 0.4 + 0.7 + 0.5) / 4)
    assert stats['negative_score'] == pytest.approx((0.2 + 0.6 + 0.1 + 0.05) / 4)
    # class 1 has no positive: the class mean is over classes 0 and 2
    assert stats['class_positive_score'] == pytest.approx(((0.9 + 0.4 + 0.7) / 3 + 0.5) / 2)
    assert stats['class_negative_score'] == pytest.approx(((0.2 + 0.1) / 2 + (0.6 + 0.05) / 2) / 2)
    assert (stats['num_images'], stats['num_positive'], stats['num_negative']) == (3, 4, 4)
    # A stricter threshold flips the 0.5 positive to a miss.
    assert label_score_statistics(scores, targets, threshold=0.55)['accuracy'] == pytest.approx(
        5 / 8
    )


def test_label_score_histograms_by_hand():
    scores = np.array([[0.9, 0.2, 0.6], [0.4, 0.1, 1.0]])
    targets = np.array([[1, 0, -1], [1, 0, 1]])
    positive, negative, edges = label_score_histograms(scores, targets, bins=4)
    np.testing.assert_array_equal(positive, [0, 1, 0, 2])  # .4 | .9 1.0
    np.testing.assert_array_equal(negative, [2, 0, 0, 0])  # .2 .1 (0.6 is ignored)
    np.testing.assert_allclose(edges, [0, 0.25, 0.5, 0.75, 1])


def test_label_score_inputs_are_checked():
    with pytest.raises(ValueError, match=r'targets must be 1 .*got values \[0, 2\]'):
        label_score_statistics(np.zeros((1, 2)), np.array([[0, 2]]))
    with pytest.raises(ValueError, match=r'both be \[N, C\]'):
        label_score_statistics(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match='probabilities'):
        label_score_histograms(np.full((1, 2), 3.0), np.zeros((1, 2)))
