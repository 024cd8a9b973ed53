"""The loss contract (``mlkd/models/losses/base.py``) for the feature, relation, DKD and MLLD
losses: fp32 results from low-precision inputs, finite values and gradients at extreme and
degenerate inputs, a graph-connected result, and no gradient into the teacher's tensors (except
CRD, whose teacher embedding comes from a trainable connector)."""

import pytest
import torch
import torch.nn.functional as F

from mlkd.models.losses import (
    ATLoss,
    CRDLoss,
    DKDLoss,
    FitNetLoss,
    MLLDLoss,
    OFDLoss,
    PKTLoss,
    ReviewKDLoss,
    RKDLoss,
    VIDLoss,
)


def _maps(batch, scale, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, 4, side, side, generator=g) * scale for side in (4, 2)]


def _vectors(batch, scale, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 8, generator=g) * scale


def _logits(batch, scale, seed):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(batch, 6, generator=g)
    return torch.sign(z) * 50 if scale == 'pm50' else z * scale


def _unit_vectors(batch, scale, seed):
    return F.normalize(_vectors(batch, scale, seed), dim=1)


def _pair(kind, draw, other=lambda batch: {}):
    """Factory of (student kwargs, teacher kwargs, other kwargs): ``s_<kind>`` and ``t_<kind>``
    drawn by ``draw`` with consecutive seeds, ``other(batch)`` for the remaining inputs."""

    def make(batch, scale, seed):
        return (
            {f's_{kind}': draw(batch, scale, seed)},
            {f't_{kind}': draw(batch, scale, seed + 1)},
            other(batch),
        )

    return make


# name -> (factory of the loss, factory of (student kwargs, teacher kwargs, other kwargs))
CASES = {
    'RKD': (RKDLoss, _pair('pooled', _vectors)),
    'PKT': (PKTLoss, _pair('pooled', _vectors)),
    'CRD': (
        lambda: CRDLoss(num_samples=20, embed_dim=8, num_negatives=5),
        _pair('pooled', _unit_vectors, other=lambda b: {'sample_idx': torch.arange(b)}),
    ),
    'AT': (ATLoss, _pair('feats', _maps)),
    'FitNet': (FitNetLoss, _pair('feats', _maps)),
    'VID': (lambda: VIDLoss([4, 4]), _pair('feats', _maps)),
    'OFD': (
        lambda: OFDLoss(margins=[-torch.ones(4), -0.5 * torch.ones(4)]),
        _pair('feats', _maps),
    ),
    'ReviewKD': (ReviewKDLoss, _pair('feats', _maps)),
    'DKD': (
        DKDLoss,
        _pair('logits', _logits, other=lambda b: {'gt': F.one_hot(torch.arange(b) % 6, 6).float()}),
    ),
    'MLLD': (MLLDLoss, _pair('logits', _logits)),
}


def _total(out):
    return sum(out.values()) if isinstance(out, dict) else out


def _cast(value, dtype):
    if isinstance(value, list):
        return [v.to(dtype) for v in value]
    return value.to(dtype)


def _leaves(kwargs):
    """Clone every tensor as a fresh leaf requiring grad (lists element-wise)."""
    out, leaves = {}, []
    for key, value in kwargs.items():
        values = value if isinstance(value, list) else [value]
        fresh = [v.detach().clone().requires_grad_() for v in values]
        leaves += fresh
        out[key] = fresh if isinstance(value, list) else fresh[0]
    return out, leaves


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
def test_low_precision_inputs_give_fp32(name, dtype):
    build, make = CASES[name]
    s, t, other = make(6, 1.0, 0)
    low = {k: _cast(v, dtype) for k, v in {**s, **t}.items()}
    up = {k: _cast(v, torch.float32) for k, v in low.items()}
    out_low = _total(build()(**low, **other))
    out_up = _total(build()(**up, **other))
    assert out_low.dtype == torch.float32
    torch.testing.assert_close(out_low, out_up)


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('case', ['normal', 'large', 'tiny', 'batch_size_1', 'all_equal'])
def test_finite_values_gradients_and_teacher_detached(name, case):
    build, make = CASES[name]
    batch, scale = (1, 1.0) if case == 'batch_size_1' else (6, 1.0)
    if case == 'large':
        scale = 'pm50' if name in ('DKD', 'MLLD') else 1e3
    if case == 'tiny':
        scale = 1e-4
    s, t, other = make(batch, scale, 1)
    if case == 'all_equal':
        s = {
            k: (
                [torch.ones_like(x) for x in v]
                if isinstance(v, list)
                else F.normalize(torch.ones_like(v), dim=1)
            )
            for k, v in s.items()
        }
        t = {k.replace('s_', 't_'): v for k, v in s.items()}
    s, s_leaves = _leaves(s)
    t, t_leaves = _leaves(t)
    out = _total(build()(**s, **t, **other))
    assert out.dim() == 0 and torch.isfinite(out), case
    out.backward()
    for leaf in s_leaves:
        assert leaf.grad is not None and torch.isfinite(leaf.grad).all(), case
    for leaf in t_leaves:
        if name == 'CRD':
            assert leaf.grad is not None and torch.isfinite(leaf.grad).all()
        else:
            assert leaf.grad is None, case


@pytest.mark.parametrize('name', sorted(CASES))
def test_zero_weight_still_connected(name):
    build, make = CASES[name]
    loss = build()
    loss.loss_weight = 0.0
    s, t, other = make(4, 1.0, 2)
    s, s_leaves = _leaves(s)
    out = _total(loss(**s, **t, **other))
    assert out.item() == 0.0 and out.requires_grad
    out.backward()
    assert all(leaf.grad is not None for leaf in s_leaves)


def test_losses_build_from_the_registry_with_their_flags():
    from mmengine.registry import DefaultScope

    from mlkd.registry import MODELS

    expected = {
        'RKDLoss': True,
        'PKTLoss': True,
        'CRDLoss': True,
        'MLLDLoss': True,
        'ATLoss': False,
        'FitNetLoss': False,
        'VIDLoss': False,
        'OFDLoss': False,
        'ReviewKDLoss': False,
        'DKDLoss': False,
    }
    extra = {'CRDLoss': dict(num_samples=10), 'VIDLoss': dict(num_channels=4)}
    with DefaultScope.overwrite_default_scope('mlkd'):
        for name, compares in expected.items():
            loss = MODELS.build(dict(type=name, loss_weight=2.0, **extra.get(name, {})))
            assert loss.loss_weight == 2.0
            assert getattr(loss, 'compares_samples', False) is compares, name
