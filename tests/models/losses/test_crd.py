"""CRD: one step against loops, bank indexing and momentum update, reproducible negatives,
identical copies fed the same global batch, resume through the state dict."""

import copy

import pytest
import torch
import torch.nn.functional as F
from loss_references import crd_reference

from mlkd.models.losses import CRDLoss, momentum_update, nce_loss


def _unit(batch, dim, seed):
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(batch, dim, generator=g), dim=1)


def _crd(**kwargs):
    return CRDLoss(
        num_samples=kwargs.pop('num_samples', 50),
        embed_dim=8,
        num_negatives=kwargs.pop('num_negatives', 7),
        **kwargs,
    )


def test_crd_step_matches_loop_reference():
    loss = _crd(temperature=0.1, momentum=0.5)
    idx_batch = torch.tensor([3, 17, 42, 0, 49])
    v_s, v_t = _unit(5, 8, 0), _unit(5, 8, 1)
    mem_s, mem_t = loss.memory_s.clone(), loss.memory_t.clone()
    state = loss.generator.get_state()
    drawn = loss.draw_indices(idx_batch)
    loss.generator.set_state(state)
    v_s1, v_t1 = v_s.clone().requires_grad_(), v_t.clone().requires_grad_()
    got = loss(s_pooled=v_s1, t_pooled=v_t1, sample_idx=idx_batch)
    # Z is fixed on the first call from the raw scores' mean.
    raw_s = torch.exp(torch.einsum('bkd,bd->bk', mem_t[drawn], v_s) / 0.1)
    raw_t = torch.exp(torch.einsum('bkd,bd->bk', mem_s[drawn], v_t) / 0.1)
    z = torch.stack([raw_s.mean() * 50, raw_t.mean() * 50])
    torch.testing.assert_close(loss.normalisers, z)
    ref, new_s, new_t = crd_reference(v_s, v_t, drawn, mem_s, mem_t, z, 0.1, 0.5)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(loss.memory_s, new_s)
    torch.testing.assert_close(loss.memory_t, new_t)
    got.backward()
    # Both embeddings receive gradient (the teacher side is a trainable connector's output).
    assert v_s1.grad.abs().sum() > 0 and v_t1.grad.abs().sum() > 0
    untouched = torch.ones(50, dtype=torch.bool)
    untouched[idx_batch] = False
    assert torch.equal(loss.memory_s[untouched], mem_s[untouched])


def test_drawn_indices_put_the_sample_first_and_cover_the_bank():
    loss = _crd(num_samples=10, num_negatives=2000)
    idx = loss.draw_indices(torch.tensor([4, 9]))
    assert idx.shape == (2, 2001) and idx[:, 0].tolist() == [4, 9]
    counts = torch.bincount(idx[:, 1:].flatten(), minlength=10).float()
    assert counts.min() > 0.8 * 400 and counts.max() < 1.2 * 400  # uniform over the bank


def test_nce_loss_by_hand():
    scores = torch.tensor([[0.5, 0.1, 0.3]])
    noise = 2 / 10
    hand = -(
        torch.log(torch.tensor(0.5 / (0.5 + noise + 1e-7)))
        + torch.log(torch.tensor(noise / (0.1 + noise + 1e-7)))
        + torch.log(torch.tensor(noise / (0.3 + noise + 1e-7)))
    )
    torch.testing.assert_close(nce_loss(scores, 10), hand)


def test_momentum_update_repeated_index_uses_its_last_occurrence():
    memory = F.normalize(torch.randn(6, 4), dim=1)
    emb = F.normalize(torch.randn(3, 4), dim=1)
    idx = torch.tensor([2, 5, 2])
    expected = memory.clone()
    for i in (1, 2):  # the first occurrence of 2 is overwritten by the last
        row = 0.3 * memory[idx[i]] + 0.7 * emb[i]
        expected[idx[i]] = row / row.norm()
    momentum_update(memory, emb, idx, 0.3)
    torch.testing.assert_close(memory, expected)


def test_seeded_copies_given_the_same_global_batches_stay_identical():
    """What DDP ranks do: each holds a copy, each sees the all-gathered batch."""
    a, b = _crd(seed=5), _crd(seed=5)
    assert torch.equal(a.memory_s, b.memory_s)
    for step in range(4):
        idx = torch.randperm(50, generator=torch.Generator().manual_seed(step))[:6]
        v_s, v_t = _unit(6, 8, 10 + step), _unit(6, 8, 20 + step)
        out_a = a(s_pooled=v_s, t_pooled=v_t, sample_idx=idx)
        out_b = b(s_pooled=v_s.clone(), t_pooled=v_t.clone(), sample_idx=idx)
        assert torch.equal(out_a, out_b)
    for name in ('memory_s', 'memory_t', 'normalisers'):
        assert torch.equal(getattr(a, name), getattr(b, name))
    # The seed is what makes copies agree: another seed gives another bank and other negatives.
    assert not torch.equal(_crd(seed=6).memory_s, _crd(seed=5).memory_s)
    assert not torch.equal(_crd(seed=6).draw_indices(idx), _crd(seed=5).draw_indices(idx))


def test_state_dict_resumes_banks_normalisers_and_negatives():
    loss = _crd(seed=1)
    idx = torch.tensor([1, 2, 3])
    loss(s_pooled=_unit(3, 8, 0), t_pooled=_unit(3, 8, 1), sample_idx=idx)
    resumed = _crd(seed=99)
    resumed.load_state_dict(copy.deepcopy(loss.state_dict()))
    v_s, v_t = _unit(3, 8, 2), _unit(3, 8, 3)
    assert torch.equal(
        loss(s_pooled=v_s, t_pooled=v_t, sample_idx=idx),
        resumed(s_pooled=v_s, t_pooled=v_t, sample_idx=idx),
    )
    assert torch.equal(loss.memory_t, resumed.memory_t)
    # The state holds tensors only: it survives a weights_only round trip.
    import io

    buffer = io.BytesIO()
    torch.save(loss.state_dict(), buffer)
    buffer.seek(0)
    assert set(torch.load(buffer, weights_only=True)) == set(loss.state_dict())


def test_crd_input_errors_and_extremes():
    loss = _crd()
    v = _unit(2, 8, 0)
    with pytest.raises(IndexError, match='sample_idx'):
        loss(s_pooled=v, t_pooled=v, sample_idx=torch.tensor([0, 50]))
    with pytest.raises(ValueError, match='sample_idx'):
        loss(s_pooled=v, t_pooled=v, sample_idx=torch.tensor([0]))
    with pytest.raises(ValueError, match=r'\[B, 8\]'):
        loss(
            s_pooled=torch.randn(2, 5), t_pooled=torch.randn(2, 5), sample_idx=torch.tensor([0, 1])
        )
    with pytest.raises(ValueError, match='momentum'):
        _crd(momentum=1.0)
    one = _unit(1, 8, 3).requires_grad_()
    out = loss(s_pooled=one, t_pooled=one.detach(), sample_idx=torch.tensor([7]))
    out.backward()
    assert torch.isfinite(out) and torch.isfinite(one.grad).all()
    assert CRDLoss.compares_samples
