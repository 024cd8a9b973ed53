"""tools/analysis_tools/per_class_ap.py on tools/test.py dumps of the trained tool runs."""

import os.path as osp
import re
import runpy

import numpy as np
import pytest
from conftest import REPO, TOOL_RUN_CONFIG, TOOL_RUN_OPTIONS, assert_png, run_tool
from sklearn.metrics import average_precision_score

PER_CLASS = 'tools/analysis_tools/per_class_ap.py'


@pytest.fixture(scope='module')
def dumps(tool_runs, tmp_path_factory):
    """``{seed: (dump path, test.py stdout)}`` of the last checkpoint of both seeds."""
    folder = tmp_path_factory.mktemp('dumps')
    found = {}
    for seed, work_dir in tool_runs['seeds'].items():
        dump = str(folder / f'seed{seed}.npz')
        out = run_tool(
            'tools/test.py',
            TOOL_RUN_CONFIG,
            osp.join(work_dir, 'epoch_2.pth'),
            '--work-dir',
            str(folder / f'test{seed}'),
            '--out',
            dump,
            '--cfg-options',
            *TOOL_RUN_OPTIONS,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        found[seed] = (dump, out.stdout + out.stderr)
    return found


def _table(stdout):
    """{first cell: other cells} of the ascii table rows in ``stdout``."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith('| '):
            cells = [c.strip() for c in line.strip('|').split('|')]
            rows[cells[0]] = cells[1:]
    return rows


def _sklearn_ap(dump):
    data = np.load(dump)
    return np.array(
        [
            100 * average_precision_score(data['labels'][:, c], data['scores'][:, c])
            for c in range(data['scores'].shape[1])
        ]
    )


def test_per_class_ap_of_one_dump(dumps, tmp_path):
    dump, test_log = dumps[0]
    out = str(tmp_path / 'ap.png')
    result = run_tool(
        PER_CLASS,
        dump,
        '--config',
        TOOL_RUN_CONFIG,
        '--out',
        out,
        '--csv',
        str(tmp_path / 'ap.csv'),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_png(out)
    rows = _table(result.stdout)
    labels = np.load(dump)['labels']
    expected = _sklearn_ap(dump)
    printed_by_test = _table(test_log)  # tools/test.py's own per-class table (class, AP)
    for c in range(10):  # MultiDigits classes are named '0' ... '9'
        positives, ap = rows[str(c)]
        assert int(positives) == int(labels[:, c].sum())
        assert float(ap) == pytest.approx(expected[c], abs=0.006)
        assert ap == printed_by_test[str(c)][0]
    assert float(rows['mAP'][1]) == pytest.approx(expected.mean(), abs=0.006)
    logged_map = float(re.search(r'mAP: ([\d.]+)', test_log).group(1))
    assert float(rows['mAP'][1]) == pytest.approx(logged_map, abs=0.0051)
    assert osp.getsize(tmp_path / 'ap.csv') > 0


def test_per_class_ap_compares_two_dumps_class_by_class(dumps, tmp_path):
    out = str(tmp_path / 'compare.png')
    result = run_tool(
        PER_CLASS, dumps[0][0], dumps[1][0], '--names', 'A', 'B', '--sort', 'diff', '--out', out
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_png(out)
    lines = [line for line in result.stdout.splitlines() if line.startswith('| ')]
    assert [c.strip() for c in lines[0].strip('|').split('|')] == [
        'class',
        'positives',
        'AP A (%)',
        'AP B (%)',
        'B - A',
    ]
    a, b = _sklearn_ap(dumps[0][0]), _sklearn_ap(dumps[1][0])
    diffs = []
    for line in lines[1:-1]:
        name, _, ap_a, ap_b, diff = [c.strip() for c in line.strip('|').split('|')]
        c = int(name)
        assert float(ap_a) == pytest.approx(a[c], abs=0.006)
        assert float(ap_b) == pytest.approx(b[c], abs=0.006)
        assert float(diff) == pytest.approx(b[c] - a[c], abs=0.011)
        diffs.append(float(diff))
    assert len(diffs) == 10 and diffs == sorted(diffs, reverse=True)


def test_per_class_ap_refuses_dumps_of_different_images(dumps, tmp_path):
    data = dict(np.load(dumps[0][0]))
    other = str(tmp_path / 'other.npz')
    np.savez(
        other, scores=data['scores'], labels=data['labels'], sample_idx=data['sample_idx'] + 1000
    )
    result = run_tool(PER_CLASS, dumps[0][0], other, '--out', str(tmp_path / 'x.png'))
    assert result.returncode != 0
    assert 'cover different images' in result.stderr and 'other.npz' in result.stderr


def test_per_class_ap_names_a_dump_without_labels(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(osp.join(REPO, 'tools', 'analysis_tools'))
    tool = runpy.run_path(osp.join(REPO, PER_CLASS))  # its functions, without running main
    broken = str(tmp_path / 'broken.npz')
    np.savez(broken, scores=np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r'broken\.npz: no labels array \(has scores\)'):
        tool['load_dump'](broken)
    np.savez(broken, scores=np.zeros((4, 3)), labels=np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r'broken\.npz: scores \(4, 3\), labels \(4, 2\)'):
        tool['load_dump'](broken)
    np.savez(
        broken, scores=np.zeros((3, 2)), labels=np.array([1, 0, 1]), sample_idx=np.array([2, 0, 1])
    )
    data = tool['load_dump'](broken)  # single-label indices become one-hot, rows by sample_idx
    assert data['labels'].tolist() == [[1, 0], [0, 1], [0, 1]]
    assert data['sample_idx'].tolist() == [0, 1, 2]


def test_class_names_follow_the_datasets_arguments():
    """DigitObjects names num_colours x 10 classes: its class's METAINFO (a default) has 40, a
    study config's instance 100; the names are the instance's, not a refusal."""
    from conftest import load_tool

    names = load_tool('analysis_tools/per_class_ap').class_names_from_config(
        'mlkd::intra_class/digit_objects/teacher.py', 100
    )
    assert len(names) == 100 and names[:2] == ['red_0', 'red_1']
