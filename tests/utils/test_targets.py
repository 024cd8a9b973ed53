"""The one target reader shared by the distiller, the metrics and the score dump."""

import pytest
import torch
from mmpretrain.structures import DataSample

from mlkd.utils.targets import sample_target


def test_data_sample_and_dict_give_the_same_target_with_difficult_ignored():
    sample = DataSample().set_gt_label([1, 3])
    sample.set_field([3, 4], 'gt_label_difficult', field_type='metainfo')
    as_dict = {'gt_label': torch.tensor([1, 3]), 'gt_label_difficult': [3, 4]}
    expected = torch.tensor([0.0, 1.0, 0.0, 1.0, -1.0, 0.0])  # 3 is also a normal object: positive
    torch.testing.assert_close(sample_target(sample, 6), expected)
    torch.testing.assert_close(sample_target(as_dict, 6), expected)
    # Unobserved labels (single-positive data) follow the same rule; the rule is idempotent.
    unobserved = {'gt_label': [1], 'gt_label_ignored': [0, 1, 2]}
    torch.testing.assert_close(sample_target(unobserved, 4), torch.tensor([-1.0, 1.0, -1.0, 0.0]))
    torch.testing.assert_close(sample_target({**as_dict, 'gt_score': expected}, 6), expected)


def test_gt_score_is_used_as_is_and_a_wrong_size_is_named():
    score = torch.tensor([0.0, 0.7, 1.0])
    torch.testing.assert_close(sample_target({'gt_score': score, 'gt_label': [0]}, 3), score)
    with pytest.raises(ValueError, match='gt_score has 3 classes but the model predicts 5'):
        sample_target({'gt_score': score}, 5)
