"""ReviewKD's hierarchical context loss against block-mean pyramids; warm-up."""

import pytest
import torch
from loss_references import hcl_reference
from mmengine.logging import MessageHub

from mlkd.models.losses import ReviewKDLoss, hierarchical_context_loss


def _levels(seed, shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=torch.float64) for shape in shapes]


def test_hcl_matches_block_mean_pyramid():
    shapes = [(2, 3, 8, 8), (2, 4, 4, 4), (2, 5, 2, 2), (2, 6, 1, 1)]
    s, t = _levels(0, shapes), _levels(1, shapes)
    s1 = [x.clone().requires_grad_() for x in s]
    got, ref = hierarchical_context_loss(s1, t), hcl_reference(s, t)
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=1e-13)
    got.backward()
    assert all(torch.isfinite(x.grad).all() for x in s1)
    # 8×8: weights 1, 1/2, 1/4, 1/8; a 1×1 level is its plain MSE.
    one = hierarchical_context_loss(s[3], t[3])
    torch.testing.assert_close(one, ((s[3] - t[3]) ** 2).mean())


def test_review_module_warmup_and_shape_error():
    shapes = [(1, 2, 4, 4), (1, 3, 1, 1)]
    s, t = _levels(2, shapes), _levels(3, shapes)
    loss = ReviewKDLoss(warmup_epochs=20, loss_weight=5.0)
    full = 5.0 * hcl_reference(s, t)
    hub = MessageHub.get_current_instance()
    try:
        hub.update_info('epoch', 4)
        torch.testing.assert_close(loss(s_feats=s, t_feats=t).double(), full * 5 / 20)
    finally:
        hub.runtime_info.pop('epoch', None)
    with pytest.raises(ValueError, match='teacher'):
        loss(s_feats=s, t_feats=[t[0][:, :1], t[1]])
    with pytest.raises(ValueError, match='stages'):
        loss(s_feats=s, t_feats=t[:1])
    big = [(x * 1e3).requires_grad_() for x in s]
    out = loss(s_feats=big, t_feats=[x * 1e3 for x in t])
    out.backward()
    assert torch.isfinite(out) and all(torch.isfinite(x.grad).all() for x in big)
