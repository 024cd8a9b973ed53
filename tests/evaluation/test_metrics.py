"""Tests for mlkd's vectorised multi-label metrics (methods.md §6)."""

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, f1_score

import mlkd
from mlkd.evaluation.metrics import MultiLabelMetrics, SampleMAP
from mlkd.evaluation.metrics.functional import (
    average_precision,
    confusion_counts,
    mean_average_precision,
    mean_of_ap,
    multilabel_prf,
    oracle_topk_predictions,
    prf_from_counts,
    sample_average_precision,
    threshold_predictions,
    topk_predictions,
)
from mlkd.registry import METRICS


def _sk_ap(targets: np.ndarray, scores: np.ndarray) -> float:
    """scikit-learn AP of one column, silencing its 'no positive class' warning."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return float(average_precision_score(targets, scores))


def _tied_problem(n=300, c=12, seed=0, ignore_frac=0.0):
    gen = torch.Generator().manual_seed(seed)
    # One decimal makes about n/11 entries share every score value: many large tie groups.
    scores = torch.round(torch.rand(n, c, generator=gen) * 10) / 10
    targets = (torch.rand(n, c, generator=gen) < 0.2).long()
    targets[:, 0] = 0  # a class without positives
    if ignore_frac:
        targets[torch.rand(n, c, generator=gen) < ignore_frac] = -1
    return scores, targets


# ----------------------------------------------------------------------------------------------
# Average precision
# ----------------------------------------------------------------------------------------------


def test_ap_matches_sklearn_with_ties_and_empty_class_zero_policy():
    scores, targets = _tied_problem()
    ap = average_precision(scores, targets, empty_policy='zero')
    expected = [_sk_ap(targets[:, c].numpy(), scores[:, c].numpy()) for c in range(12)]
    np.testing.assert_allclose(ap.numpy(), expected, rtol=0, atol=1e-12)
    assert ap[0] == 0.0  # scikit-learn >= 1.1 also gives 0 (with a warning)
    with pytest.warns(UserWarning):
        assert average_precision_score(targets[:, 0].numpy(), scores[:, 0].numpy()) == 0.0
    assert mean_average_precision(scores, targets) == pytest.approx(100 * np.mean(expected))


def test_ap_exclude_policy_drops_empty_classes():
    scores, targets = _tied_problem()
    ap = average_precision(scores, targets, empty_policy='exclude')
    assert math.isnan(ap[0]) and not torch.isnan(ap[1:]).any()
    expected = [_sk_ap(targets[:, c].numpy(), scores[:, c].numpy()) for c in range(1, 12)]
    assert mean_average_precision(scores, targets, empty_policy='exclude') == pytest.approx(
        100 * np.mean(expected), abs=1e-10
    )
    # 'zero' counts the empty class, so the two means must differ.
    assert mean_average_precision(scores, targets, 'zero') < mean_average_precision(
        scores, targets, 'exclude'
    )
    assert math.isnan(mean_of_ap(torch.full((3,), math.nan, dtype=torch.float64)))


def test_ap_grouped_ties_are_permutation_invariant_but_stable_sort_is_not():
    scores, targets = _tied_problem(seed=1)
    perm = torch.randperm(scores.shape[0], generator=torch.Generator().manual_seed(3))
    grouped = average_precision(scores, targets)
    grouped_perm = average_precision(scores[perm], targets[perm])
    torch.testing.assert_close(grouped, grouped_perm, rtol=0, atol=1e-12)
    stable = average_precision(scores, targets, tie_policy='stable_sort')
    stable_perm = average_precision(scores[perm], targets[perm], tie_policy='stable_sort')
    # With this many ties the order-dependent policy must see the permutation.
    assert (stable - stable_perm).abs().max() > 1e-3
    assert (stable - grouped).abs().max() > 1e-3


def test_ap_stable_sort_matches_brute_force_rank_order():
    scores, targets = _tied_problem(n=80, c=5, seed=2)
    ap = average_precision(scores, targets, tie_policy='stable_sort')
    for c in range(1, 5):
        order = np.argsort(-scores[:, c].numpy(), kind='stable')
        hits = targets[order, c].numpy() == 1
        precision_at_hits = np.cumsum(hits)[hits] / (np.flatnonzero(hits) + 1)
        assert ap[c].item() == pytest.approx(precision_at_hits.mean(), abs=1e-12)


def test_ap_without_ties_all_policies_agree_with_sklearn():
    gen = torch.Generator().manual_seed(4)
    scores = torch.rand(200, 6, generator=gen, dtype=torch.float64)
    targets = (torch.rand(200, 6, generator=gen) < 0.3).long()
    expected = [_sk_ap(targets[:, c].numpy(), scores[:, c].numpy()) for c in range(6)]
    for tie_policy in ('grouped', 'stable_sort'):
        np.testing.assert_allclose(
            average_precision(scores, targets, tie_policy=tie_policy).numpy(), expected, atol=1e-12
        )


def test_ap_ignores_minus_one_entries():
    scores, targets = _tied_problem(seed=5, ignore_frac=0.25)
    ap = average_precision(scores, targets)
    for c in range(12):
        keep = targets[:, c] >= 0
        expected = _sk_ap(targets[keep, c].numpy(), scores[keep, c].numpy())
        assert ap[c].item() == pytest.approx(expected, abs=1e-12)
    # Treating -1 as a negative instead must change the result.
    as_negative = average_precision(scores, targets.clamp(min=0))
    assert (as_negative - ap).abs().max() > 1e-3


def test_ap_large_column_uses_wide_counters():
    # N >= 46340 no longer fits the packed int32 counters; the int64 path must agree too.
    gen = torch.Generator().manual_seed(6)
    scores = torch.round(torch.rand(50000, 2, generator=gen) * 1000) / 1000
    targets = (torch.rand(50000, 2, generator=gen) < 0.5).long()
    ap = average_precision(scores, targets)
    expected = [_sk_ap(targets[:, c].numpy(), scores[:, c].numpy()) for c in range(2)]
    np.testing.assert_allclose(ap.numpy(), expected, atol=1e-10)


_SCORES_2X2 = torch.tensor([[0.9, 0.1], [0.2, 0.8]])
_TARGETS_2X2 = torch.tensor([[1, 0], [0, 1]])


@pytest.mark.parametrize(
    'ap_with',
    [
        lambda **policy: average_precision(_SCORES_2X2, _TARGETS_2X2, **policy),
        lambda **policy: sample_average_precision(_SCORES_2X2, _TARGETS_2X2, **policy),
        lambda **policy: MultiLabelMetrics(**policy),
        lambda **policy: SampleMAP(**policy),
    ],
    ids=['average_precision', 'sample_average_precision', 'MultiLabelMetrics', 'SampleMAP'],
)
@pytest.mark.parametrize(
    'policy, message',
    [
        (dict(empty_policy='skip'), "empty_policy must be 'zero' or 'exclude', got 'skip'"),
        (dict(tie_policy='random'), "tie_policy must be 'grouped' or 'stable_sort', got 'random'"),
    ],
)
def test_unknown_ap_policy_is_refused_by_functions_and_metrics(ap_with, policy, message):
    with pytest.raises(ValueError, match=f'^{message}$'):
        ap_with(**policy)


def test_sample_map_excludes_all_negative_samples():
    scores, targets = _tied_problem(n=40, c=10, seed=7)
    targets[:5] = 0  # five samples without any positive
    targets[5, 3] = -1
    per_sample = sample_average_precision(scores, targets)
    assert torch.isnan(per_sample[:5]).all()
    expected = []
    for i in range(40):
        keep = targets[i] >= 0
        if (targets[i] > 0).any():
            expected.append(_sk_ap(targets[i, keep].numpy(), scores[i, keep].numpy()))
    np.testing.assert_allclose(per_sample[~torch.isnan(per_sample)].numpy(), expected, atol=1e-12)
    assert mean_of_ap(per_sample) == pytest.approx(100 * np.mean(expected))
    zero = sample_average_precision(scores, targets, empty_policy='zero')
    assert (zero[:5] == 0).all()
    assert mean_of_ap(zero) == pytest.approx(100 * np.sum(expected) / 40)


# ----------------------------------------------------------------------------------------------
# Precision / recall / F1
# ----------------------------------------------------------------------------------------------

# 4 images x 3 classes, threshold 0.5.
_HAND_SCORES = torch.tensor([[0.9, 0.6, 0.1], [0.8, 0.2, 0.7], [0.3, 0.4, 0.55], [0.1, 0.7, 0.2]])
_HAND_TARGETS = torch.tensor([[1, 0, 0], [1, 0, 1], [0, 1, 0], [0, 1, 0]])


def test_prf_threshold_by_hand():
    # Predictions (score >= 0.5): rows [1,1,0], [1,0,1], [0,0,1], [0,1,0].
    # class 0: predicted {0,1}, positive {0,1}: TP 2, FP 0, FN 0 -> P 1,   R 1,   F1 1
    # class 1: predicted {0,3}, positive {2,3}: TP 1, FP 1, FN 1 -> P 1/2, R 1/2, F1 1/2
    # class 2: predicted {1,2}, positive {1}:   TP 1, FP 1, FN 0 -> P 1/2, R 1,   F1 2/3
    # CP = (1 + 1/2 + 1/2)/3 = 2/3;  CR = (1 + 1/2 + 1)/3 = 5/6
    # CF1 (harmonic) = 2 (2/3)(5/6) / (2/3 + 5/6) = (10/9)/(3/2) = 20/27
    # CF1 (mean of class F1) = (1 + 1/2 + 2/3)/3 = 13/18
    # ΣTP 4, ΣFP 2, ΣFN 1: OP = 4/6 = 2/3, OR = 4/5, OF1 = 2·4/(2·4 + 2 + 1) = 8/11
    pred = threshold_predictions(_HAND_SCORES, 0.5)
    tp, fp, fn = confusion_counts(pred, _HAND_TARGETS)
    assert tp.tolist() == [2, 1, 1] and fp.tolist() == [0, 1, 1] and fn.tolist() == [0, 1, 0]
    out = multilabel_prf(_HAND_SCORES, _HAND_TARGETS, 'threshold', thr=0.5)
    expected = dict(CP=2 / 3, CR=5 / 6, CF1=20 / 27, OP=2 / 3, OR=4 / 5, OF1=8 / 11)
    for key, value in expected.items():
        assert out[key] == pytest.approx(100 * value, abs=1e-10), key
    macro = multilabel_prf(_HAND_SCORES, _HAND_TARGETS, 'threshold', cf1_mode='mean_of_class_f1')
    assert macro['CF1'] == pytest.approx(100 * 13 / 18, abs=1e-10)
    # mean_of_class_f1 is scikit-learn's macro F1; micro F1 is OF1.
    sk_pred, sk_true = pred.numpy().astype(int), _HAND_TARGETS.numpy()
    assert macro['CF1'] == pytest.approx(100 * f1_score(sk_true, sk_pred, average='macro'))
    assert out['OF1'] == pytest.approx(100 * f1_score(sk_true, sk_pred, average='micro'))


def test_prf_ignored_entries_and_zero_division_policy():
    targets = _HAND_TARGETS.clone()
    targets[2, 2] = -1  # the false positive of class 2 is now ignored
    tp, fp, fn = confusion_counts(threshold_predictions(_HAND_SCORES), targets)
    assert (tp[2].item(), fp[2].item(), fn[2].item()) == (1, 0, 0)
    # A class never predicted and never positive: P, R and F1 are 0/0 -> 0, and still counted.
    out = prf_from_counts(torch.tensor([2, 0]), torch.tensor([0, 0]), torch.tensor([0, 0]))
    assert out['CP'] == pytest.approx(50.0) and out['CR'] == pytest.approx(50.0)
    assert out['CF1'] == pytest.approx(50.0)
    assert out['OP'] == out['OR'] == out['OF1'] == pytest.approx(100.0)
    nothing = prf_from_counts(
        torch.zeros(2, dtype=torch.long), torch.zeros(2, dtype=torch.long), torch.tensor([1, 1])
    )
    assert all(v == 0.0 for v in nothing.values())


def test_topk_predicts_k_per_image_and_skips_ignored():
    scores = torch.tensor([[0.9, 0.8, 0.7, 0.1], [0.1, 0.2, 0.3, 0.4]])
    targets = torch.tensor([[1, -1, 0, 0], [0, 0, 0, 1]])
    pred = topk_predictions(scores, 2, targets)
    assert pred.tolist() == [[True, False, True, False], [False, False, True, True]]
    assert topk_predictions(scores, 2).tolist()[0] == [True, True, False, False]


def test_topk_ties_at_the_kth_place_go_to_the_lower_class_indices():
    """The documented tie rule: exactly k predicted, the lower class indices among tied scores
    (torch.topk leaves the choice unspecified)."""
    scores = torch.tensor([[0.5, 0.9, 0.5, 0.5], [0.2, 0.2, 0.2, 0.2], [0.1, 0.7, 0.7, 0.7]])
    assert topk_predictions(scores, 2).tolist() == [
        [True, True, False, False],
        [True, True, False, False],
        [False, True, True, False],
    ]
    # An ignored entry gives up its place to the next tied class.
    targets = torch.tensor([[-1, 0, 0, 0], [0, 0, 0, 0], [0, 0, -1, 0]])
    assert topk_predictions(scores, 2, targets).tolist() == [
        [False, True, True, False],
        [True, True, False, False],
        [False, True, False, True],
    ]


def test_every_ranking_metric_states_its_tie_rule():
    from mlkd.evaluation.metrics import functional

    for ranking in (
        functional,
        average_precision,
        sample_average_precision,
        mean_average_precision,
        topk_predictions,
        oracle_topk_predictions,
        MultiLabelMetrics,
        SampleMAP,
    ):
        assert 'tie' in ranking.__doc__.lower(), ranking.__name__


def test_oracle_topk_predicts_exactly_k_without_ties():
    gen = torch.Generator().manual_seed(8)
    scores = torch.rand(50, 7, generator=gen)
    targets = (torch.rand(50, 7, generator=gen) < 0.4).long()
    targets[0] = 1  # k = C: the reference would raise IndexError; everything is predicted
    targets[1] = 0  # k = 0: nothing is predicted
    pred = oracle_topk_predictions(scores, targets)
    k = targets.sum(1)
    assert torch.equal(pred.sum(1), k)
    assert pred[0].all() and not pred[1].any()
    # The reference rule, row by row: threshold = (k+1)-th largest, predict strictly greater.
    for i in range(2, 50):
        ki = int(k[i])
        if ki < 7:
            thr = torch.sort(scores[i], descending=True).values[ki]
            assert torch.equal(pred[i], scores[i] > thr)
    # Under oracle-k without ties ΣFP = ΣFN, so OP = OR = OF1.
    out = multilabel_prf(scores, targets, 'oracle_topk')
    assert out['OP'] == pytest.approx(out['OR']) == pytest.approx(out['OF1'])


def test_oracle_topk_ties_and_ignored_entries():
    scores = torch.tensor(
        [
            [0.9, 0.5, 0.5, 0.1],  # k = 2, tie at the 3rd score -> only 1 predicted
            [0.9, 0.8, 0.2, 0.1],  # k = 2 with the top score ignored
            [0.9, 0.8, 0.2, 0.1],
        ]
    )  # k = 3 = all non-ignored entries
    targets = torch.tensor([[1, 1, 0, 0], [-1, 1, 1, 0], [1, 1, 1, -1]])
    pred = oracle_topk_predictions(scores, targets)
    assert pred.tolist() == [
        [True, False, False, False],
        [False, True, True, False],
        [True, True, True, False],
    ]


# ----------------------------------------------------------------------------------------------
# Registered metrics
# ----------------------------------------------------------------------------------------------


def _fake_samples(seed=9, n=60, c=6):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.round(torch.rand(n, c, generator=gen) * 20) / 20
    samples, targets = [], torch.zeros(n, c, dtype=torch.long)
    for i in range(n):
        labels = torch.nonzero(torch.rand(c, generator=gen) < 0.3).flatten()
        targets[i, labels] = 1
        sample = {'pred_score': scores[i].clone(), 'gt_label': labels}
        if i % 4 == 0:
            # One difficult-only class (-> ignored) and, when possible, one class that is both
            # difficult and normal (-> stays positive).
            free = [j for j in range(c) if j not in labels.tolist()]
            difficult = [free[0]] + labels.tolist()[:1]
            targets[i, free[0]] = -1
            sample['gt_label_difficult'] = difficult
        samples.append(sample)
    return samples, scores, targets


def test_multi_label_metrics_end_to_end():
    samples, scores, targets = _fake_samples()
    assert (targets == -1).any()
    metric = METRICS.build(dict(type='MultiLabelMetrics', topk=3))
    for start in range(0, 60, 16):  # batches like a ValLoop
        metric.process(None, samples[start : start + 16])
    out = metric.evaluate(60)
    tags = ('thr0.5', 'oracle', 'top3')
    assert set(out) == {'mAP'} | {
        f'{m}_{t}' for t in tags for m in ('CP', 'CR', 'CF1', 'OP', 'OR', 'OF1')
    }
    expected_ap = [
        _sk_ap(targets[targets[:, c] >= 0, c].numpy(), scores[targets[:, c] >= 0, c].numpy())
        for c in range(6)
    ]
    assert out['mAP'] == pytest.approx(100 * np.mean(expected_ap), abs=1e-8)
    np.testing.assert_allclose(metric.last_per_class_ap, expected_ap, atol=1e-10)  # fractions
    thr = multilabel_prf(scores, targets, 'threshold', thr=0.5)
    oracle = multilabel_prf(scores, targets, 'oracle_topk')
    top3 = multilabel_prf(scores, targets, 'topk', k=3)
    for name in ('CP', 'CR', 'CF1', 'OP', 'OR', 'OF1'):
        assert out[f'{name}_thr0.5'] == pytest.approx(thr[name])
        assert out[f'{name}_oracle'] == pytest.approx(oracle[name])
        assert out[f'{name}_top3'] == pytest.approx(top3[name])
    # The same samples without their difficult lists (difficult_policy='negative') count those
    # labels as negatives, which must give a different mAP.
    plain = MultiLabelMetrics(conventions=('threshold',))
    plain.process(
        None, [{k: v for k, v in s.items() if k != 'gt_label_difficult'} for s in samples]
    )
    assert plain.evaluate(60)['mAP'] != pytest.approx(out['mAP'], abs=1e-6)


def test_multi_label_metrics_through_evaluator_with_real_data_samples():
    # The Evaluator turns DataSample objects into dicts (metainfo included), as in a ValLoop.
    from mmengine.evaluator import Evaluator
    from mmpretrain.structures import DataSample

    scores = torch.tensor([[0.9, 0.2, 0.6, 0.1], [0.3, 0.8, 0.7, 0.4]])
    samples = [
        DataSample(metainfo=dict(gt_label_difficult=[2, 0])).set_gt_label([0, 1]),
        DataSample(metainfo=dict(gt_label_difficult=None)).set_gt_label([2]),
    ]
    for sample, score in zip(samples, scores):
        sample.set_pred_score(score)
    metric = MultiLabelMetrics(conventions=('threshold',))
    evaluator = Evaluator([metric])
    evaluator.process(data_samples=samples)
    out = evaluator.evaluate(2)
    # Class 2 is difficult-only in image 0 (-> ignored); class 0 is both difficult and positive.
    assert metric.results == [] and metric.last_per_class_ap is not None
    # Per class (ignored entry removed): a: [1 @0.9, 0 @0.3] -> 1; b: [1 @0.2, 0 @0.8] -> 1/2;
    # c: [1 @0.7] -> 1; d: no positive -> 0.  mAP = 100 * 2.5 / 4.
    np.testing.assert_allclose(metric.last_per_class_ap, [1.0, 0.5, 1.0, 0.0])
    assert out['mAP'] == pytest.approx(62.5)
    # thr 0.5 -> predictions {a, c} and {b, c}; image 0's c is ignored:
    # a: TP 1; b: FP 1, FN 1; c: TP 1; d: nothing.  ΣTP 2, ΣFP 1, ΣFN 1 -> OP = OR = 2/3.
    assert out['OP_thr0.5'] == pytest.approx(200 / 3) and out['OR_thr0.5'] == pytest.approx(200 / 3)


def test_multi_label_metrics_gt_score_and_macro_key():
    samples, scores, targets = _fake_samples(seed=10)
    metric = MultiLabelMetrics(thr=0.4, conventions=('threshold',), cf1_mode='mean_of_class_f1')
    metric.process(
        None,
        [
            {'pred_score': s['pred_score'], 'gt_score': targets[i].clamp(min=0)}
            for i, s in enumerate(samples)
        ],
    )
    out = metric.evaluate(len(samples))
    assert set(out) == {
        'mAP',
        'CP_thr0.4',
        'CR_thr0.4',
        'CF1macro_thr0.4',
        'OP_thr0.4',
        'OR_thr0.4',
        'OF1_thr0.4',
    }
    expected = multilabel_prf(scores, targets.clamp(min=0), thr=0.4, cf1_mode='mean_of_class_f1')
    assert out['CF1macro_thr0.4'] == pytest.approx(expected['CF1'])
    with pytest.raises(ValueError):
        MultiLabelMetrics(conventions=('topk',))


def test_sample_map_metric():
    samples, scores, targets = _fake_samples(seed=11)
    for s in samples[:3]:
        s['gt_label'] = torch.tensor([], dtype=torch.long)
        s.pop('gt_label_difficult', None)
    targets[:3] = 0
    metric = METRICS.build(dict(type='SampleMAP'))
    assert isinstance(metric, SampleMAP)
    metric.process(None, samples)
    out = metric.evaluate(len(samples))
    assert set(out) == {'mAP@sample', 'mAP@class'}
    assert out['mAP@sample'] == pytest.approx(mean_of_ap(sample_average_precision(scores, targets)))
    assert out['mAP@class'] == pytest.approx(
        mean_average_precision(scores, targets, empty_policy='exclude')
    )


def test_accuracy_resolves_from_mlkd_registry():
    from mmengine.registry import DefaultScope

    mlkd.register_all_modules()
    with DefaultScope.overwrite_default_scope('mlkd'):
        metric = METRICS.build(dict(type='Accuracy', topk=(1, 5)))
    assert type(metric).__module__.startswith('mmpretrain')
    scores = torch.tensor(
        [
            [0.50, 0.10, 0.10, 0.10, 0.10, 0.05, 0.05],  # label 0: top-1 hit
            [0.10, 0.50, 0.20, 0.10, 0.05, 0.03, 0.02],  # label 2: rank 2, top-5 hit
            [0.30, 0.20, 0.15, 0.12, 0.10, 0.08, 0.05],  # label 6: rank 7, miss
            [0.05, 0.10, 0.15, 0.20, 0.50, 0.00, 0.00],  # label 0: rank 5, top-5 hit
        ]
    )
    labels = [0, 2, 6, 0]
    metric.process(
        None, [{'pred_score': s, 'gt_label': torch.tensor([y])} for s, y in zip(scores, labels)]
    )
    out = metric.evaluate(4)
    assert out['accuracy/top1'] == pytest.approx(25.0)
    assert out['accuracy/top5'] == pytest.approx(75.0)
