"""Per-class thresholds (mlkd/evaluation/thresholds.py) against a brute-force search written from
the rules, the thresholds file, and ``MultiLabelMetrics(thresholds=...)`` against numpy."""

import json

import numpy as np
import pytest
import torch

from mlkd.evaluation.metrics import MultiLabelMetrics
from mlkd.evaluation.thresholds import (
    THRESHOLDS_FORMAT,
    ThresholdsFileError,
    f1_optimal_thresholds,
    load_thresholds,
    save_thresholds,
    thresholds_record,
)
from mlkd.utils.output_policy import OutputExistsError


def _problem(n=200, c=9, seed=0):
    """Scores on a coarse grid (many ties), ignored entries, one class without positives, one
    with positives only, one whose entries are all ignored."""
    rng = np.random.default_rng(seed)
    scores = (np.round(rng.random((n, c)) * 20) / 20).astype(np.float32)
    targets = (rng.random((n, c)) < 0.3 + 0.4 * scores).astype(np.int64)
    targets[rng.random((n, c)) < 0.1] = -1
    targets[:, 0] = np.where(targets[:, 0] < 0, -1, 0)  # no positives
    targets[:, 1] = 1  # positives only
    targets[:, 2] = -1  # every entry ignored
    return scores, targets


def _f1(scores, targets, thr) -> float:
    """F1 of ``score >= thr`` over the valid entries of one class, counted one by one."""
    tp = fp = fn = 0
    for score, target in zip(scores, targets):
        if target < 0:
            continue
        predicted = score >= thr
        tp += predicted and target > 0
        fp += predicted and target == 0
        fn += (not predicted) and target > 0
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _brute_force(scores, targets, default=0.5):
    """Per class, the rule of the module docstring by exhaustive search: every distinct valid
    score is a candidate cut (predict the scores >= it); the best F1, ties to the highest cut,
    the threshold halfway to the next lower valid score (0 below the lowest)."""
    thresholds, f1s = [], []
    for c in range(scores.shape[1]):
        valid = targets[:, c] >= 0
        if not (targets[valid, c] > 0).any():
            thresholds.append(default)
            f1s.append(float('nan'))
            continue
        values = sorted({float(s) for s in scores[valid, c]}, reverse=True)
        best, best_f1 = None, -1.0
        for i, cut in enumerate(values):
            f1 = _f1(scores[:, c], targets[:, c], cut)
            if f1 > best_f1:  # strictly better: an equal F1 lower down loses the tie
                below = values[i + 1] if i + 1 < len(values) else 0.0
                best, best_f1 = (cut + below) / 2, f1
        thresholds.append(best)
        f1s.append(best_f1)
    return np.array(thresholds), np.array(f1s)


def test_thresholds_match_a_brute_force_search():
    scores, targets = _problem()
    result = f1_optimal_thresholds(scores, targets)
    expected, expected_f1 = _brute_force(scores, targets)
    np.testing.assert_allclose(result.thresholds, expected, rtol=0, atol=1e-7)
    np.testing.assert_allclose(result.f1, expected_f1, rtol=0, atol=1e-12)
    # the F1 reported is the F1 the threshold gives, and no other threshold does better
    for c in range(scores.shape[1]):
        if result.calibrated[c]:
            reached = _f1(scores[:, c], targets[:, c], result.thresholds[c])
            assert reached == pytest.approx(result.f1[c], abs=1e-12)
            for thr in np.linspace(0, 1, 101):
                assert _f1(scores[:, c], targets[:, c], thr) <= reached + 1e-12
    assert result.calibrated.tolist() == [False, True, False] + [True] * 6
    assert result.thresholds[0] == result.thresholds[2] == 0.5
    assert result.num_positives[0] == 0 and result.num_positives[1] > 0
    # all positive: everything predicted, below the lowest valid score
    assert result.thresholds[1] <= scores[targets[:, 1] >= 0, 1].min()


def test_ties_go_to_the_highest_threshold_and_the_threshold_is_a_midpoint():
    # Cutting after 0.9 (tp 1, fp 0, fn 1: F1 2/3) or after 0.5 (tp 2, fp 2, fn 0: F1 2/3) tie.
    scores = np.array([[0.9], [0.7], [0.6], [0.5], [0.1]], np.float32)
    targets = np.array([[1], [0], [0], [1], [0]])
    result = f1_optimal_thresholds(scores, targets)
    assert result.f1[0] == pytest.approx(2 / 3)
    assert result.thresholds[0] == pytest.approx((0.9 + 0.7) / 2, abs=1e-7)


def test_a_gap_narrower_than_float32_keeps_the_upper_score():
    high = np.float32(0.5)
    low = np.nextafter(high, np.float32(0))  # adjacent float32 numbers: no float32 midpoint
    scores = np.array([[high], [low]], np.float32)
    result = f1_optimal_thresholds(scores, np.array([[1], [0]]))
    thr = result.thresholds[0]
    assert thr == float(high)
    assert (torch.from_numpy(scores) >= thr).flatten().tolist() == [True, False]  # float32
    assert (scores.astype(np.float64) >= thr).flatten().tolist() == [True, False]


def test_bad_scores_are_refused():
    with pytest.raises(ValueError, match='probabilities'):
        f1_optimal_thresholds(np.array([[2.0]]), np.array([[1]]))
    with pytest.raises(ValueError, match='NaN'):
        f1_optimal_thresholds(np.array([[np.nan]]), np.array([[1]]))
    with pytest.raises(ValueError, match=r'\[N, C\]'):
        f1_optimal_thresholds(np.zeros((3, 2)), np.zeros((3, 3)))


def _save(path, classes=('a', 'b', 'c'), **policy):
    scores = np.array([[0.9, 0.2, 0.4], [0.3, 0.8, 0.6], [0.6, 0.1, 0.7]], np.float32)
    targets = np.array([[1, 0, 0], [0, 1, 1], [1, 0, 0]])
    record = thresholds_record(
        f1_optimal_thresholds(scores, targets), classes, {'config_sha256': 'abc'}
    )
    save_thresholds(path, record, **policy)
    return record


def test_file_round_trip_and_label_set_checks(tmp_path):
    path = tmp_path / 't.json'
    record = _save(path)
    stored = json.loads(path.read_text())
    assert stored['format'] == THRESHOLDS_FORMAT and stored['classes'] == ['a', 'b', 'c']
    assert stored['config_sha256'] == 'abc' and 'rule' in stored
    np.testing.assert_array_equal(load_thresholds(path, ['a', 'b', 'c']), record['thresholds'])
    with pytest.raises(ThresholdsFileError, match=r"another label set.*#1: 'b' vs 'x'"):
        load_thresholds(path, ['a', 'x', 'c'], 'the model')
    with pytest.raises(ThresholdsFileError, match='3 classes vs 4'):
        load_thresholds(path, ['a', 'b', 'c', 'd'])
    with pytest.raises(OutputExistsError, match='--overwrite'):
        _save(path)
    assert json.loads(path.read_text()) == stored
    bad = tmp_path / 'bad.json'
    bad.write_text('{"thresholds": [0.5]}')
    with pytest.raises(ThresholdsFileError, match='not a thresholds file'):
        load_thresholds(bad)
    bad.write_text('not json')
    with pytest.raises(ThresholdsFileError, match='not JSON'):
        load_thresholds(bad)
    with pytest.raises(FileNotFoundError, match='missing.json'):
        load_thresholds(tmp_path / 'missing.json')


def _numpy_prf(scores, targets, thresholds):
    """CP, CR, CF1 (harmonic), OP, OR, OF1 in percent, with numpy, ignored entries left out."""
    pred = scores >= thresholds[None, :]
    pos, neg = targets > 0, targets == 0
    tp, fp = (pred & pos).sum(0), (pred & neg).sum(0)
    fn = pos.sum(0) - tp
    ratio = lambda a, b: np.divide(a, b, out=np.zeros(len(a)), where=b > 0)  # noqa: E731
    cp, cr = ratio(tp, tp + fp).mean(), ratio(tp, tp + fn).mean()
    op, orec = tp.sum() / (tp + fp).sum(), tp.sum() / (tp + fn).sum()
    return {
        'CP': cp,
        'CR': cr,
        'CF1': 2 * cp * cr / (cp + cr),
        'OP': op,
        'OR': orec,
        'OF1': 2 * op * orec / (op + orec),
    }


def test_multilabel_metrics_evaluate_with_a_thresholds_file(tmp_path):
    scores, targets = _problem(n=120, c=6, seed=3)
    scores = scores.astype(np.float32)
    classes = [f'c{i}' for i in range(6)]
    thresholds = np.linspace(0.2, 0.7, 6).astype(np.float32).astype(np.float64)
    record = thresholds_record(f1_optimal_thresholds(scores, targets), classes)
    record['thresholds'] = thresholds.tolist()
    path = tmp_path / 'thr.json'
    save_thresholds(path, record)

    metric = MultiLabelMetrics(thresholds=str(path))
    metric.dataset_meta = {'classes': classes}
    metric.process(
        None,
        [
            {'pred_score': torch.from_numpy(s), 'gt_score': torch.from_numpy(t)}
            for s, t in zip(scores, targets)
        ],
    )
    result = metric.evaluate(len(scores))
    expected = _numpy_prf(scores, targets, thresholds)
    for name, value in expected.items():
        assert result[f'{name}_calib'] == pytest.approx(100 * value, abs=1e-9), name
    assert result['CF1_thr0.5'] == pytest.approx(
        100 * _numpy_prf(scores, targets, np.full(6, 0.5))['CF1'], abs=1e-9
    )

    other = MultiLabelMetrics(thresholds=str(path))
    other.dataset_meta = {'classes': [f'd{i}' for i in range(6)]}
    other.process(None, [{'pred_score': torch.from_numpy(scores[0]), 'gt_score': torch.ones(6)}])
    with pytest.raises(ThresholdsFileError, match='another label set than the evaluated dataset'):
        other.evaluate(1)
    with pytest.raises(ValueError, match='needs thresholds'):
        MultiLabelMetrics(conventions=('calibrated',))
