"""class_distance_statistics and soft_label_entropy against direct loops over samples."""

from __future__ import annotations

import math

import pytest
import torch
from helpers import loop_class_distance_statistics as loop_statistics

from mlkd.evaluation.class_distances import class_distance_statistics, soft_label_entropy


@pytest.mark.parametrize('chunk_size', [1, 7, 4096])
def test_statistics_equal_the_loop_on_an_unbalanced_batch(chunk_size):
    generator = torch.Generator().manual_seed(0)
    # Class 3 has one sample (no intra partner), class 4 none at all; sizes differ.
    labels = torch.tensor([0] * 6 + [1] * 4 + [2] * 9 + [3])
    embeddings = torch.randn(len(labels), 5, generator=generator) * 3
    got = class_distance_statistics(embeddings, labels, num_classes=5, chunk_size=chunk_size)
    expected = loop_statistics(embeddings, labels)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    assert got['intra_anchors'] == 19 and got['inter_anchors'] == 20
    assert got['distance_ratio'] == pytest.approx(
        expected['intra_distance'] / expected['inter_distance'], rel=1e-9
    )
    assert got['d_ratio'] == pytest.approx(expected['d_intra'] / expected['d_inter'], rel=1e-9)


def test_hand_worked_values():
    # Two classes on the unit circle: class 0 at angles 0 and 90 degrees, class 1 at 180.
    embeddings = torch.tensor([[2.0, 0.0], [0.0, 5.0], [-1.0, 0.0]])
    got = class_distance_statistics(embeddings, torch.tensor([0, 0, 1]))
    assert got['intra_distance'] == pytest.approx(math.sqrt(2))  # both anchors of class 0
    assert got['d_intra'] == pytest.approx(1.0)  # exp(cos 90°)
    # inter: anchor 0 -> [2] (distance 2, exp(-1)); anchor 1 -> [2] (sqrt 2, exp 0);
    # anchor 2 -> [0, 1] (mean of 2 and sqrt 2; mean of exp(-1) and 1).
    inter = (2 + math.sqrt(2) + (2 + math.sqrt(2)) / 2) / 3
    d_inter = (math.exp(-1) + 1 + (math.exp(-1) + 1) / 2) / 3
    assert got['inter_distance'] == pytest.approx(inter)
    assert got['d_inter'] == pytest.approx(d_inter)
    assert (got['intra_anchors'], got['inter_anchors']) == (2, 3)


def test_collapsed_classes_and_missing_partners():
    # Each class collapsed to one point: intra distance 0, d_intra = e; one class only: no inter.
    embeddings = torch.tensor([[1.0, 1.0]] * 3)
    got = class_distance_statistics(embeddings, torch.zeros(3, dtype=torch.long))
    assert got['intra_distance'] == pytest.approx(0.0, abs=1e-7)
    assert got['d_intra'] == pytest.approx(math.e)
    assert math.isnan(got['inter_distance']) and math.isnan(got['d_ratio'])
    assert got['inter_anchors'] == 0
    single = class_distance_statistics(torch.randn(3, 4), torch.tensor([0, 1, 2]))
    assert math.isnan(single['d_intra']) and single['intra_anchors'] == 0
    assert single['inter_anchors'] == 3 and math.isfinite(single['d_inter'])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r'embeddings \[N, D\] and labels \[N\]'):
        class_distance_statistics(torch.randn(4, 2), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match='all zeros'):
        class_distance_statistics(torch.zeros(2, 3), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r'labels must lie in \[0, 2\)'):
        class_distance_statistics(torch.randn(2, 3), torch.tensor([0, 2]), num_classes=2)
    with pytest.raises(ValueError, match='chunk_size'):
        class_distance_statistics(torch.randn(2, 3), torch.tensor([0, 1]), chunk_size=0)


def test_soft_label_entropy():
    logits = torch.tensor(
        [[0.0, 0.0, 0.0, 0.0], [1000.0, 0.0, 0.0, 0.0], [math.log(3), 0, 0, 0]], dtype=torch.float64
    )
    entropy = soft_label_entropy(logits)
    # uniform: log 4; saturated: 0 (finite); p = (1/2, 1/6, 1/6, 1/6) worked by hand.
    by_hand = -(0.5 * math.log(0.5) + 3 * (1 / 6) * math.log(1 / 6))
    assert entropy.tolist() == pytest.approx([math.log(4), 0.0, by_hand], abs=1e-12)
    # A higher temperature flattens the soft labels.
    assert soft_label_entropy(logits[2:], temperature=4.0)[0] > entropy[2]
    with pytest.raises(ValueError, match='temperature'):
        soft_label_entropy(logits, temperature=0)
