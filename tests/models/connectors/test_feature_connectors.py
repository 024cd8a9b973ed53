"""Connectors of the feature losses: output shapes, registry construction, list handling,
initialisation, and the ABF fusion against a hand-written forward."""

import math

import pytest
import torch
from mmengine.registry import DefaultScope

from mlkd.models.connectors import (
    ABFConnector,
    EmbedConnector,
    HintConnector,
    OFDConnector,
    VIDRegressorConnector,
)
from mlkd.registry import MODELS


@pytest.mark.parametrize('in_size,out_size', [(8, 8), (8, 4), (4, 8), (6, 4), (None, None)])
def test_hint_connector_maps_to_teacher_shape(in_size, out_size):
    conn = HintConnector(5, 7, in_size=in_size, out_size=out_size)
    side = in_size or 4
    out = conn(torch.randn(2, 5, side, side))
    assert out.shape == (2, 7, out_size or 4, out_size or 4)
    assert (out >= 0).all()  # ends with a ReLU by default
    assert (HintConnector(5, 7, use_relu=False)(torch.randn(2, 5, 3, 3)) < 0).any()
    with pytest.raises(ValueError, match='smaller'):
        HintConnector(5, 7, in_size=3, out_size=8)


def test_stagewise_connectors_take_lists():
    feats = [torch.randn(3, 4, 8, 8), torch.randn(3, 6, 4, 4)]
    for cls in (OFDConnector, VIDRegressorConnector, HintConnector):
        conn = cls([4, 6], [5, 7])
        outs = conn(feats)
        assert [o.shape for o in outs] == [(3, 5, 8, 8), (3, 7, 4, 4)]
        with pytest.raises(ValueError, match='stages'):
            conn(feats[:1])
        with pytest.raises(ValueError, match='both'):
            cls(4, [5, 7])
    assert OFDConnector(4, 5)(feats[0]).shape == (3, 5, 8, 8)


def test_ofd_connector_initialisation():
    conn = OFDConnector(16, 64, kernel_size=3)
    conv, bn = conn.stages[0]
    assert conv.bias is None and conv.padding == (1, 1)
    assert conv.weight.std().item() == pytest.approx(math.sqrt(2 / (9 * 64)), rel=0.1)
    assert torch.equal(bn.weight, torch.ones(64)) and torch.equal(bn.bias, torch.zeros(64))
    with pytest.raises(ValueError, match='odd'):
        OFDConnector(4, 4, kernel_size=2)


def test_vid_regressor_has_three_bias_free_convs():
    conn = VIDRegressorConnector(3, 5)
    convs = [m for m in conn.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.bias) for c in convs] == [
        (3, 5, None),
        (5, 5, None),
        (5, 5, None),
    ]


def test_embed_connector_unit_rows():
    conn = EmbedConnector(12, 6)
    x = torch.randn(4, 3, 2, 2)  # flattened to 12
    out = conn(x)
    assert out.shape == (4, 6)
    torch.testing.assert_close(out.norm(dim=1), torch.ones(4))
    projected = x.flatten(1) @ conn.linear.weight.T + conn.linear.bias
    torch.testing.assert_close(out, projected / projected.norm(dim=1, keepdim=True))


def test_abf_connector_shapes_and_fusion_by_hand():
    ins, outs = [4, 8, 8], [5, 6, 7]
    conn = ABFConnector(ins, outs).eval()
    assert conn.mid_channels == 8
    feats = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4), torch.randn(2, 8, 1, 1)]
    got = conn(feats)
    assert [o.shape for o in got] == [(2, 5, 8, 8), (2, 6, 4, 4), (2, 7, 1, 1)]
    # Deep to shallow by hand: level 2 unfused; each shallower level gates itself and the
    # nearest-upsampled residual of the level below.
    blocks = conn.blocks
    residual = blocks[2].reduce(feats[2])
    expected = [None, None, blocks[2].project(residual)]
    for k in (1, 0):
        x = blocks[k].reduce(feats[k])
        up = (
            residual.expand(-1, -1, *x.shape[-2:])
            if residual.shape[-1] == 1
            else residual.repeat_interleave(
                x.shape[-1] // residual.shape[-1], dim=2
            ).repeat_interleave(x.shape[-1] // residual.shape[-1], dim=3)
        )
        gates = torch.sigmoid(blocks[k].attention[0](torch.cat([x, up], dim=1)))
        residual = x * gates[:, :1] + up * gates[:, 1:]
        expected[k] = blocks[k].project(residual)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b)
    assert blocks[2].attention is None
    resized = ABFConnector(ins, outs, out_shapes=[8, 8, 2])(feats)
    assert [o.shape[-1] for o in resized] == [8, 8, 2]
    with pytest.raises(ValueError, match='levels'):
        conn(feats[:2])


def test_connectors_build_from_the_registry():
    with DefaultScope.overwrite_default_scope('mlkd'):
        for cfg, x in (
            (dict(type='HintConnector', in_channels=3, out_channels=4), torch.randn(1, 3, 2, 2)),
            (
                dict(type='OFDConnector', in_channels=[3], out_channels=[4]),
                [torch.randn(1, 3, 2, 2)],
            ),
            (
                dict(type='VIDRegressorConnector', in_channels=3, out_channels=4),
                torch.randn(1, 3, 2, 2),
            ),
            (dict(type='EmbedConnector', in_channels=3, out_channels=4), torch.randn(2, 3)),
            (
                dict(type='ABFConnector', in_channels=[3, 5], out_channels=[4, 6]),
                [torch.randn(2, 3, 2, 2), torch.randn(2, 5, 1, 1)],
            ),
        ):
            out = MODELS.build(cfg)(x)
            assert (out if isinstance(out, torch.Tensor) else out[0]).shape[1] == 4
