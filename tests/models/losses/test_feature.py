"""AT and the FitNet hint loss against per-sample loops; FitNet's two-stage switch."""

import pytest
import torch
import torch.nn.functional as F
from loss_references import at_reference
from mmengine.logging import MessageHub

from mlkd.models.losses import ATLoss, FitNetLoss, attention_transfer, hint_mse


def _maps(seed, shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) for shape in shapes]


def test_at_matches_loop_with_pooling_both_ways():
    s = _maps(0, [(3, 4, 8, 8), (3, 6, 4, 4), (3, 8, 2, 2)])
    t = _maps(1, [(3, 5, 4, 4), (3, 7, 4, 4), (3, 9, 4, 4)])  # teacher smaller, equal, larger
    s1 = [x.clone().requires_grad_() for x in s]
    s2 = [x.clone().requires_grad_() for x in s]
    got, ref = attention_transfer(s1, t), at_reference(s2, t)
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-13)
    got.backward()
    ref.backward()
    for a, b in zip(s1, s2):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-8, atol=1e-12)
    module = ATLoss(loss_weight=1000.0)(
        s_feats=[x.float() for x in s], t_feats=[x.float() for x in t]
    )
    torch.testing.assert_close(module.double(), 1000 * ref, rtol=1e-5, atol=1e-6)


def test_at_single_tensor_batch_one_and_large_features():
    s, t = _maps(2, [(1, 3, 4, 4), (1, 5, 4, 4)])
    torch.testing.assert_close(attention_transfer(s, t), at_reference([s], [t]))
    big = (torch.randn(2, 3, 4, 4) * 1e3).requires_grad_()
    out = ATLoss()(s_feats=big, t_feats=torch.randn(2, 4, 4, 4) * 1e3)
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(big.grad).all()
    # The attention map is scale-free: a scaled teacher copy gives 0.
    assert attention_transfer(big, 7 * big.detach()).item() == pytest.approx(0.0, abs=1e-10)


def test_hint_mse_is_the_mean_squared_error_and_checks_shapes():
    s, t = _maps(3, [(2, 4, 3, 3), (2, 4, 3, 3)])
    hand = (
        sum(
            ((s[b, c, h, w] - t[b, c, h, w]) ** 2).item()
            for b in range(2)
            for c in range(4)
            for h in range(3)
            for w in range(3)
        )
        / s.numel()
    )
    assert hint_mse(s, t).item() == pytest.approx(hand, rel=1e-12)
    assert FitNetLoss(loss_weight=100.0)(
        s_feats=s.float(), t_feats=t.float()
    ).item() == pytest.approx(100 * hand, rel=1e-5)
    with pytest.raises(ValueError, match='connector output'):
        hint_mse(s, t[:, :3])


def test_fitnet_two_stage_switches_off_after_hint_epochs():
    s, t = _maps(4, [(2, 3, 2, 2), (2, 3, 2, 2)])
    loss = FitNetLoss(stage='two_stage', hint_epochs=3)
    assert [loss.stage_weight(e) for e in range(5)] == [1, 1, 1, 0, 0]
    assert FitNetLoss().stage_weight(100) == 1.0
    hub = MessageHub.get_current_instance()
    try:
        hub.update_info('epoch', 2)
        assert loss(s_feats=s, t_feats=t).item() == pytest.approx(F.mse_loss(s, t).item())
        hub.update_info('epoch', 3)
        x = s.clone().requires_grad_()
        out = loss(s_feats=x, t_feats=t)
        assert out.item() == 0.0 and out.requires_grad
    finally:
        hub.runtime_info.pop('epoch', None)
    with pytest.raises(ValueError, match='hint_epochs'):
        FitNetLoss(stage='two_stage')
    with pytest.raises(ValueError, match='stage'):
        FitNetLoss(stage='three')
