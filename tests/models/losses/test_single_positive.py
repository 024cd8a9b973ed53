"""AN, AN-LS, WAN, EPR, ROLE, EN against loops over the entries written from the formulas."""

import math

import pytest
import torch
from mmengine.optim import build_optim_wrapper
from torch import nn

from mlkd.models.losses import (
    AssumeNegativeLoss,
    EntropyMaximisationLoss,
    ExpectedPositivesLoss,
    ROLELoss,
    WeakAssumeNegativeLoss,
)


def nl(u: float) -> float:
    return -math.log(u + 1e-5)


def sig(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def _data(batch=6, classes=5, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, classes, generator=g) * scale
    gt = torch.full((batch, classes), -1.0)
    gt[torch.arange(batch), torch.randint(classes, (batch,), generator=g)] = 1.0
    return logits, gt


def _matrix_mean(logits, gt, entry):
    """Σ_entries entry(p, label) / (B·C), one Python float at a time."""
    total = 0.0
    for i in range(logits.shape[0]):
        for c in range(logits.shape[1]):
            total += entry(sig(float(logits[i, c])), float(gt[i, c]))
    return total / logits.numel()


def an_entry(eps=0.0, gamma=1.0, zero_is_negative=False):
    def entry(p, y):
        if y == 1:
            return (1 - eps) * nl(p) + eps * nl(1 - p)
        weight = 1.0 if (y == 0 and zero_is_negative) else gamma
        return weight * ((1 - eps) * nl(1 - p) + eps * nl(p))

    return entry


@pytest.mark.parametrize('batch', [1, 6])
@pytest.mark.parametrize('unobserved_code', [-1.0, 0.0])
def test_an_an_ls_wan_match_the_loop(batch, unobserved_code):
    logits, gt = _data(batch)
    gt[gt == -1] = unobserved_code  # MultiDigits gives unobserved labels as 0
    an = AssumeNegativeLoss()(logits, gt)
    torch.testing.assert_close(an, torch.tensor(_matrix_mean(logits, gt, an_entry())))
    ls = AssumeNegativeLoss(label_smoothing=0.1)(logits, gt)
    torch.testing.assert_close(ls, torch.tensor(_matrix_mean(logits, gt, an_entry(0.1))))
    wan = WeakAssumeNegativeLoss(num_classes=5)(logits, gt)
    torch.testing.assert_close(wan, torch.tensor(_matrix_mean(logits, gt, an_entry(0, 1 / 4))))


def test_observed_negatives_keep_full_weight_in_wan():
    logits, gt = _data()
    gt[:, 0] = torch.where(gt[:, 0] == 1, gt[:, 0], torch.zeros(6))  # annotated negatives
    got = WeakAssumeNegativeLoss(num_classes=5, observed_negatives=True)(logits, gt)
    ref = _matrix_mean(logits, gt, an_entry(0, 1 / 4, zero_is_negative=True))
    torch.testing.assert_close(got, torch.tensor(ref))
    assert not torch.allclose(got, WeakAssumeNegativeLoss(num_classes=5)(logits, gt))


def test_extreme_logits_stay_finite_and_ignore_nothing_silently():
    logits = torch.tensor([[80.0, -80.0, 0.0]], requires_grad=True)
    gt = torch.tensor([[1.0, -1.0, -1.0]])
    for loss in (
        AssumeNegativeLoss(),
        WeakAssumeNegativeLoss(num_classes=3),
        EntropyMaximisationLoss(),
        ExpectedPositivesLoss(expected_positives=1.5),
    ):
        value = loss(logits, gt)
        value.backward()
        assert torch.isfinite(value) and torch.isfinite(logits.grad).all()
        logits.grad = None
    with pytest.raises(ValueError, match=r'logits \(1, 3\) and gt \(1, 2\)'):
        AssumeNegativeLoss()(logits, torch.tensor([[1.0, 0.0]]))


def test_epr_matches_the_loop_and_the_hand_regulariser():
    logits, gt = _data()
    k = 2.9
    got = ExpectedPositivesLoss(expected_positives=k)(logits, gt)
    main = _matrix_mean(logits, gt, lambda p, y: nl(p) if y == 1 else 0.0)
    row_sums = [sum(sig(float(z)) for z in row) for row in logits]
    reg = (sum(row_sums) / len(row_sums) - k) ** 2 / 25
    torch.testing.assert_close(got, torch.tensor(main + reg))
    # hand value: one sample, p = (0.5, 0.5), positive on class 0, k = 2: nl(0.5)/2 + (1-2)²/4
    hand = ExpectedPositivesLoss(expected_positives=2)(
        torch.zeros(1, 2), torch.tensor([[1.0, -1.0]])
    )
    torch.testing.assert_close(hand, torch.tensor(nl(0.5) / 2 + 0.25))
    with pytest.raises(ValueError, match='expected_positives'):
        ExpectedPositivesLoss(expected_positives=0)


def test_en_matches_the_loop_and_prefers_uncertain_unobserved_labels():
    logits, gt = _data()

    def entry(p, y):
        if y == 1:
            return nl(p)
        return -0.2 * (p * nl(p) + (1 - p) * nl(1 - p))

    got = EntropyMaximisationLoss(alpha=0.2)(logits, gt)
    torch.testing.assert_close(got, torch.tensor(_matrix_mean(logits, gt, entry)))
    # the unobserved term is smallest at p = 0.5 (maximal entropy), unlike AN
    unobserved = torch.tensor([[-1.0]])
    values = [EntropyMaximisationLoss()(torch.tensor([[z]]), unobserved) for z in (-4.0, 0.0, 4.0)]
    assert values[1] < values[0] and values[1] < values[2]
    # a row without any positive (all unobserved) is fine too
    assert torch.isfinite(EntropyMaximisationLoss()(logits, torch.full_like(gt, -1)))


def _role_reference(logits, label_logits, gt, k):
    """ROLE by its formula, entry by entry; ``sg`` done with ``detach``."""
    total = logits.new_zeros(())
    B, C = logits.shape
    p, est = torch.sigmoid(logits), torch.sigmoid(label_logits)

    def nlt(u):
        return -torch.log(u + 1e-5)

    for i in range(B):
        for c in range(C):
            pos = float(gt[i, c] == 1)
            a, b = p[i, c], est[i, c]
            first = pos * nlt(a) + b.detach() * nlt(a) + (1 - b.detach()) * nlt(1 - a)
            second = pos * nlt(b) + a.detach() * nlt(b) + (1 - a.detach()) * nlt(1 - b)
            total = total + 0.5 * first + 0.5 * second
    reg_p = (p.sum(1).mean() - k) ** 2 / C**2
    reg_e = (est.sum(1).mean() - k) ** 2 / C**2
    return total / (B * C) + 0.5 * (reg_p + reg_e)


def test_role_value_gradients_and_first_visit_initialisation():
    logits, gt = _data(4, 5)
    loss = ROLELoss(num_samples=10, num_classes=5, expected_positives=1.5)
    idx = torch.tensor([7, 2, 9, 0])
    before = loss.label_logits.detach().clone()
    low, high = math.log(0.4 / 0.6), math.log(0.6 / 0.4)
    assert before.min() >= low and before.max() <= high
    x = logits.clone().requires_grad_()
    value = loss(x, gt, sample_idx=idx)
    expected_rows = before[idx].clone()
    expected_rows[gt == 1] = math.log(0.995 / 0.005)
    torch.testing.assert_close(loss.label_logits.detach()[idx], expected_rows)
    untouched = torch.ones(10, dtype=torch.bool)
    untouched[idx] = False
    assert torch.equal(loss.label_logits.detach()[untouched], before[untouched])
    theta = expected_rows.clone().requires_grad_()
    x_ref = logits.clone().requires_grad_()
    ref = _role_reference(x_ref, theta, gt, 1.5)
    torch.testing.assert_close(value, ref)
    value.backward()
    ref.backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    torch.testing.assert_close(loss.label_logits.grad[idx], theta.grad)
    # a second visit does not re-initialise (the estimate is trained from then on)
    with torch.no_grad():
        loss.label_logits[idx] = 0.0
    loss(logits, gt, sample_idx=idx)
    assert (loss.label_logits.detach()[idx] == 0).all()
    with pytest.raises(IndexError, match='num_samples=10'):
        loss(logits, gt, sample_idx=torch.tensor([0, 1, 2, 10]))


def test_role_estimates_get_their_own_learning_rate_through_paramwise_cfg():
    model = nn.Module()
    model.net = nn.Linear(3, 5)
    model.role = ROLELoss(num_samples=4, num_classes=5, expected_positives=1.0)
    wrapper = build_optim_wrapper(
        model,
        dict(
            optimizer=dict(type='Adam', lr=0.01, weight_decay=1e-4),
            paramwise_cfg=dict(custom_keys={'label_logits': dict(lr_mult=10.0, decay_mult=0.0)}),
        ),
    )
    groups = {id(g['params'][0]): g for g in wrapper.optimizer.param_groups}
    role = groups[id(model.role.label_logits)]
    assert role['lr'] == pytest.approx(0.1) and role['weight_decay'] == 0
    assert groups[id(model.net.weight)]['lr'] == pytest.approx(0.01)
