"""RKD and PKT against loops over pairs and triples (``tests/loss_references.py``)."""

import pytest
import torch
from loss_references import pkt_reference, rkd_reference

from mlkd.models.losses import PKTLoss, RKDLoss, pkt, rkd_angle, rkd_distance


def _emb(batch, dim_s, dim_t, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, dim_s, generator=g, dtype=torch.float64) * scale,
        torch.randn(batch, dim_t, generator=g, dtype=torch.float64) * scale,
    )


@pytest.mark.parametrize('batch,seed', [(3, 0), (5, 1), (8, 2)])
def test_rkd_matches_pair_and_triple_loops(batch, seed):
    s, t = _emb(batch, 6, 9, seed)
    s1, s2 = s.clone().requires_grad_(), s.clone().requires_grad_()
    got = 25 * rkd_distance(s1, t) + 50 * rkd_angle(s1, t)
    ref = rkd_reference(s2, t)
    torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-12)
    got.backward()
    ref.backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-7, atol=1e-10)


def test_rkd_module_weights_and_fp32():
    s, t = _emb(6, 5, 7, 3)
    got = RKDLoss(distance_weight=2.0, angle_weight=3.0, loss_weight=0.5)(
        s_pooled=s.float(), t_pooled=t.float()
    )
    assert got.dtype == torch.float32
    ref = 0.5 * rkd_reference(s, t, distance_weight=2.0, angle_weight=3.0)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-7)
    assert RKDLoss.compares_samples and PKTLoss.compares_samples


def test_rkd_distance_is_scale_invariant_and_zero_for_a_scaled_teacher():
    s, _ = _emb(7, 4, 4, 4)
    # Distances are divided by their mean: a scaled copy has the same structure.
    assert rkd_distance(s, 3.0 * s).item() == pytest.approx(0.0, abs=1e-12)
    assert rkd_angle(s, 3.0 * s).item() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize('batch', [1, 2])
def test_rkd_small_batches_are_defined_zero(batch):
    """B = 1 has no pair, B ≤ 2 no triple of distinct samples: 0, connected, zero gradient."""
    s, t = _emb(batch, 4, 4, 5)
    s = s.requires_grad_()
    angle = rkd_angle(s, t)
    assert angle.item() == 0.0
    out = RKDLoss()(s_pooled=s, t_pooled=t)
    if batch == 1:
        assert out.item() == 0.0
    out.backward()
    assert torch.isfinite(s.grad).all()
    if batch == 1:
        assert torch.equal(s.grad, torch.zeros_like(s))


def test_rkd_all_equal_embeddings_are_finite():
    s = torch.ones(5, 4, requires_grad=True)
    t = torch.randn(5, 4)
    out = RKDLoss()(s_pooled=s, t_pooled=t)
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(s.grad).all()
    assert RKDLoss()(s_pooled=s, t_pooled=torch.ones(5, 4)).item() == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize('batch,seed', [(2, 0), (6, 1)])
def test_pkt_matches_loop(batch, seed):
    s, t = _emb(batch, 5, 8, seed, scale=2.0)
    s1, s2 = s.clone().requires_grad_(), s.clone().requires_grad_()
    got, ref = pkt(s1, t), pkt_reference(s2, t)
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-13)
    got.backward()
    ref.backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-8, atol=1e-12)
    got32 = PKTLoss(loss_weight=30000.0)(s_pooled=s.float(), t_pooled=t.float())
    torch.testing.assert_close(got32.double(), 30000.0 * ref, rtol=1e-4, atol=1e-6)


def test_pkt_edge_cases():
    s, t = _emb(1, 4, 4, 7)
    # One sample: its only probability is 1 on both sides.
    assert pkt(s, t).item() == pytest.approx(0.0, abs=1e-7)
    big = torch.randn(6, 8) * 1e4
    assert pkt(big, big.clone()).item() == pytest.approx(0.0, abs=1e-6)
    zero = torch.zeros(4, 3, requires_grad=True)
    out = PKTLoss()(s_pooled=zero, t_pooled=torch.randn(4, 3))
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(zero.grad).all()
