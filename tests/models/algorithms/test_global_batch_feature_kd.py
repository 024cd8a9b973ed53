"""CRD's memory banks and RKD's relations under 2-process CPU DDP equal the single-process run on
the concatenated batch: the router all-gathers their inputs (``compares_samples``), so every rank
scores the global batch with the same negatives, writes the same bank rows, and DDP's averaged
gradient is the single-process one."""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import free_port
from torch import nn

from mlkd.models.algorithms import LossRouter

B, IN, D, N = 8, 6, 4, 20
NAMES = {'s_pooled', 't_pooled', 'sample_idx', 'data_samples'}
LOSSES = {
    'crd': dict(type='CRDLoss', num_samples=N, embed_dim=D, num_negatives=5, seed=3),
    'rkd': dict(type='RKDLoss'),
}


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(B, IN, generator=g)
    teacher = nn.functional.normalize(torch.randn(B, D, generator=g), dim=1)
    sample_idx = torch.randperm(N, generator=g)[:B]
    net = nn.Linear(IN, D)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return x, teacher, sample_idx, net


def _run(net, x, teacher, sample_idx, rows=slice(None)):
    router = LossRouter(LOSSES, NAMES, facts=lambda wanted: {})
    emb = nn.functional.normalize(net(x[rows]), dim=1)
    available = {
        's_pooled': emb,
        't_pooled': teacher[rows],
        'sample_idx': sample_idx[rows],
        'data_samples': [None] * len(emb),
    }
    losses = router(available)
    sum(losses.values()).backward()
    crd = router['crd']
    return {
        'loss_crd': losses['loss_crd'].detach(),
        'loss_rkd': losses['loss_rkd'].detach(),
        'memory_s': crd.memory_s.clone(),
        'memory_t': crd.memory_t.clone(),
        'grad': getattr(net, 'module', net).weight.grad.clone(),
    }


def _worker(rank, port, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.set_num_threads(1)
    x, teacher, sample_idx, net = _data()
    ddp = nn.parallel.DistributedDataParallel(net)
    result = _run(ddp, x, teacher, sample_idx, slice(rank * B // 2, (rank + 1) * B // 2))
    torch.save(result, os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


def test_crd_banks_and_rkd_relations_equal_the_concatenated_batch(tmp_path):
    x, teacher, sample_idx, net = _data()
    single = _run(net, x, teacher, sample_idx)
    # The banks moved (rows of this batch were written), so the comparison can fail.
    fresh = LossRouter(LOSSES, NAMES, facts=lambda wanted: {})['crd']
    assert not torch.allclose(fresh.memory_s[sample_idx], single['memory_s'][sample_idx])
    # fork: the workers inherit the imported modules.
    mp.start_processes(
        _worker, args=(free_port(), str(tmp_path)), nprocs=2, join=True, start_method='fork'
    )
    for rank in range(2):
        result = torch.load(tmp_path / f'rank{rank}.pt', weights_only=True)
        for key in ('loss_crd', 'loss_rkd', 'grad'):
            torch.testing.assert_close(result[key], single[key], rtol=1e-4, atol=1e-6, msg=key)
        for key in ('memory_s', 'memory_t'):
            torch.testing.assert_close(result[key], single[key], rtol=0, atol=1e-6, msg=key)


def test_one_half_alone_gives_other_relations():
    # Without the gather a rank would see 4 samples: RKD of a half differs from the whole batch's.
    x, teacher, sample_idx, net = _data()
    whole = _run(net, x, teacher, sample_idx)['loss_rkd']
    half = _run(_data()[3], x, teacher, sample_idx, slice(0, B // 2))['loss_rkd']
    assert not torch.allclose(whole, half)
