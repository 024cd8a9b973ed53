"""Losses that compare samples see the global batch under 2-process CPU DDP.

Each rank holds half of a batch; a linear layer (wrapped in DDP) maps its inputs to the student
tensors. With the router's gather, the loss every rank computes must equal the single-process loss
on the concatenated batch, and DDP's averaged gradient must equal the single-process gradient.
Without the gather (``gather=False``) the value is a per-rank one, which the test also checks, so
the comparison can fail.
"""

import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import free_port
from torch import nn

from mlkd.models.algorithms import LossRouter

B, C, D, IN = 8, 5, 3, 6
CASES = {
    'ndd': (dict(type='NegativeDiscrepancyLoss', form='exact', loss_weight=10.0), 'logits'),
    'instance_aware': (dict(type='InstanceAwareDistillLoss', loss_weight=1000.0), 'label_emb'),
}


def _data(kind: str, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    gt = (torch.rand(B, C, generator=g) < 0.4).float()
    gt[0, 0], gt[1, 1] = -1.0, -1.0  # ignored entries take part too
    if kind == 'logits':
        x, teacher = torch.randn(B, IN, generator=g), torch.randn(B, C, generator=g) * 2
    else:
        x, teacher = torch.randn(B, C, IN, generator=g), torch.randn(B, C, D, generator=g)
    net = nn.Linear(IN, C if kind == 'logits' else D)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return x, teacher, gt, net


def _router(name: str, gather: bool | None):
    cfg, kind = CASES[name]
    cfg = dict(cfg) if gather is None else dict(cfg, gather=gather)
    names = {'logits': ('s_logits', 't_logits'), 'label_emb': ('s_label_emb', 't_label_emb')}[kind]
    return (
        LossRouter({name: cfg}, {*names, 'gt', 'data_samples'}, facts=lambda wanted: {}),
        names,
        kind,
    )


def _step(router, names, net, x, teacher, gt):
    available = {names[0]: net(x), names[1]: teacher, 'gt': gt, 'data_samples': [None] * len(x)}
    (loss,) = router(available).values()
    return loss


def _worker(rank, port, name, gather, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.set_num_threads(1)
    router, names, kind = _router(name, gather)
    x, teacher, gt, net = _data(kind)
    ddp = nn.parallel.DistributedDataParallel(net)
    half = slice(rank * B // 2, (rank + 1) * B // 2)
    loss = _step(router, names, ddp, x[half], teacher[half], gt[half])
    loss.backward()
    torch.save(
        {'loss': loss.detach(), 'grad': net.weight.grad.clone()},
        os.path.join(out_dir, f'rank{rank}.pt'),
    )
    dist.destroy_process_group()


def _two_process_run(name, gather, tmp_path):
    # fork: the workers inherit the imported modules (spawn would re-import torch and mlkd).
    mp.start_processes(
        _worker,
        args=(free_port(), name, gather, str(tmp_path)),
        nprocs=2,
        join=True,
        start_method='fork',
    )
    return [torch.load(tmp_path / f'rank{r}.pt', weights_only=True) for r in range(2)]


@pytest.mark.parametrize('name', sorted(CASES))
def test_two_process_loss_and_gradient_equal_the_concatenated_batch(name, tmp_path):
    router, names, kind = _router(name, None)
    assert router.gathers[name]  # on by default: the loss compares samples
    x, teacher, gt, net = _data(kind)
    single = _step(router, names, net, x, teacher, gt)
    single.backward()
    ranks = _two_process_run(name, None, tmp_path)
    for result in ranks:
        torch.testing.assert_close(result['loss'], single.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(result['grad'], net.weight.grad, rtol=1e-4, atol=1e-6)


def test_without_the_gather_each_rank_sees_only_its_half(tmp_path):
    router, names, kind = _router('ndd', False)
    x, teacher, gt, net = _data(kind)
    halves = [
        _step(router, names, net, x[s], teacher[s], gt[s]).detach()
        for s in (slice(0, B // 2), slice(B // 2, B))
    ]
    whole = _step(router, names, net, x, teacher, gt).detach()
    ranks = _two_process_run('ndd', False, tmp_path)
    for result, half in zip(ranks, halves):
        torch.testing.assert_close(result['loss'], half)
        assert not torch.allclose(result['loss'], whole)


#: Losses whose inputs are not gathered but whose value scales with the batch: a summed task loss
#: the router gathers anyway, a summed routed loss, and a weight given for a reference batch
#: (MLD: its factor must use the whole batch, as the task loss's sum does).
SCALED = {
    'bce_sum_gathered': dict(
        type='BinaryCrossEntropySumLoss', gather=True, inputs=dict(logits='s_logits')
    ),
    'kd_sum': dict(type='MultiLabelKDLoss', reduction='sum', loss_weight=3.0),
    'mld_reference': dict(
        type='MultiLabelLogitDistillLoss', weight_reference=dict(batch_size=64, num_classes=80)
    ),
}


def _scaled_router(name: str):
    cfg = dict(SCALED[name])
    return LossRouter({name: cfg}, {'s_logits', 't_logits', 'gt', 'data_samples'}, lambda w: {})


def _scaled_worker(rank, port, name, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.set_num_threads(1)
    x, teacher, gt, net = _data('logits')
    ddp = nn.parallel.DistributedDataParallel(net)
    half = slice(rank * B // 2, (rank + 1) * B // 2)
    loss = _step(
        _scaled_router(name), ('s_logits', 't_logits'), ddp, x[half], teacher[half], gt[half]
    )
    loss.backward()
    torch.save({'grad': net.weight.grad.clone()}, os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


@pytest.mark.parametrize('name', sorted(SCALED))
def test_a_loss_summed_or_weighted_by_batch_has_the_one_process_gradient_under_ddp(name, tmp_path):
    """DDP averages the ranks' gradients: a summed loss over one rank's samples needs the factor
    W, one over the gathered batch must not get it, and a reference weight is for the whole
    batch. (Before: x2, x0.5 and x0.5 of the one-process gradient with 2 processes.)"""
    x, teacher, gt, net = _data('logits')
    _step(_scaled_router(name), ('s_logits', 't_logits'), net, x, teacher, gt).backward()
    mp.start_processes(
        _scaled_worker,
        args=(free_port(), name, str(tmp_path)),
        nprocs=2,
        join=True,
        start_method='fork',
    )
    for rank in range(2):
        grad = torch.load(tmp_path / f'rank{rank}.pt', weights_only=True)['grad']
        torch.testing.assert_close(grad, net.weight.grad, rtol=1e-4, atol=1e-6)


def test_a_stateful_loss_cannot_be_left_ungathered():
    with pytest.raises(
        ValueError, match='gather=False, but ConsistencyLoss keeps per-sample state'
    ):
        LossRouter(
            {'cl': dict(type='ConsistencyLoss', num_samples=8, num_classes=C, gather=False)},
            {'s_logits', 'sample_idx', 'gt', 'data_samples'},
            lambda w: {},
        )
