"""mAP by object size, checked against hand-worked values; both analysis tools on a dump."""

from __future__ import annotations

import os
import re
import runpy
import sys

import numpy as np
import pytest
from conftest import REPO, run_tool, write_coco

from mlkd.datasets import COCOMultiLabel
from mlkd.evaluation.object_size import coco_positive_areas, map_by_object_size, size_bin_edges

# Class order 'alphabetical': 0 = a (id 2), 1 = b (id 1). All images are 100 x 100.
CATEGORIES = [dict(id=1, name='b'), dict(id=2, name='a')]
IMAGES = [dict(id=i, file_name=f'{i}.jpg', width=100, height=100) for i in (10, 11, 12, 13, 14)]
ANNOTATIONS = [
    dict(id=1, image_id=10, category_id=2, bbox=[0, 0, 10, 10]),  # a 0.01
    dict(id=2, image_id=10, category_id=2, bbox=[5, 5, 50, 50]),  # a 0.25: the largest counts
    dict(id=3, image_id=10, category_id=1, bbox=[0, 0, 20, 20]),  # b 0.04
    dict(id=4, image_id=11, category_id=1, bbox=[0, 0, 100, 50]),  # b 0.5
    dict(id=5, image_id=13, category_id=2, bbox=[1, 1, 30, 30]),  # a 0.09
    dict(id=6, image_id=14, category_id=1, bbox=[2, 2, 5, 5]),  # b 0.0025
]  # image 12 has no annotation: not a row
SCORES = np.array([[0.9, 0.3], [0.8, 0.6], [0.2, 0.7], [0.1, 0.4]])
LABELS = np.array([[1, 1], [0, 1], [1, 0], [0, 1]], dtype=np.float32)


@pytest.fixture
def ann_file(tmp_path):
    return write_coco(tmp_path / 'coco', 'val', IMAGES, ANNOTATIONS, CATEGORIES)


def test_areas_follow_the_dataset_rows_and_classes(ann_file, tmp_path):
    areas = coco_positive_areas(ann_file, 'alphabetical')
    expected = np.array([[0.25, 0.04], [np.nan, 0.5], [0.09, np.nan], [np.nan, 0.0025]])
    np.testing.assert_allclose(areas, expected)
    ds = COCOMultiLabel(data_root=str(tmp_path / 'coco'), split='val')
    assert [ds.get_data_info(i)['gt_label'] for i in range(len(ds))] == [
        np.flatnonzero(~np.isnan(row)).tolist() for row in areas
    ]
    assert coco_positive_areas(ann_file, 'alphabetical', keep_unlabeled=True).shape == (5, 2)
    np.testing.assert_allclose(coco_positive_areas(ann_file, 'category_id'), expected[:, ::-1])


def test_map_by_object_size_by_hand(ann_file):
    areas = coco_positive_areas(ann_file)
    edges = size_bin_edges(areas, 2)  # sizes .0025 .04 .09 .25 .5 -> median .09
    np.testing.assert_allclose(edges, [0.0025, 0.09, 0.5])
    small, large = map_by_object_size(SCORES, LABELS, areas, edges)
    # Small bin: b's positives rows 0 (.3) and 3 (.4); row 1 (other bin) left out; negative
    # row 2 (.7): ranking .7-, .4+, .3+ -> AP (1/2 + 2/3) / 2. Class a has none: excluded.
    assert small['num_positives'] == 2
    assert small['mAP'] == pytest.approx(100 * (1 / 2 + 2 / 3) / 2)
    # Large bin: a: .9+, .8-, .2+, .1- -> (1 + 2/3) / 2; b: row 1 (.6+) vs negative .7 -> 1/2.
    assert large['num_positives'] == 3
    assert large['mAP'] == pytest.approx(100 * ((1 + 2 / 3) / 2 + 1 / 2) / 2)
    with pytest.raises(ValueError, match='sample 1 class 0 is positive in the labels but has no'):
        map_by_object_size(SCORES, np.ones_like(LABELS), areas, edges)


def test_tools_write_tables_and_pngs_from_a_dump(ann_file, tmp_path, monkeypatch):
    dump = str(tmp_path / 'scores.npz')
    # Rows stored out of order: the tools sort them by sample_idx.
    np.savez(
        dump,
        scores=SCORES[[2, 0, 3, 1]],
        labels=LABELS[[2, 0, 3, 1]],
        sample_idx=np.array([2, 0, 3, 1]),
    )
    out = tmp_path / 'out'
    run = run_tool(
        'tools/analysis_tools/map_by_object_size.py',
        dump,
        ann_file,
        '--num-bins',
        '2',
        '--out-dir',
        str(out),
    )
    assert run.returncode == 0, run.stderr
    table = (out / 'map_by_object_size.md').read_text()
    values = [float(v) for v in re.findall(r'\| (\d+\.\d\d) \|\n?', table)]
    assert values == pytest.approx([58.33, 66.67], abs=0.01)
    assert (out / 'map_by_object_size.png').stat().st_size > 0
    # The second tool runs in-process (same command line) to keep the test short.
    monkeypatch.setattr(sys, 'argv', ['top_scores.py', dump, '--k', '2', '--out-dir', str(out)])
    runpy.run_path(os.path.join(REPO, 'tools/analysis_tools/top_scores.py'), run_name='__main__')
    assert '| 0.90 - 1.00 | 0.250 | 0.000 |' in (out / 'top_scores.md').read_text()
    assert (out / 'top_scores.png').stat().st_size > 0
    # A dump of another split is refused with both files named.
    np.savez(dump, scores=SCORES[:3], labels=LABELS[:3], sample_idx=np.arange(3))
    monkeypatch.setattr(sys, 'argv', ['map_by_object_size.py', dump, ann_file])
    with pytest.raises(ValueError, match=r'scores\.npz holds scores \(3, 2\) but .*instances_val'):
        runpy.run_path(
            os.path.join(REPO, 'tools/analysis_tools/map_by_object_size.py'), run_name='__main__'
        )
