"""DKD against a per-sample loop with explicit sub-softmaxes; gt handling and warm-up."""

import pytest
import torch
import torch.nn.functional as F
from loss_references import dkd_reference
from mmengine.logging import MessageHub

from mlkd.models.losses import DKDLoss, decoupled_kd, softmax_kd


def _case(batch, classes, seed, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(batch, classes, generator=g, dtype=torch.float64) * scale
    t = torch.randn(batch, classes, generator=g, dtype=torch.float64) * scale
    target = torch.randint(0, classes, (batch,), generator=g)
    return s, t, target


@pytest.mark.parametrize(
    'temperature,alpha,beta,seed', [(4.0, 1.0, 8.0, 0), (1.0, 0.5, 2.0, 1), (2.0, 1.0, 6.0, 2)]
)
def test_dkd_matches_loop(temperature, alpha, beta, seed):
    s, t, target = _case(6, 7, seed)
    s1, s2 = s.clone().requires_grad_(), s.clone().requires_grad_()
    tckd, nckd = decoupled_kd(s1, t, target, alpha, beta, temperature)
    ref = dkd_reference(s2, t, target, alpha, beta, temperature)
    torch.testing.assert_close(tckd + nckd, ref, rtol=1e-10, atol=1e-12)
    (tckd + nckd).backward()
    ref.backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-8, atol=1e-12)


def test_dkd_module_uses_one_hot_gt_and_ignores_minus_one():
    s, t, target = _case(5, 6, 3)
    gt = F.one_hot(target, 6).float()
    gt[0, (target[0] + 1) % 6] = -1  # an ignored entry is not a positive
    got = DKDLoss(warmup_epochs=0)(s_logits=s.float(), t_logits=t.float(), gt=gt)
    torch.testing.assert_close(got.double(), dkd_reference(s, t, target), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='one-hot'):
        DKDLoss()(s_logits=s, t_logits=t, gt=torch.ones(5, 6))
    with pytest.raises(ValueError, match='one-hot'):
        DKDLoss()(s_logits=s, t_logits=t, gt=torch.zeros(5, 6))
    with pytest.raises(ValueError, match=r'shape \(5,\)'):
        DKDLoss()(s_logits=s, t_logits=t, gt=target.float())


def test_dkd_decomposes_kd():
    """The DKD paper's identity, per sample: KD = TCKD + (1 − p^t_g)·NCKD."""
    s, t, target = _case(4, 5, 4)
    tckd, nckd_terms = [], []
    for i in range(4):
        a, b = decoupled_kd(s[i : i + 1], t[i : i + 1], target[i : i + 1], 1.0, 1.0, 4.0)
        tckd.append(a)
        p_g = torch.softmax(t[i] / 4.0, 0)[target[i]]
        nckd_terms.append((1 - p_g) * b)
    per_sample = torch.stack([softmax_kd(s[i : i + 1], t[i : i + 1], 4.0) for i in range(4)])
    torch.testing.assert_close(per_sample, torch.stack(tckd) + torch.stack(nckd_terms))


def test_dkd_warmup_from_message_hub():
    s, t, target = _case(3, 4, 5)
    gt = F.one_hot(target, 4).float()
    loss = DKDLoss(warmup_epochs=20)
    full = DKDLoss(warmup_epochs=0)(s_logits=s, t_logits=t, gt=gt)
    hub = MessageHub.get_current_instance()
    try:
        for epoch, factor in ((0, 1 / 20), (9, 0.5), (19, 1.0), (30, 1.0)):
            hub.update_info('epoch', epoch)
            torch.testing.assert_close(loss(s_logits=s, t_logits=t, gt=gt), factor * full)
    finally:
        hub.runtime_info.pop('epoch', None)
    torch.testing.assert_close(loss(s_logits=s, t_logits=t, gt=gt), full)  # no runner: 1


def test_dkd_extremes_and_single_class():
    s = torch.tensor([[50.0, -50.0, 0.0], [-50.0, 50.0, 50.0]], requires_grad=True)
    t = torch.tensor([[-50.0, 50.0, 0.0], [50.0, -50.0, -50.0]])
    gt = torch.tensor([[1.0, 0, 0], [0, 0, 1.0]])
    out = DKDLoss(warmup_epochs=0, temperature=1.0)(s_logits=s, t_logits=t, gt=gt)
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(s.grad).all() and out.item() > 10
    one = torch.randn(3, 1, requires_grad=True)
    out = DKDLoss(warmup_epochs=0)(s_logits=one, t_logits=torch.randn(3, 1), gt=torch.ones(3, 1))
    assert out.item() == pytest.approx(0.0, abs=1e-6)
    out.backward()
    assert torch.isfinite(one.grad).all()
    with pytest.raises(ValueError, match='temperature'):
        DKDLoss(temperature=0)
