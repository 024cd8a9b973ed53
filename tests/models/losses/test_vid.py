"""VID against a per-channel loop; its variances are trainable, checkpointed parameters."""

import math

import pytest
import torch
from loss_references import vid_reference

from mlkd.models.losses import VIDLoss


def _feats(seed, shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) for shape in shapes]


def test_vid_matches_channel_loop():
    means = _feats(0, [(3, 4, 4, 4), (3, 5, 2, 2)])
    teacher = _feats(1, [(3, 4, 4, 4), (3, 5, 4, 4)])  # second stage: teacher pooled to 2×2
    loss = VIDLoss([4, 5], init_var=5.0).double()
    with torch.no_grad():
        for alpha in loss.log_scales:
            alpha.add_(torch.randn(alpha.shape, dtype=torch.float64))
    m1 = [m.clone().requires_grad_() for m in means]
    got = loss(s_feats=m1, t_feats=teacher)
    ref = vid_reference(means, teacher, [a.detach() for a in loss.log_scales])
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-7)
    got.backward()
    assert all(a.grad is not None and torch.isfinite(a.grad).all() for a in loss.log_scales)


def test_vid_initial_variance_and_state_dict():
    loss = VIDLoss(3, init_var=5.0, eps=1e-5)
    var = torch.nn.functional.softplus(loss.log_scales[0]) + 1e-5
    torch.testing.assert_close(var, torch.full((3,), 5.0))
    assert 'log_scales.0' in loss.state_dict()
    assert sum(p.numel() for p in loss.parameters()) == 3
    # At μ = t only the log-variance term is left.
    x = torch.randn(2, 3, 2, 2)
    assert loss(s_feats=x, t_feats=x).item() == pytest.approx(0.5 * math.log(5.0), rel=1e-6)


def test_vid_errors_and_extremes():
    loss = VIDLoss([2, 3])
    with pytest.raises(ValueError, match='stages'):
        loss(s_feats=torch.randn(1, 2, 2, 2), t_feats=torch.randn(1, 2, 2, 2))
    with pytest.raises(ValueError, match='variances'):
        VIDLoss(4)(s_feats=torch.randn(1, 3, 2, 2), t_feats=torch.randn(1, 3, 2, 2))
    with pytest.raises(ValueError, match='num_channels'):
        VIDLoss([])
    big = (torch.randn(1, 3, 2, 2) * 1e3).requires_grad_()
    out = VIDLoss(3)(s_feats=big, t_feats=torch.randn(1, 3, 2, 2) * 1e3)
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(big.grad).all()
