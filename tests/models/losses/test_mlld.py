"""MLLD against loops over temperatures, samples and Gram entries; masks and levels."""

import pytest
import torch
from loss_references import mlld_reference

from mlkd.models.losses import MLLDLoss, multi_level_logit_distill


def _logits(batch, classes, seed, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, classes, generator=g, dtype=torch.float64) * scale,
        torch.randn(batch, classes, generator=g, dtype=torch.float64) * scale,
    )


@pytest.mark.parametrize('mask_mode', ['scalar', 'per_sample', 'none'])
@pytest.mark.parametrize('batch,classes,seed', [(6, 5, 0), (7, 4, 1)])
def test_mlld_matches_loops(mask_mode, batch, classes, seed):
    s, t = _logits(batch, classes, seed)
    s1, s2 = s.clone().requires_grad_(), s.clone().requires_grad_()
    got = multi_level_logit_distill(s1, t, mask_mode=mask_mode)
    ref = mlld_reference(s2, t, mask_mode=mask_mode)
    for level in ('instance', 'class', 'batch'):
        torch.testing.assert_close(got[level], ref[level], rtol=1e-10, atol=1e-12)
    sum(got.values()).backward()
    sum(ref.values()).backward()
    torch.testing.assert_close(s1.grad, s2.grad, rtol=1e-8, atol=1e-12)


def test_mlld_module_levels_weight_and_temperatures():
    s, t = _logits(4, 6, 2)
    loss = MLLDLoss(temperatures=(2.0,), levels=('instance', 'batch'), loss_weight=0.9)
    out = loss(s_logits=s.float(), t_logits=t.float())
    assert set(out) == {'instance', 'batch'} and MLLDLoss.compares_samples
    ref = mlld_reference(s, t, temperatures=(2.0,))
    torch.testing.assert_close(out['batch'].double(), 0.9 * ref['batch'], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match='temperatures'):
        MLLDLoss(temperatures=(4.0, -1.0))
    with pytest.raises(ValueError, match='levels'):
        MLLDLoss(levels=('pixel',))
    with pytest.raises(ValueError, match='mask_mode'):
        MLLDLoss(mask_mode='soft')


def test_mlld_scalar_mask_is_the_kept_fraction():
    s, t = _logits(8, 5, 3)
    plain = multi_level_logit_distill(s, t, mask_mode='none')
    scalar = multi_level_logit_distill(s, t, mask_mode='scalar')
    # An even batch with distinct confidences keeps exactly half its samples.
    torch.testing.assert_close(scalar['instance'], 0.5 * plain['instance'])
    torch.testing.assert_close(scalar['batch'], 0.5 * plain['batch'])


def test_mlld_edge_cases():
    s = torch.randn(1, 5, requires_grad=True)
    out = MLLDLoss()(s_logits=s, t_logits=torch.randn(1, 5))
    assert all(torch.isfinite(v) for v in out.values())
    sum(out.values()).backward()
    assert torch.isfinite(s.grad).all()
    x = torch.randn(6, 5)
    same = MLLDLoss()(s_logits=x, t_logits=x.clone())
    assert all(v.item() == pytest.approx(0.0, abs=1e-6) for v in same.values())
    ext = (torch.randint(0, 2, (6, 5)).float() * 100 - 50).requires_grad_()
    out = MLLDLoss()(s_logits=ext, t_logits=-ext.detach())
    sum(out.values()).backward()
    assert all(torch.isfinite(v) for v in out.values()) and torch.isfinite(ext.grad).all()
