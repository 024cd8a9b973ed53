"""DistillFidelity against loops written from the definitions (numpy), edge cases included."""

import math

import numpy as np
import pytest
import torch
from mmengine.evaluator import Evaluator
from mmengine.registry import DefaultScope

import mlkd  # noqa: F401
from mlkd.evaluation.metrics import DistillFidelity, fidelity_metrics

MULTI_KEYS = {'fidelity/mAP_vs_teacher', 'fidelity/mean_abs_diff', 'fidelity/label_agreement'}


def reference_ap(scores: np.ndarray, positive: np.ndarray) -> float:
    """AP of one class from the definition: mean over positives of the precision of the set of
    samples scored at least as high as it (tied scores share one threshold)."""
    precisions = [
        positive[scores >= scores[i]].sum() / (scores >= scores[i]).sum()
        for i in np.flatnonzero(positive)
    ]
    return float(np.mean(precisions))


def reference_multi_label(student: np.ndarray, teacher: np.ndarray, thr: float = 0.5) -> dict:
    n, c = student.shape
    aps = []
    for k in range(c):
        pos = teacher[:, k] >= thr
        if pos.any():  # classes with no teacher-positive sample are skipped
            aps.append(reference_ap(student[:, k].astype(np.float64), pos))
    jaccards = []
    for i in range(n):
        s_set = {k for k in range(c) if student[i, k] >= thr}
        t_set = {k for k in range(c) if teacher[i, k] >= thr}
        union = s_set | t_set
        jaccards.append(1.0 if not union else len(s_set & t_set) / len(union))
    diff = sum(abs(float(student[i, k]) - float(teacher[i, k])) for i in range(n) for k in range(c))
    return {
        'fidelity/mAP_vs_teacher': 100 * float(np.mean(aps)) if aps else math.nan,
        'fidelity/mean_abs_diff': diff / (n * c),
        'fidelity/label_agreement': 100 * float(np.mean(jaccards)),
    }


def reference_single_label(student: np.ndarray, teacher: np.ndarray) -> dict:
    agree, kls = [], []
    for s, t in zip(student.astype(np.float64), teacher.astype(np.float64)):
        agree.append(int(np.argmax(s) == np.argmax(t)))
        kls.append(sum(p * (math.log(p) - math.log(q)) for p, q in zip(t, s) if p > 0))
    return {'fidelity/top1_agreement': 100 * float(np.mean(agree)), 'fidelity/kl': np.mean(kls)}


def evaluate(student: np.ndarray, teacher: np.ndarray, batch: int = 3, **kwargs) -> dict:
    """Run the registered metric through an mmengine Evaluator in batches of ``batch``."""
    with DefaultScope.overwrite_default_scope('mlkd'):  # the registered name, as a config uses it
        evaluator = Evaluator([dict(type='DistillFidelity', **kwargs)])
    for start in range(0, len(student), batch):
        samples = [
            {'pred_score': torch.from_numpy(s), 'teacher_score': torch.from_numpy(t)}
            for s, t in zip(student[start : start + batch], teacher[start : start + batch])
        ]
        evaluator.process(samples)
    return evaluator.evaluate(len(student))


def assert_matches(result: dict, expected: dict) -> None:
    assert set(result) == set(expected)
    for key, value in expected.items():
        if math.isnan(value):
            assert math.isnan(result[key]), key
        else:
            assert result[key] == pytest.approx(value, rel=1e-9, abs=1e-9), key


def test_multi_label_keys_equal_the_numpy_reference_with_ties_and_edge_cases():
    rng = np.random.default_rng(0)
    teacher = rng.random((13, 6)).astype(np.float32)
    teacher[:, 2] = 0.1  # a class with no teacher-positive sample: skipped in the mAP
    teacher[4] = 0.2  # a sample whose teacher set is empty ...
    student = rng.random((13, 6)).astype(np.float32)
    student[4] = 0.3  # ... and whose student set is empty too: Jaccard 1
    student[[0, 5, 9], 1] = 0.75  # tied scores share one threshold
    student[7] = 0.5  # exactly at the threshold counts as positive
    expected = reference_multi_label(student, teacher)
    assert set(expected) == MULTI_KEYS
    assert_matches(evaluate(student, teacher), expected)


def test_batch_of_one_sample_and_all_classes_skipped():
    student = np.array([[0.9, 0.2, 0.6]], dtype=np.float32)
    teacher = np.array([[0.7, 0.1, 0.4]], dtype=np.float32)
    result = evaluate(student, teacher, batch=1)
    assert_matches(result, reference_multi_label(student, teacher))
    # One teacher positive ranked first: AP 1; sets {0, 2} and {0}: Jaccard 1/2.
    assert result['fidelity/mAP_vs_teacher'] == pytest.approx(100.0)
    assert result['fidelity/label_agreement'] == pytest.approx(50.0)
    assert result['fidelity/mean_abs_diff'] == pytest.approx((0.2 + 0.1 + 0.2) / 3, rel=1e-6)
    # No teacher positive anywhere: every class skipped, the mAP is undefined (NaN).
    none = evaluate(student, np.zeros_like(teacher), batch=1)
    assert math.isnan(none['fidelity/mAP_vs_teacher'])


def test_identical_scores_are_perfect_fidelity():
    rng = np.random.default_rng(1)
    scores = rng.random((8, 5)).astype(np.float32)
    result = evaluate(scores, scores)
    assert result['fidelity/mAP_vs_teacher'] == pytest.approx(100.0)
    assert result['fidelity/mean_abs_diff'] == 0.0
    assert result['fidelity/label_agreement'] == pytest.approx(100.0)


def test_single_label_keys_equal_the_numpy_reference():
    rng = np.random.default_rng(2)
    logits_s, logits_t = rng.normal(size=(11, 7)), rng.normal(size=(11, 7))
    student = torch.softmax(torch.from_numpy(logits_s), 1).float().numpy()
    teacher = torch.softmax(torch.from_numpy(logits_t), 1).float().numpy()
    student[3] = teacher[3]  # one sample in perfect agreement
    result = evaluate(student, teacher, mode='single_label')
    assert_matches(result, reference_single_label(student, teacher))
    one = evaluate(student[:1], teacher[:1], batch=1, mode='single_label')
    assert_matches(one, reference_single_label(student[:1], teacher[:1]))
    # A student softmax that underflowed to 0 where the teacher has mass stays finite.
    student[0] = np.eye(7, dtype=np.float32)[0]
    assert math.isfinite(evaluate(student, teacher, mode='single_label')['fidelity/kl'])


def test_bad_input_is_refused_naming_what_is_wrong():
    with pytest.raises(ValueError, match='mode'):
        DistillFidelity(mode='multi-label')
    with pytest.raises(ValueError, match='same'):
        fidelity_metrics(torch.rand(2, 3), torch.rand(2, 4))
    with pytest.raises(ValueError, match='NaN'):
        fidelity_metrics(torch.tensor([[math.nan, 0.5]]), torch.rand(1, 2))
    metric = DistillFidelity()
    with pytest.raises(KeyError, match='tools/test.py'):
        metric.process(None, [{'pred_score': torch.rand(3)}])
