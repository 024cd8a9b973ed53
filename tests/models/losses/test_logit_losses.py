"""Logit-distillation losses: BCE-sum, MLD, PSM / L_PD, L_NDD, MSE, KD.

Every closed form is compared with an independent computation
(``tests/loss_references.py``: loops over samples, positives and pairs, or hand formulas),
plus the numerical contract of ``mlkd/models/losses/base.py``: fp32 results, finite values and
gradients at the extremes, the teacher never receives gradient, empty sets give a graph-connected
0.
"""

import itertools

import pytest
import torch
import torch.nn.functional as F
from conftest import build_model
from loss_references import (
    binary_kl_reference,
    negative_discrepancy_reference,
    negative_discrepancy_triple_loop,
    partial_softmax_reference,
)

from mlkd.models.losses import (
    BinaryCrossEntropySumLoss,
    MSEDistillLoss,
    MultiLabelKDLoss,
    MultiLabelLogitDistillLoss,
    NegativeDiscrepancyLoss,
    PartialSoftmaxLoss,
    PositiveDivideLoss,
    SoftmaxKDLoss,
    binary_cross_entropy_sum,
    multi_label_kd,
    multi_label_logit_distill,
    negative_discrepancy,
    partial_softmax_kl,
)
from mlkd.registry import MODELS


def _labels(batch, classes, seed, p_pos=0.3, p_ign=0.1):
    """Random {1, 0, -1} labels with one row all-positive, one all-negative, one all-ignored."""
    g = torch.Generator().manual_seed(seed)
    r = torch.rand(batch, classes, generator=g)
    gt = torch.zeros(batch, classes)
    gt[r < p_pos] = 1
    gt[(r >= p_pos) & (r < p_pos + p_ign)] = -1
    if batch >= 4:
        gt[0] = 1
        gt[1] = 0
        gt[2] = -1
    return gt


def _logits(batch, classes, seed, scale=3.0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(batch, classes, generator=g, dtype=dtype) * scale
    t = torch.randn(batch, classes, generator=g, dtype=dtype) * scale
    return s, t


# Every module with its default construction; the flag says whether it takes ``gt``.
ALL_LOSSES = [
    (MultiLabelLogitDistillLoss, {}, False),
    (MultiLabelKDLoss, {}, False),
    (SoftmaxKDLoss, {}, False),
    (MSEDistillLoss, {}, False),
    (MSEDistillLoss, {'space': 'logit'}, False),
    (PartialSoftmaxLoss, {}, True),
    (PositiveDivideLoss, {}, True),
    (PositiveDivideLoss, {'normalize': 'num_positives'}, True),
] + [
    (NegativeDiscrepancyLoss, {'form': f, 'pair_norm': p, 'aux_form': a}, True)
    for f, p, a in itertools.product(
        ('bound', 'exact'), ('per_pair', 'global'), ('bound_exact', 'printed', 'off')
    )
]


def _call(loss, s, t, gt, takes_gt):
    return loss(s_logits=s, t_logits=t, gt=gt) if takes_gt else loss(s_logits=s, t_logits=t)


def _ids(param):
    cls, kwargs, _ = param
    return cls.__name__ + ''.join(f'-{v}' for v in kwargs.values())


# ---------------------------------------------------------------------------------------------
# Partial softmax (PSM) and positive divide (L_PD) against the per-positive softmax loop.
@pytest.mark.parametrize(
    'temperature,normalize,seed',
    list(itertools.product((1.0, 2.0, 4.0), ('batch', 'num_positives'), (0, 1))),
)
def test_partial_softmax_matches_loop(temperature, normalize, seed):
    gt = _labels(7, 9, seed)
    s, t = _logits(7, 9, seed)
    got = partial_softmax_kl(s, t, gt, temperature=temperature, normalize=normalize)
    ref = partial_softmax_reference(s, t, gt, temperature=temperature, normalize=normalize)
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)


def test_partial_softmax_gradient_matches_loop():
    gt = _labels(6, 8, 3)
    s, t = _logits(6, 8, 3)
    s1 = s.clone().requires_grad_()
    s2 = s.clone().requires_grad_()
    partial_softmax_kl(s1, t, gt, temperature=4.0).backward()
    partial_softmax_reference(s2, t, gt, temperature=4.0).backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-9, atol=1e-12)


def test_partial_softmax_module_defaults_match_psm():
    gt = _labels(8, 10, 4)
    s, t = _logits(8, 10, 4, dtype=torch.float32)
    got = PartialSoftmaxLoss(loss_weight=2.0)(s_logits=s, t_logits=t, gt=gt)
    ref = partial_softmax_reference(s.double(), t.double(), gt, temperature=1.0)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), 2.0 * ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    'temperature_squared,normalize',
    list(itertools.product((True, False), ('batch', 'num_positives'))),
)
def test_positive_divide_module_matches_loop(temperature_squared, normalize):
    gt = _labels(8, 10, 5)
    s, t = _logits(8, 10, 5, dtype=torch.float32)
    loss = PositiveDivideLoss(
        temperature=4.0, temperature_squared=temperature_squared, normalize=normalize
    )
    got = loss(s_logits=s, t_logits=t, gt=gt)
    ref = partial_softmax_reference(
        s.double(),
        t.double(),
        gt,
        temperature=4.0,
        normalize=normalize,
        temperature_squared=temperature_squared,
    )
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-6)


def test_partial_softmax_edge_rows_contribute_nothing_but_count_in_batch():
    s, t = _logits(3, 5, 6)
    gt = torch.tensor(
        [
            [1.0, 0.0, 0.0, 1.0, -1.0],  # normal row
            [0.0, 0.0, 0.0, 0.0, 0.0],  # no positive: no term
            [1.0, 1.0, -1.0, 1.0, 1.0],
        ]
    )  # no negative: 1-way softmaxes, KL = 0
    full = partial_softmax_kl(s, t, gt)
    only_first = partial_softmax_kl(s[:1], t[:1], gt[:1])
    torch.testing.assert_close(full, only_first / 3)
    # Ignored labels belong to neither set: changing their logits changes nothing.
    s2 = s.clone()
    s2[0, 4] += 10.0
    s2[2, 2] -= 7.0
    torch.testing.assert_close(partial_softmax_kl(s2, t, gt), full)
    # num_positives counts all positives (2 + 0 + 4).
    torch.testing.assert_close(
        partial_softmax_kl(s, t, gt, normalize='num_positives'), only_first / 6
    )


# ---------------------------------------------------------------------------------------------
# Negative discrepancy against explicit pair / triple loops.
@pytest.mark.parametrize(
    'pair_norm,prob_temperature,seed',
    list(itertools.product(('per_pair', 'global'), (1.0, 4.0), (0, 1, 2))),
)
def test_ndd_exact_matches_triple_loop(pair_norm, prob_temperature, seed):
    gt = _labels(6, 7, seed, p_pos=0.4)
    s, t = _logits(6, 7, seed)
    got = negative_discrepancy(
        s, t, gt, form='exact', pair_norm=pair_norm, prob_temperature=prob_temperature
    )
    ref = negative_discrepancy_triple_loop(
        s, t, gt, pair_norm=pair_norm, prob_temperature=prob_temperature
    )
    assert got.item() == pytest.approx(ref, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize(
    'form,pair_norm,aux_form',
    list(
        itertools.product(
            ('exact', 'bound'), ('per_pair', 'global'), ('bound_exact', 'printed', 'off')
        )
    ),
)
def test_ndd_all_switches_match_pair_loop(form, pair_norm, aux_form):
    gt = _labels(7, 8, 11, p_pos=0.4)
    s, t = _logits(7, 8, 11)
    kwargs = dict(
        form=form, pair_norm=pair_norm, aux_form=aux_form, gamma_b=1.7, prob_temperature=2.0
    )
    s1 = s.clone().requires_grad_()
    s2 = s.clone().requires_grad_()
    got = negative_discrepancy(s1, t, gt, **kwargs)
    ref = negative_discrepancy_reference(s2, t, gt, **kwargs)
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-12)
    got.backward()
    ref.backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-9, atol=1e-12)


def test_ndd_defaults_are_the_documented_setting():
    """Without switches, the function and the module compute the module docstring's default: the
    bound form, per-pair means, ``L_aux`` normalised like the MSE terms, ``γ_b = 2``, ``τ_n = 1``."""
    gt = _labels(6, 7, 5, p_pos=0.4)
    s, t = _logits(6, 7, 5)
    documented = negative_discrepancy_reference(
        s,
        t,
        gt,
        form='bound',
        pair_norm='per_pair',
        aux_form='bound_exact',
        gamma_b=2.0,
        prob_temperature=1.0,
    )
    torch.testing.assert_close(negative_discrepancy(s, t, gt), documented, rtol=1e-10, atol=1e-12)
    module = NegativeDiscrepancyLoss()(s_logits=s, t_logits=t, gt=gt)
    torch.testing.assert_close(module.double(), documented, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    'pair_norm,seed', list(itertools.product(('per_pair', 'global'), range(4)))
)
def test_ndd_bound_is_upper_bound_of_exact(pair_norm, seed):
    gt = _labels(6, 9, seed, p_pos=0.3)
    s, t = _logits(6, 9, seed, scale=2.0)
    bound = negative_discrepancy(s, t, gt, form='bound', pair_norm=pair_norm, gamma_b=2.0)
    exact = negative_discrepancy(s, t, gt, form='exact', pair_norm=pair_norm)
    assert bound.item() >= exact.item() - 1e-12
    # ... and pair by pair (every two-sample batch).
    for i, j in itertools.combinations(range(6), 2):
        idx = torch.tensor([i, j])
        b = negative_discrepancy(s[idx], t[idx], gt[idx], form='bound', pair_norm=pair_norm)
        e = negative_discrepancy(s[idx], t[idx], gt[idx], form='exact', pair_norm=pair_norm)
        assert b.item() >= e.item() - 1e-12


def test_ndd_ignored_labels_are_not_negatives():
    s, t = _logits(4, 6, 12)
    gt = _labels(4, 6, 12, p_pos=0.2, p_ign=0.3)
    base = negative_discrepancy(s, t, gt, form='exact')
    s2 = s.clone()
    s2[gt != 0] += 5.0  # positives and ignored entries never enter Ω
    torch.testing.assert_close(negative_discrepancy(s2, t, gt, form='exact'), base)


@pytest.mark.parametrize(
    'form,pair_norm', list(itertools.product(('exact', 'bound'), ('per_pair', 'global')))
)
def test_ndd_empty_omega_is_connected_zero(form, pair_norm):
    loss = NegativeDiscrepancyLoss(form=form, pair_norm=pair_norm)
    for s, gt in (
        (torch.randn(1, 5), torch.zeros(1, 5)),  # B = 1
        (
            torch.randn(3, 4),
            torch.tensor(
                [
                    [0.0, 1, 1, 1],  # no common negative
                    [1.0, 0, 1, -1],
                    [1.0, 1, -1, 0],
                ]
            ),
        ),
    ):
        s = s.requires_grad_()
        out = loss(s_logits=s, t_logits=torch.randn_like(s), gt=gt)
        assert out.item() == 0.0 and out.requires_grad
        out.backward()
        assert torch.equal(s.grad, torch.zeros_like(s))


# ---------------------------------------------------------------------------------------------
# MLD, KD, MSE, BCE against hand formulas.
def test_mld_equals_analytic_binary_kl_over_batch():
    s, t = _logits(5, 6, 20)
    ref = binary_kl_reference(s, t)
    torch.testing.assert_close(multi_label_logit_distill(s, t), ref.sum() / 5)
    torch.testing.assert_close(multi_label_logit_distill(s, t, 'sum'), ref.sum())
    torch.testing.assert_close(multi_label_logit_distill(s, t, 'mean'), ref.sum() / 30)
    torch.testing.assert_close(multi_label_logit_distill(s, t, 'none'), ref)


def test_mld_finite_where_reference_clamp_overflows():
    s = torch.tensor([[50.0, -50.0, 30.0, 20.0]], requires_grad=True)
    t = torch.tensor([[-50.0, 50.0, 30.0, -20.0]])
    out = MultiLabelLogitDistillLoss(reduction='none')(s_logits=s, t_logits=t)
    # KLb(σ(-50) ‖ σ(50)) ≈ −log σ(−50) = 50; equal logits give 0; KLb(σ(-20)‖σ(20)) ≈ 20.
    torch.testing.assert_close(out, torch.tensor([[50.0, 50.0, 0.0, 20.0]]), rtol=1e-6, atol=1e-5)
    out.sum().backward()
    assert torch.isfinite(s.grad).all()
    # The gradient of KLb(σ(a)‖σ(b)) in b is σ(b) − σ(a).
    torch.testing.assert_close(s.grad, torch.sigmoid(s.detach()) - torch.sigmoid(t))


@pytest.mark.parametrize('temperature', (1.0, 2.0, 4.0))
def test_multi_label_kd_matches_hand_formula(temperature):
    s, t = _logits(4, 5, 21)
    p, q = torch.sigmoid(t / temperature), torch.sigmoid(s / temperature)
    hand = (p * (p / q).log() + (1 - p) * ((1 - p) / (1 - q)).log()).sum() / 4 * temperature**2
    loss = MultiLabelKDLoss(temperature=temperature)
    got = loss(s_logits=s.float(), t_logits=t.float())
    torch.testing.assert_close(got.double(), hand, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(multi_label_kd(s, t, temperature), hand)


def test_multi_label_kd_at_unit_temperature_is_mld():
    s, t = _logits(4, 5, 22, dtype=torch.float32)
    kd = MultiLabelKDLoss(temperature=1.0, temperature_squared=False)(s_logits=s, t_logits=t)
    mld = MultiLabelLogitDistillLoss()(s_logits=s, t_logits=t)
    torch.testing.assert_close(kd, mld)


@pytest.mark.parametrize('temperature', (1.0, 4.0))
def test_softmax_kd_matches_hand_formula(temperature):
    s, t = _logits(6, 10, 23)
    q_t = torch.softmax(t / temperature, dim=1)
    q_s = torch.softmax(s / temperature, dim=1)
    hand = (
        temperature**2
        * torch.stack([(q_t[i] * (q_t[i] / q_s[i]).log()).sum() for i in range(6)]).mean()
    )
    got = SoftmaxKDLoss(temperature=temperature)(s_logits=s.float(), t_logits=t.float())
    torch.testing.assert_close(got.double(), hand, rtol=1e-5, atol=1e-6)


def test_mse_spaces():
    s, t = _logits(3, 4, 24, dtype=torch.float32)
    torch.testing.assert_close(
        MSEDistillLoss()(s_logits=s, t_logits=t), F.mse_loss(torch.sigmoid(s), torch.sigmoid(t))
    )
    torch.testing.assert_close(
        MSEDistillLoss(space='logit')(s_logits=s, t_logits=t), F.mse_loss(s, t)
    )
    torch.testing.assert_close(
        MSEDistillLoss(space='logit', reduction='batchmean')(s_logits=s, t_logits=t),
        F.mse_loss(s, t, reduction='sum') / 3,
    )


def test_bce_sum_matches_torch_and_ignores_avg_factor():
    s, _ = _logits(5, 6, 25, dtype=torch.float32)
    gt = (torch.rand(5, 6, generator=torch.Generator().manual_seed(0)) < 0.3).float()
    loss = BinaryCrossEntropySumLoss()
    ref = F.binary_cross_entropy_with_logits(s, gt, reduction='sum')
    torch.testing.assert_close(loss(s, gt), ref)
    torch.testing.assert_close(loss(s, gt, avg_factor=5), ref)
    torch.testing.assert_close(
        loss(s, gt, avg_factor=5, reduction_override='none'),
        F.binary_cross_entropy_with_logits(s, gt, reduction='none'),
    )


def test_bce_ignores_minus_one_targets():
    s, _ = _logits(4, 5, 26, dtype=torch.float32)
    gt = _labels(4, 5, 26)
    valid = gt >= 0
    ref = F.binary_cross_entropy_with_logits(s[valid], gt[valid], reduction='sum')
    torch.testing.assert_close(BinaryCrossEntropySumLoss()(s, gt), ref)
    torch.testing.assert_close(
        BinaryCrossEntropySumLoss(reduction='mean')(s, gt), ref / valid.sum()
    )


def test_bce_clamp_parity_with_reference():
    z = torch.tensor([[-30.0, -5.0, 0.3, 5.0, 30.0]], requires_grad=True)
    y = torch.tensor([[1.0, 0.0, 1.0, 1.0, 0.0]])
    out = BinaryCrossEntropySumLoss(clamp_eps=1e-8)(z, y, reduction_override='none')
    p = torch.sigmoid(z.detach())
    hand = -(y * p.clamp(min=1e-8).log() + (1 - y) * (1 - p).clamp(min=1e-8).log())
    torch.testing.assert_close(out, hand)
    stable = BinaryCrossEntropySumLoss()(z, y, reduction_override='none')
    torch.testing.assert_close(out[:, 1:4], stable[:, 1:4])  # equal away from saturation
    assert out[0, 0].item() == pytest.approx(-torch.tensor(1e-8).log().item(), rel=1e-5)
    out.sum().backward()
    assert z.grad[0, 0] == 0 and z.grad[0, 4] == 0  # the clamp zeroes saturated gradients


def test_bce_inside_mmpretrain_head_keeps_sum_scale():
    from mmpretrain.structures import DataSample

    head = build_model(
        dict(
            type='MultiLabelLinearClsHead',
            num_classes=6,
            in_channels=4,
            loss=dict(type='BinaryCrossEntropySumLoss'),
        )
    )
    assert isinstance(head.loss_module, BinaryCrossEntropySumLoss)
    feats = torch.randn(3, 4)
    samples = [DataSample().set_gt_label(torch.tensor(labels)) for labels in ([0, 2], [5], [1])]
    out = head.loss((feats,), samples)['loss']
    target = torch.zeros(3, 6)
    for i, labels in enumerate(([0, 2], [5], [1])):
        target[i, labels] = 1
    ref = F.binary_cross_entropy_with_logits(head((feats,)), target, reduction='sum')
    torch.testing.assert_close(out, ref)


# ---------------------------------------------------------------------------------------------
# Contract checks over every loss.
def _has_aux(param):
    cls, kwargs, _ = param
    return (
        cls is NegativeDiscrepancyLoss and kwargs['form'] == 'bound' and kwargs['aux_form'] != 'off'
    )


@pytest.mark.parametrize('param', [p for p in ALL_LOSSES if not _has_aux(p)], ids=_ids)
def test_zero_when_student_equals_teacher(param):
    cls, kwargs, takes_gt = param
    s, _ = _logits(6, 8, 30, dtype=torch.float32)
    out = _call(cls(**kwargs), s, s.clone(), _labels(6, 8, 30), takes_gt)
    assert out.item() == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize('param', [p for p in ALL_LOSSES if _has_aux(p)], ids=_ids)
def test_ndd_bound_at_student_equals_teacher_is_the_aux_term(param):
    """With u = 0 only γ_b·L_aux remains: positive, and zero once aux is switched off."""
    cls, kwargs, takes_gt = param
    s, _ = _logits(6, 8, 30, dtype=torch.float32)
    gt = _labels(6, 8, 30)
    out = _call(cls(**kwargs), s, s.clone(), gt, takes_gt)
    doubled = _call(cls(gamma_b=4.0, **kwargs), s, s.clone(), gt, takes_gt)
    assert out.item() > 0
    torch.testing.assert_close(doubled, 2 * out)


@pytest.mark.parametrize('param', ALL_LOSSES, ids=_ids)
def test_finite_values_and_gradients_at_extremes(param):
    cls, kwargs, takes_gt = param
    loss = cls(**kwargs)
    g = torch.Generator().manual_seed(31)
    cases = {
        'logits_pm50': (
            torch.randint(0, 2, (6, 8), generator=g).float() * 100 - 50,
            torch.randint(0, 2, (6, 8), generator=g).float() * 100 - 50,
            _labels(6, 8, 31),
        ),
        'no_positives': (torch.randn(4, 8), torch.randn(4, 8), torch.zeros(4, 8)),
        'no_negatives': (torch.randn(4, 8), torch.randn(4, 8), torch.ones(4, 8)),
        'all_ignored': (torch.randn(4, 8), torch.randn(4, 8), -torch.ones(4, 8)),
        'batch_size_1': (torch.randn(1, 8) * 20, torch.randn(1, 8) * 20, _labels(1, 8, 31)),
        'large_logits_mixed_labels': (
            torch.randn(6, 8) * 60,
            torch.randn(6, 8) * 60,
            _labels(6, 8, 32),
        ),
    }
    for name, (s, t, gt) in cases.items():
        s = s.clone().requires_grad_()
        t = t.clone().requires_grad_()
        out = _call(loss, s, t, gt, takes_gt)
        assert out.dim() == 0 and torch.isfinite(out), name
        out.backward()
        assert s.grad is not None and torch.isfinite(s.grad).all(), name
        assert t.grad is None, name  # the teacher is detached inside


@pytest.mark.parametrize('param', ALL_LOSSES, ids=_ids)
@pytest.mark.parametrize('dtype', (torch.float16, torch.bfloat16))
def test_low_precision_inputs_give_fp32(param, dtype):
    cls, kwargs, takes_gt = param
    s, t = _logits(5, 7, 33, dtype=torch.float32)
    gt = _labels(5, 7, 33)
    low = _call(cls(**kwargs), s.to(dtype), t.to(dtype), gt.to(dtype), takes_gt)
    full = _call(cls(**kwargs), s.to(dtype).float(), t.to(dtype).float(), gt, takes_gt)
    assert low.dtype == torch.float32
    torch.testing.assert_close(low, full)


@pytest.mark.parametrize('param', ALL_LOSSES, ids=_ids)
def test_gradient_reaches_student_only(param):
    cls, kwargs, takes_gt = param
    s, t = _logits(6, 8, 34, dtype=torch.float32)
    s.requires_grad_()
    t.requires_grad_()
    _call(cls(**kwargs), s, t, _labels(6, 8, 34), takes_gt).backward()
    assert s.grad.abs().sum() > 0
    assert t.grad is None


def test_gradcheck_positive_divide():
    s, t = _logits(4, 5, 35)
    gt = _labels(4, 5, 35)
    for normalize in ('batch', 'num_positives'):
        assert torch.autograd.gradcheck(
            lambda x, normalize=normalize: partial_softmax_kl(
                x, t, gt, temperature=4.0, normalize=normalize
            ),
            (s.clone().requires_grad_(),),
        )


@pytest.mark.parametrize(
    'form,pair_norm,aux_form',
    list(itertools.product(('exact', 'bound'), ('per_pair', 'global'), ('bound_exact', 'printed'))),
)
def test_gradcheck_negative_discrepancy(form, pair_norm, aux_form):
    s, t = _logits(4, 5, 36)
    gt = _labels(4, 5, 36, p_pos=0.3)
    assert torch.autograd.gradcheck(
        lambda x: negative_discrepancy(x, t, gt, form, pair_norm, aux_form, 2.0, 4.0),
        (s.clone().requires_grad_(),),
    )


def test_gradcheck_mld_and_bce():
    s, t = _logits(3, 4, 37)
    gt = _labels(3, 4, 37)
    assert torch.autograd.gradcheck(
        lambda x: multi_label_logit_distill(x, t), (s.clone().requires_grad_(),)
    )
    assert torch.autograd.gradcheck(
        lambda x: binary_cross_entropy_sum(x, gt), (s.clone().requires_grad_(),)
    )


# ---------------------------------------------------------------------------------------------
# Registry and switches.
@pytest.mark.parametrize(
    'name',
    [
        'BinaryCrossEntropySumLoss',
        'MultiLabelLogitDistillLoss',
        'PartialSoftmaxLoss',
        'PositiveDivideLoss',
        'NegativeDiscrepancyLoss',
        'MSEDistillLoss',
        'MultiLabelKDLoss',
        'SoftmaxKDLoss',
    ],
)
def test_build_from_registry_under_mlkd_scope(name):
    loss = build_model(dict(type=name, loss_weight=3.0))
    assert type(loss).__name__ == name and loss.loss_weight == 3.0
    assert MODELS.get(f'mlkd.{name}') is type(loss)


def test_defaults_and_loss_weight():
    pd = MODELS.build(dict(type='PositiveDivideLoss'))
    assert (pd.temperature, pd.temperature_squared, pd.normalize) == (4.0, True, 'batch')
    nd = MODELS.build(dict(type='NegativeDiscrepancyLoss'))
    assert (nd.form, nd.pair_norm, nd.aux_form, nd.gamma_b, nd.prob_temperature) == (
        'bound',
        'per_pair',
        'bound_exact',
        2.0,
        1.0,
    )
    s, t = _logits(4, 6, 40, dtype=torch.float32)
    gt = _labels(4, 6, 40)
    torch.testing.assert_close(
        NegativeDiscrepancyLoss(loss_weight=10.0)(s_logits=s, t_logits=t, gt=gt),
        10.0 * NegativeDiscrepancyLoss()(s_logits=s, t_logits=t, gt=gt),
    )


@pytest.mark.parametrize(
    'cls,kwargs',
    [
        (NegativeDiscrepancyLoss, {'form': 'approx'}),
        (NegativeDiscrepancyLoss, {'pair_norm': 'pairs'}),
        (NegativeDiscrepancyLoss, {'aux_form': 'exact'}),
        (PositiveDivideLoss, {'normalize': 'positives'}),
        (PartialSoftmaxLoss, {'temperature': 0.0}),
        (MSEDistillLoss, {'space': 'feature'}),
        (MultiLabelLogitDistillLoss, {'reduction': 'avg'}),
        (BinaryCrossEntropySumLoss, {'reduction': 'batchmean'}),
    ],
)
def test_invalid_switches_raise(cls, kwargs):
    with pytest.raises(ValueError):
        cls(**kwargs)
