"""OFD: the margin against the Gaussian-tail formula, the partial L2 against the literal
three-case loop."""

import pytest
import torch
from loss_references import ofd_margin_reference, ofd_reference

from mlkd.models.losses import OFDLoss, ofd_margin, ofd_partial_l2


def test_margin_matches_erfc_formula_including_thin_tails():
    weight = torch.tensor([1.0, -2.0, 0.5, 1.0, 3.0, 0.1])
    bias = torch.tensor([0.0, 1.0, -0.3, 4.0, -1.0, 5.0])  # 4σ and 50σ: thin tails → −3|γ|
    got = ofd_margin(weight, bias)
    ref = torch.tensor(ofd_margin_reference(weight, bias))
    torch.testing.assert_close(got, ref, rtol=1e-6, atol=1e-7)
    assert got[3].item() == pytest.approx(-3.0) and got[5].item() == pytest.approx(-0.3)
    # β = 0: E[x | x < 0] = −σ·sqrt(2/π).
    assert got[0].item() == pytest.approx(-((2 / torch.pi) ** 0.5), rel=1e-6)
    assert (got <= 0).all() and got.dtype == torch.float32


def test_margin_zero_weight_limit():
    got = ofd_margin(torch.zeros(3), torch.tensor([-1.0, 0.0, 2.0]))
    torch.testing.assert_close(got, torch.tensor([-1.0, 0.0, 0.0]))


def test_ofd_matches_three_case_loop():
    g = torch.Generator().manual_seed(0)
    s = [
        torch.randn(2, 3, 4, 4, generator=g, dtype=torch.float64) * 2,
        torch.randn(2, 4, 2, 2, generator=g, dtype=torch.float64) * 2,
    ]
    t = [
        torch.randn(2, 3, 8, 8, generator=g, dtype=torch.float64) * 2,
        torch.randn(2, 4, 2, 2, generator=g, dtype=torch.float64) * 2,
    ]
    margins = [
        ofd_margin(torch.randn(3, generator=g), torch.randn(3, generator=g)),
        ofd_margin(torch.randn(4, generator=g), torch.randn(4, generator=g)),
    ]
    s1 = [x.clone().requires_grad_() for x in s]
    s2 = [x.clone().requires_grad_() for x in s]
    got = OFDLoss(margins=margins).double()(s_feats=s1, t_feats=t)
    ref = ofd_reference(s2, t, margins)
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-7)
    got.backward()
    ref.backward()
    for a, b in zip(s1, s2):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-6)
    # Margins given in forward take precedence over the constructor's.
    torch.testing.assert_close(
        OFDLoss()(s_feats=s, t_feats=t, margins=margins).double(), ref, rtol=1e-5, atol=1e-7
    )


def test_ofd_cases_by_hand():
    m = torch.tensor([-1.0])
    t = torch.tensor([-3.0, -3.0, -0.5, -0.5, 2.0, 2.0]).view(1, 1, 1, 6)
    s = torch.tensor([-2.0, 0.0, -0.7, 1.0, 1.0, 3.0]).view(1, 1, 1, 6)
    # t ≤ m: (s−m)² only if s > m; m < t ≤ 0: (s−t)² only if s > t; t > 0: always (s−t)².
    expected = 0 + 1.0 + 0 + 2.25 + 1.0 + 1.0
    assert ofd_partial_l2(s, t, m).item() == pytest.approx(expected)


def test_ofd_errors():
    x = torch.randn(1, 2, 2, 2)
    with pytest.raises(ValueError, match='margin'):
        OFDLoss()(s_feats=x, t_feats=x)
    with pytest.raises(ValueError, match='channels'):
        OFDLoss(margins=[torch.zeros(3)])(s_feats=x, t_feats=x)
