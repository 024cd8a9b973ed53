"""Parameter-free reshaping connectors, and connectors sized from the probe's full shapes."""

import pytest
import torch

from mlkd.models.connectors import (
    ABFConnector,
    GlobalPoolConnector,
    HintConnector,
    TokenMapConnector,
)


def test_global_pool_of_maps_tokens_and_backbone_tuples():
    g = torch.Generator().manual_seed(0)
    maps = torch.randn(2, 3, 4, 5, generator=g)
    expected = torch.stack(
        [torch.stack([maps[b, c].sum() / 20 for c in range(3)]) for b in range(2)]
    )
    pool = GlobalPoolConnector()
    torch.testing.assert_close(pool(maps), expected)
    torch.testing.assert_close(pool((torch.zeros(2, 7, 2, 2), maps)), expected)  # last output
    tokens = torch.randn(2, 6, 3, generator=g)
    torch.testing.assert_close(pool(tokens), tokens.sum(1) / 6)
    vectors = torch.randn(1, 3, generator=g)
    assert pool(vectors) is vectors
    assert GlobalPoolConnector(keepdim=True)(maps).shape == (2, 3, 1, 1)
    with pytest.raises(ValueError, match=r'\[B, C, H, W\]'):
        pool(torch.zeros(2, 3, 4, 5, 6))
    with pytest.raises(ValueError, match='empty'):
        pool(())


def test_token_map_reshapes_row_major_tokens():
    tokens = torch.arange(2 * 6 * 3, dtype=torch.float32).view(2, 6, 3)
    out = TokenMapConnector()((tokens, (2, 3)))
    assert out.shape == (2, 3, 2, 3)
    for b in range(2):
        for c in range(3):
            for h in range(2):
                for w in range(3):
                    assert out[b, c, h, w] == tokens[b, h * 3 + w, c]
    maps = torch.zeros(1, 2, 3, 3)
    assert TokenMapConnector()(maps) is maps
    with pytest.raises(ValueError, match='grid'):
        TokenMapConnector()((tokens, (4, 4)))


def test_hint_connector_takes_its_sides_from_probed_shapes():
    # student side 8 is half the teacher's 16: the 4x4 stride-2 transposed conv of mdistiller
    hint = HintConnector(4, 6, in_shapes=(2, 4, 8, 8), out_shapes=(2, 6, 16, 16))
    assert isinstance(hint.stages[0][0], torch.nn.ConvTranspose2d)
    assert hint(torch.zeros(2, 4, 8, 8)).shape == (2, 6, 16, 16)
    explicit = HintConnector(4, 6, in_size=16, out_size=16, in_shapes=(2, 4, 8, 8))
    assert explicit.stages[0][0].kernel_size == (1, 1)  # an explicit size wins


def test_abf_accepts_the_probes_full_teacher_shapes():
    ins, outs = [3, 5], [4, 6]
    by_side = ABFConnector(ins, outs, out_shapes=[8, 2])
    by_shape = ABFConnector(ins, outs, out_shapes=[(2, 4, 8, 8), (2, 6, 2, 2)])
    assert by_side.out_shapes == by_shape.out_shapes == [8, 2]
