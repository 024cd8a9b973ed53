"""Tests of L2D's CD / ID / LED and the MDKD reconstruction."""

import itertools

import pytest
import torch
import torch.nn.functional as F

from mlkd.models.losses.logit_kd.label_embedding import (
    ClassAwareDistillLoss,
    InstanceAwareDistillLoss,
    LabelEmbeddingDistillLoss,
    class_aware_distance_loss,
    grouped_huber_distance_loss,
    instance_aware_distance_loss,
    pairwise_huber_distance_loss,
)
from mlkd.models.losses.logit_kd.mdkd import MultiOrderDependencyLoss
from mlkd.registry import MODELS


# ----------------------------------------------------------------------------------------------
# Independent reference: the HuberDist definition on one set, and explicit loops for CD / ID.
def _dist(e):
    sq = (e * e).sum(1)
    d = (sq[:, None] + sq[None, :] - 2 * e @ e.t()).clamp(min=1e-12).sqrt()
    off = ~torch.eye(len(e), dtype=torch.bool)
    return d * off


def _huber_dist_ref(s, t):
    with torch.no_grad():
        dt = _dist(t)
        dt = dt / dt[dt > 0].mean()
    ds = _dist(s)
    ds = ds / ds[ds > 0].mean()
    return F.smooth_l1_loss(ds, dt, reduction='sum', beta=1.0) / s.size(0)


def _cd_ref(s, t, gt):
    loss = s.sum() * 0
    for c in range(gt.size(1)):
        rows = gt[:, c] == 1
        if rows.sum() > 1:
            loss = loss + _huber_dist_ref(s[rows, c], t[rows, c])
    return loss


def _id_ref(s, t, gt):
    loss = s.sum() * 0
    for b in range(gt.size(0)):
        cols = gt[b] == 1
        if cols.sum() > 1:
            loss = loss + _huber_dist_ref(s[b, cols], t[b, cols])
    return loss


def _random_case(b=8, c=6, d=16, dt=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(b, c, d, generator=g)
    t = torch.randn(b, c, dt or d, generator=g)
    gt = (torch.rand(b, c, generator=g) < 0.5).float()
    gt[torch.rand(b, c, generator=g) < 0.1] = -1  # ignored entries belong to no set
    return s, t, gt


@pytest.mark.parametrize(
    'fn,ref', [(class_aware_distance_loss, _cd_ref), (instance_aware_distance_loss, _id_ref)]
)
@pytest.mark.parametrize('seed,dt', [(0, None), (1, 24), (2, None)])
def test_vectorised_equals_loops(fn, ref, seed, dt):
    s, t, gt = _random_case(dt=dt, seed=seed)
    s1 = s.clone().requires_grad_()
    s2 = s.clone().requires_grad_()
    v = fn(s1, t, gt)
    r = ref(s2, t, gt)
    assert r.item() > 0
    torch.testing.assert_close(v, r, rtol=1e-5, atol=1e-6)
    v.backward()
    r.backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-4, atol=1e-6)


def test_pairwise_single_set_matches_definition():
    g = torch.Generator().manual_seed(3)
    s = torch.randn(5, 7, generator=g, requires_grad=True)
    t = torch.randn(5, 9, generator=g)
    torch.testing.assert_close(
        pairwise_huber_distance_loss(s, t), _huber_dist_ref(s, t), rtol=1e-5, atol=1e-6
    )


def test_two_member_groups_give_exact_zero():
    g = torch.Generator().manual_seed(4)
    s = torch.randn(3, 2, 8, generator=g, requires_grad=True)
    t = torch.randn(3, 2, 8, generator=g) * 5
    per = grouped_huber_distance_loss(s, t, torch.ones(3, 2, dtype=torch.bool))
    assert torch.equal(per, torch.zeros(3))
    per.sum().backward()
    assert torch.equal(s.grad, torch.zeros_like(s))
    # Inside a larger tensor, a mask with exactly 2 members also gives 0.
    s4 = torch.randn(1, 5, 8, generator=g)
    mask = torch.tensor([[True, False, True, False, False]])
    assert grouped_huber_distance_loss(s4, torch.randn(1, 5, 8, generator=g), mask).item() == 0.0


def test_groups_with_at_most_one_member_ignored():
    s, t, gt = _random_case(seed=5)
    # Class 0: single positive; its embeddings change nothing.
    gt[:, 0] = 0
    gt[0, 0] = 1
    base = class_aware_distance_loss(s, t, gt)
    s2 = s.clone()
    s2[:, 0] = torch.randn_like(s2[:, 0]) * 100
    torch.testing.assert_close(class_aware_distance_loss(s2, t, gt), base)
    # Sample 0 with one positive: no ID contribution from it.
    gt2 = gt.clone()
    gt2[0] = 0
    gt2[0, 1] = 1
    per = grouped_huber_distance_loss(s, t, gt2 == 1)
    assert per[0].item() == 0.0


def test_zero_when_student_equals_teacher():
    s, _, gt = _random_case(seed=6)
    assert class_aware_distance_loss(s, s.clone(), gt).item() == 0.0
    assert instance_aware_distance_loss(s, s.clone(), gt).item() == 0.0


@pytest.mark.parametrize('gt_fill', [0.0, -1.0])
def test_no_valid_group_is_connected_zero(gt_fill):
    s = torch.randn(4, 5, 8, requires_grad=True)
    t = torch.randn(4, 5, 8)
    gt = torch.full((4, 5), gt_fill)
    loss = LabelEmbeddingDistillLoss()
    out = loss(s, t, gt)
    for v in out.values():
        assert v.item() == 0.0 and v.requires_grad
    sum(out.values()).backward()
    assert torch.isfinite(s.grad).all() and (s.grad == 0).all()


def test_batch_size_one():
    s = torch.randn(1, 6, 8, requires_grad=True)
    t = torch.randn(1, 6, 8)
    gt = torch.tensor([[1.0, 1.0, 1.0, 0.0, 1.0, 0.0]])
    cd = class_aware_distance_loss(s, t, gt)
    assert cd.item() == 0.0 and cd.requires_grad
    idl = instance_aware_distance_loss(s, t, gt)
    torch.testing.assert_close(idl, _id_ref(s, t, gt), rtol=1e-5, atol=1e-6)
    (cd + idl).backward()
    assert torch.isfinite(s.grad).all()


@pytest.mark.parametrize('scale', [1e-20, 1e-6, 1e4, 1e8])
def test_extreme_embeddings_finite(scale):
    s, t, gt = _random_case(seed=7)
    s = (s * scale).requires_grad_()
    out = LabelEmbeddingDistillLoss()(s, t * scale, gt)
    total = out['cd'] + out['id']
    assert torch.isfinite(total)
    total.backward()
    assert torch.isfinite(s.grad).all()
    # Identical members (all distances at the clamp) are finite too.
    same = torch.ones(4, 3, 8, requires_grad=True)
    v = class_aware_distance_loss(same, torch.randn(4, 3, 8), torch.ones(4, 3))
    v.backward()
    assert torch.isfinite(v) and torch.isfinite(same.grad).all()


def test_half_precision_inputs_run_in_fp32():
    s, t, gt = _random_case(seed=8)
    v = class_aware_distance_loss(s.half(), t.half(), gt)
    assert v.dtype == torch.float32


def test_modules_and_registry():
    s, t, gt = _random_case(seed=9)
    cd = MODELS.build(dict(type='ClassAwareDistillLoss', loss_weight=2.0))
    idl = MODELS.build(dict(type='InstanceAwareDistillLoss', loss_weight=3.0))
    led = MODELS.build(dict(type='LabelEmbeddingDistillLoss', loss_weight=0.5))
    assert isinstance(cd, ClassAwareDistillLoss) and isinstance(idl, InstanceAwareDistillLoss)
    raw_cd = class_aware_distance_loss(s, t, gt)
    raw_id = instance_aware_distance_loss(s, t, gt)
    torch.testing.assert_close(cd(s, t, gt), 2 * raw_cd)
    torch.testing.assert_close(idl(s, t, gt), 3 * raw_id)
    out = led(s_label_emb=s, t_label_emb=t, gt=gt)
    assert set(out) == {'cd', 'id'}
    torch.testing.assert_close(out['cd'], 0.5 * 100 * raw_cd)
    torch.testing.assert_close(out['id'], 0.5 * 1000 * raw_id)
    only_cd = LabelEmbeddingDistillLoss(id_weight=0)(s.requires_grad_(), t, gt)
    assert only_cd['id'].item() == 0.0 and only_cd['id'].requires_grad


# ----------------------------------------------------------------------------------------------
# MDKD reconstruction.
def _second_order_ref_gram_l1(zs, zt, temperature, eps=1e-8):
    """Loops: S_ij = (1/B) Σ_b p_bi p_bj, row-L1 normalised, squared difference / C²."""

    def norm_dep(z):
        p = torch.sigmoid(z / temperature)
        b, c = p.shape
        s = torch.zeros(c, c)
        for i in range(c):
            for j in range(c):
                s[i, j] = sum(p[k, i] * p[k, j] for k in range(b)) / b
        return torch.stack([s[i] / (s[i].abs().sum() + eps) for i in range(c)])

    c = zs.size(1)
    return ((norm_dep(zs) - norm_dep(zt)) ** 2).sum() / c**2


def _second_order_ref_pearson_softmax(zs, zt):
    def norm_dep(z):
        s = torch.corrcoef(torch.sigmoid(z).t())
        return torch.softmax(s, dim=1)

    c = zs.size(1)
    return ((norm_dep(zs) - norm_dep(zt)) ** 2).sum() / c**2


def test_mdkd_second_order_equals_direct_computation():
    g = torch.Generator().manual_seed(10)
    zs, zt = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g)
    gt = torch.ones(6, 5)
    out = MultiOrderDependencyLoss(temperature=2.0)(zs, zt, gt)
    torch.testing.assert_close(
        out['second'], _second_order_ref_gram_l1(zs, zt, 2.0), rtol=1e-5, atol=1e-8
    )
    out = MultiOrderDependencyLoss(dependency='pearson', norm='row_softmax')(zs, zt, gt)
    torch.testing.assert_close(
        out['second'], _second_order_ref_pearson_softmax(zs, zt), rtol=1e-4, atol=1e-8
    )


def test_mdkd_high_order_power_equals_direct_computation():
    g = torch.Generator().manual_seed(11)
    zs, zt = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)

    def transition(z):
        p = torch.sigmoid(z)
        s = p.t() @ p / p.size(0)
        s = s * (1 - torch.eye(4))
        return s / (s.sum(1, keepdim=True) + 1e-8)

    a_s, a_t = transition(zs), transition(zt)
    ref = (
        sum(
            w * ((torch.linalg.matrix_power(a_s, k) - torch.linalg.matrix_power(a_t, k)) ** 2).sum()
            for k, w in zip((2, 3, 4), (1.0, 0.5, 0.25))
        )
        / 16
    )
    out = MultiOrderDependencyLoss(max_order=4, order_weights=[1.0, 0.5, 0.25])(
        zs, zt, torch.ones(6, 4)
    )
    torch.testing.assert_close(out['high'], ref, rtol=1e-5, atol=1e-9)


_SWITCHES = list(
    itertools.product(
        ('gram', 'cosine', 'pearson'), ('row_l1', 'row_softmax'), ('power', 'rwr'), (False, True)
    )
)


@pytest.mark.parametrize('dep,norm,high,ignore_absent', _SWITCHES)
def test_mdkd_zero_when_equal_and_finite_grads(dep, norm, high, ignore_absent):
    g = torch.Generator().manual_seed(12)
    b, c = 8, 6
    zt = torch.randn(b, c, generator=g) * 3
    gt = (torch.rand(b, c, generator=g) < 0.4).float()
    gt[:, 2] = 0  # a class absent from the batch
    zt[:, 2] = -200.0  # probabilities exactly 0: a zero column
    loss = MultiOrderDependencyLoss(
        dependency=dep, norm=norm, high_order=high, ignore_absent=ignore_absent
    )
    out = loss(zt.clone(), zt, gt)
    assert out['second'].item() == 0.0 and out['high'].item() == 0.0
    zs = torch.randn(b, c, generator=g) * 3
    zs[:, 2] = -200.0
    zs.requires_grad_()
    out = loss(zs, zt, gt)
    total = out['second'] + out['high']
    assert torch.isfinite(total) and total.item() > 0
    total.backward()
    assert torch.isfinite(zs.grad).all()


@pytest.mark.parametrize('dep', ['gram', 'cosine', 'pearson'])
def test_mdkd_batch_of_one_and_constant_columns(dep):
    zs = torch.zeros(1, 5, requires_grad=True)
    out = MultiOrderDependencyLoss(dependency=dep, high_order='rwr')(
        zs, torch.randn(1, 5), torch.zeros(1, 5)
    )
    total = out['second'] + out['high']
    total.backward()
    assert torch.isfinite(total) and torch.isfinite(zs.grad).all()


def test_mdkd_teacher_ema_and_weights():
    g = torch.Generator().manual_seed(13)
    zs, zt1, zt2 = (torch.randn(6, 4, generator=g) for _ in range(3))
    gt = torch.ones(6, 4)
    loss = MODELS.build(
        dict(
            type='MultiOrderDependencyLoss',
            teacher_ema=0.9,
            num_classes=4,
            second_order_weight=2.0,
            high_order_weight=3.0,
            loss_weight=0.5,
        )
    )
    loss.train()
    loss(zs, zt1, gt)
    p1, p2 = torch.sigmoid(zt1), torch.sigmoid(zt2)
    torch.testing.assert_close(loss.t_dep_ema, p1.t() @ p1 / 6)
    out = loss(zs, zt2, gt)
    torch.testing.assert_close(loss.t_dep_ema, 0.9 * (p1.t() @ p1 / 6) + 0.1 * (p2.t() @ p2 / 6))
    assert 't_dep_ema' in loss.state_dict()
    plain = MultiOrderDependencyLoss()
    ema_dep = loss.t_dep_ema.clone()
    # Weighted terms: recompute with the EMA matrix through the pure function.
    from mlkd.models.losses.logit_kd.mdkd import dependency_matrix, multi_order_dependency_terms

    s2, hi = multi_order_dependency_terms(dependency_matrix(torch.sigmoid(zs)), ema_dep)
    torch.testing.assert_close(out['second'], 0.5 * 2.0 * s2)
    torch.testing.assert_close(out['high'], 0.5 * 3.0 * hi)
    assert set(plain(zs, zt1, gt)) == {'second', 'high'}
    with pytest.raises(ValueError):
        MultiOrderDependencyLoss(teacher_ema=0.9)
    with pytest.raises(ValueError):
        MultiOrderDependencyLoss(dependency='kendall')
