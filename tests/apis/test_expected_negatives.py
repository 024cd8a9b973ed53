"""``mlkd.apis.expected_negatives`` EN's left-out classes against complete labels."""

from __future__ import annotations

import math

import pytest
import torch

from mlkd.apis import negative_set_quality


def test_quality_of_a_negative_set_worked_by_hand():
    # image 0: annotated {0}, hidden {1}; negatives {3}: left out {1, 2}
    # image 1: annotated {2}, hidden {0, 3}; negatives {0, 1}: left out {3}
    observed = torch.tensor([[1, 0, 0, 0], [0, 0, 1, 0]], dtype=torch.bool)
    complete = torch.tensor([[1, 1, 0, 0], [1, 0, 1, 1]], dtype=torch.bool)
    negatives = torch.tensor([[0, 0, 0, 1], [1, 1, 0, 0]], dtype=torch.bool)
    seen = torch.tensor([True, True])
    quality = negative_set_quality(negatives, observed, complete, seen)
    assert quality['images_seen'] == 1.0
    assert quality['left_out_per_image'] == 1.5  # (2 + 1) / 2
    assert quality['left_out_precision'] == pytest.approx(2 / 3)  # 1 and 3 of {1, 2, 3}
    assert quality['hidden_recall'] == pytest.approx(2 / 3)  # 1 and 3 of hidden {1, 0, 3}
    assert quality['negative_noise'] == pytest.approx(1 / 3)  # 0 of {3, 0, 1}
    assert quality['an_negative_noise'] == pytest.approx(3 / 6)  # 3 hidden of 6 unobserved
    # an image never seen counts nowhere
    unseen = negative_set_quality(negatives, observed, complete, torch.tensor([True, False]))
    assert unseen['images_seen'] == 0.5
    assert (unseen['left_out_precision'], unseen['hidden_recall']) == (0.5, 1.0)
    assert unseen['negative_noise'] == 0.0  # {3} is a negative of image 0
    # nothing seen: the ratios have no denominator
    assert math.isnan(negative_set_quality(negatives, observed, complete, ~seen)['hidden_recall'])
