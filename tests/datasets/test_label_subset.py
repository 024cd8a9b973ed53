"""LabelSubset: the samples of a dataset labelled with a subset of its classes, renumbered."""

import pytest

from mlkd.datasets import LabelSubset, MultiDigits

KEEP = ['7', '2', '5']  # the new order: 7 -> 0, 2 -> 1, 5 -> 2


@pytest.fixture(scope='module')
def digits():
    return MultiDigits(split='val', num_samples=24, pipeline=[dict(type='PackInputs')])


def test_labels_are_renumbered_into_the_subset_and_the_rest_dropped(digits):
    subset = LabelSubset(digits, KEEP)
    assert subset.metainfo['classes'] == ('7', '2', '5') and len(subset) == len(digits)
    new = {7: 0, 2: 1, 5: 2}
    emptied = 0
    for i in range(len(digits)):
        full = digits.get_data_info(i)['gt_label']
        expected = sorted(new[c] for c in full if c in new)
        assert subset.get_data_info(i)['gt_label'] == expected
        assert subset.get_cat_ids(i) == expected
        emptied += not expected
        packed = subset[i]['data_samples']
        assert packed.gt_label.tolist() == expected and packed.sample_idx == i
        assert (packed.img_shape, packed.ori_shape) == ((32, 32), (32, 32))
    assert emptied  # an image without any kept digit stays, as an all-negative sample


def test_built_from_a_config_and_refusing_what_it_cannot_keep(digits):
    subset = LabelSubset(dict(type='MultiDigits', split='val', num_samples=4), ['0'])
    assert subset.metainfo['classes'] == ('0',) and len(subset) == 4
    with pytest.raises(ValueError, match=r"classes \['seven'\] are not classes of MultiDigits"):
        LabelSubset(digits, ['7', 'seven'])
    with pytest.raises(ValueError, match=r"names \['2'\] more than once"):
        LabelSubset(digits, ['2', '2'])
    with pytest.raises(ValueError, match='non-empty list'):
        LabelSubset(digits, [])
