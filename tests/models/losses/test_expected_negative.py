"""ExpectedNegativeLoss (EN of the spatial-consistency paper) against a loop over images and
classes written from docs/methods.md §3.3, for every switch combination."""

import itertools
import math

import pytest
import torch

import mlkd.models  # noqa: F401
from mlkd.models.losses import ExpectedNegativeLoss, StateSizeError

N, C = 7, 6


class _Reference:
    """EN by loops: per-image running averages in a dict, the expected negatives chosen per image
    (or globally), the loss summed entry by entry in float64."""

    def __init__(self, k_float, momentum, en_mode, rounding, unseen, normaliser, log_epsilon):
        self.k = {'round': round, 'floor': math.floor, 'ceil': math.ceil}[rounding](k_float)
        self.momentum, self.en_mode, self.unseen = momentum, en_mode, unseen
        self.normaliser, self.log_epsilon = normaliser, log_epsilon
        self.scores, self.annotated = {}, {}

    def _nl(self, u, logit, positive):
        if self.log_epsilon is None:
            x = logit if positive else -logit
            return math.log1p(math.exp(-x)) if x > -30 else -x
        return -math.log(u + self.log_epsilon)

    def _global_threshold(self):
        pool = sorted(
            (
                s
                for n, row in self.scores.items()
                for c, s in enumerate(row)
                if not self.annotated[n][c]
            ),
            reverse=True,
        )
        quota = self.k * len(self.scores)
        return pool[min(quota, len(pool)) - 1] if quota > 0 and pool else math.inf

    def step(self, logits, gt, idx):
        threshold = self._global_threshold() if self.en_mode == 'global_quota' else None
        total, supervised = 0.0, 0
        for b, n in enumerate(idx.tolist()):
            positives = {c for c in range(C) if gt[b, c] == 1}
            others = [c for c in range(C) if c not in positives]
            if n in self.scores:
                row = self.scores[n]
                if self.en_mode == 'per_image_topk':
                    left_out = set(sorted(others, key=lambda c: -row[c])[: self.k])
                else:
                    left_out = {c for c in others if row[c] >= threshold}
                negatives = [c for c in others if c not in left_out]
            else:
                negatives = others if self.unseen == 'assume_negative' else []
            for c in range(C):
                z = float(logits[b, c])
                p = 1 / (1 + math.exp(-z))
                if c in positives:
                    total += self._nl(p, z, True)
                    supervised += 1
                elif c in negatives:
                    total += self._nl(1 - p, z, False)
                    supervised += 1
        value = total / (len(idx) * C if self.normaliser == 'all' else max(supervised, 1))
        for b, n in enumerate(idx.tolist()):
            probs = torch.sigmoid(logits[b].double()).tolist()
            if n in self.scores:
                self.scores[n] = [
                    self.momentum * s + (1 - self.momentum) * p
                    for s, p in zip(self.scores[n], probs)
                ]
            else:
                self.scores[n] = probs
            self.annotated[n] = [bool(gt[b, c] == 1) for c in range(C)]
        return value


def _batch(step, b=5):
    g = torch.Generator().manual_seed(step)
    gt = torch.full((b, C), -1.0)
    gt[torch.arange(b), torch.randint(C, (b,), generator=g)] = 1.0
    idx = torch.randperm(N, generator=g)[:b]
    return torch.randn(b, C, generator=g) * 2, gt, idx


SWITCHES = list(
    itertools.product(
        ['per_image_topk', 'global_quota'],
        ['round', 'floor', 'ceil'],
        ['assume_negative', 'ignore'],
        ['all', 'supervised'],
        [1e-5, None],
    )
)


@pytest.mark.parametrize('en_mode,rounding,unseen,normaliser,log_epsilon', SWITCHES)
def test_equals_the_loop_over_images_and_classes(
    en_mode, rounding, unseen, normaliser, log_epsilon
):
    kwargs = dict(
        momentum=0.7,
        en_mode=en_mode,
        k_rounding=rounding,
        unseen=unseen,
        normaliser=normaliser,
        log_epsilon=log_epsilon,
    )
    loss = ExpectedNegativeLoss(num_samples=N, num_classes=C, expected_positives=1.6, **kwargs)
    reference = _Reference(1.6, 0.7, en_mode, rounding, unseen, normaliser, log_epsilon)
    for step in range(5):  # later steps revisit images: the state decides
        logits, gt, idx = _batch(step)
        assert float(loss(logits, gt, sample_idx=idx)) == pytest.approx(
            reference.step(logits, gt, idx), rel=1e-5, abs=1e-7
        ), step
    for n, row in reference.scores.items():
        torch.testing.assert_close(
            loss.scores[n].double(), torch.tensor(row, dtype=torch.float64), rtol=1e-5, atol=1e-6
        )


def test_the_left_out_classes_are_the_highest_running_averages():
    loss = ExpectedNegativeLoss(num_samples=1, num_classes=5, expected_positives=2.0, momentum=0.0)
    gt = torch.tensor([[1.0, -1, -1, -1, -1]])
    logits = torch.tensor([[0.0, 3.0, -2.0, 1.0, -4.0]])
    loss(logits, gt, sample_idx=torch.tensor([0]))  # first visit: AN, sets the average
    expected = loss.expected_negatives(gt, torch.tensor([0]))
    # classes 1 and 3 have the highest averages: left out; 2 and 4 are expected negatives
    assert expected.tolist() == [[False, False, True, False, True]]


@pytest.mark.parametrize('expected_positives', [2.9, 1.5, 1.9, 31.5, 2.79])
def test_floor_is_the_reading_where_k_counts_the_single_annotated_positive(expected_positives):
    # docs/methods.md: with one annotated positive, k_rounding='floor' leaves out round(K) - 1
    # classes, so K positives in all escape the negative term (Table K.1's K and the study's)
    num_classes = 40
    scores = torch.linspace(1, 0, num_classes)[None]
    gt = torch.full((1, num_classes), -1.0)
    gt[0, 0] = 1
    counts = {}
    for rounding in ('round', 'floor'):
        loss = ExpectedNegativeLoss(
            num_samples=1,
            num_classes=num_classes,
            expected_positives=expected_positives,
            k_rounding=rounding,
            momentum=0.0,
        )
        loss(torch.logit(scores.clamp(1e-4, 1 - 1e-4)), gt, sample_idx=torch.tensor([0]))
        negatives = loss.expected_negatives(gt, torch.tensor([0]))
        counts[rounding] = num_classes - 1 - int(negatives.sum())  # left out besides the positive
    assert counts['round'] == round(expected_positives)
    assert counts['floor'] == round(expected_positives) - 1


def test_value_gradient_and_extremes_stay_finite():
    loss = ExpectedNegativeLoss(num_samples=N, num_classes=C, expected_positives=2.9)
    logits, gt, idx = _batch(0)
    logits = (logits * 40).requires_grad_()
    for _ in range(2):
        value = loss(logits, gt, sample_idx=idx)
        value.backward()
        assert torch.isfinite(value) and torch.isfinite(logits.grad).all()


@pytest.mark.parametrize(
    'kwargs,message',
    [
        (dict(expected_positives=0), 'expected_positives .* must be > 0'),
        (dict(expected_positives=1.5, en_mode='lowest'), 'en_mode must be one of'),
        (dict(expected_positives=1.5, k_rounding='up'), 'k_rounding must be one of'),
        (dict(expected_positives=1.5, log_epsilon=0.0), 'log_epsilon must be > 0 or None'),
        (dict(expected_positives=1.5, momentum=1.0), r'momentum must be in \[0, 1\)'),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ExpectedNegativeLoss(num_samples=N, num_classes=C, **kwargs)


def test_state_round_trip_and_another_dataset_refused():
    loss = ExpectedNegativeLoss(num_samples=N, num_classes=C, expected_positives=1.5)
    logits, gt, idx = _batch(0)
    loss(logits, gt, sample_idx=idx)
    fresh = ExpectedNegativeLoss(num_samples=N, num_classes=C, expected_positives=1.5)
    fresh.load_state_dict(loss.state_dict())
    logits, gt, idx = _batch(1)
    torch.testing.assert_close(
        fresh(logits, gt, sample_idx=idx), loss(logits, gt, sample_idx=idx), rtol=0, atol=0
    )
    with pytest.raises(
        StateSizeError,
        match=r"'scores' has shape \(7, 6\) \(7 samples\), this "
        r'run needs \(9, 6\) \(9 samples\)',
    ):
        ExpectedNegativeLoss(num_samples=9, num_classes=C, expected_positives=1.5).load_state_dict(
            loss.state_dict()
        )
