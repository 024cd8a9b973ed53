"""Per-sample state of CL, ROLE, EN and SCL under 2-process CPU DDP (gloo, fork).

Each rank holds half of the batch. After two steps (the second revisits the samples, so it reads the
state written by the first), both ranks' state must equal each other and the state of one process
that saw the concatenated batches; so must the loss. EPR (a batch statistic) is checked for its
value too.
"""

import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import free_port
from torch import nn

from mlkd.models.algorithms import LossRouter

B, C, IN, N = 8, 4, 6, 12
SIZE = 2  # class maps 2x2, heatmaps 4x4


def _per_sample(loss_type: str, **kwargs) -> dict:
    """The config of a loss that keeps state per sample (N samples, C classes)."""
    return dict(type=loss_type, num_samples=N, num_classes=C, **kwargs)


#: name -> (loss config, the buffers of per-sample state compared across ranks)
CASES = {
    'cl': (_per_sample('ConsistencyLoss', momentum=0.6), ('ema', 'seen')),
    'role': (_per_sample('ROLELoss', expected_positives=1.5), ('label_logits', 'seen')),
    'scl': (
        _per_sample('SpatialConsistencyLoss', heatmap_size=4, momentum=0.6),
        ('heatmaps', 'known'),
    ),
    'epr': (dict(type='ExpectedPositivesLoss', expected_positives=1.5), ()),
    'en': (
        _per_sample('ExpectedNegativeLoss', expected_positives=1.5, momentum=0.6),
        ('scores', 'seen'),
    ),
}
NAMES = {'logits', 'class_maps', 'gt', 'sample_idx', 'crop_box', 'flip', 'data_samples'}


def _batches(step: int):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(B, IN, generator=g)
    gt = torch.full((B, C), -1.0)
    gt[torch.arange(B), torch.randint(C, (B,), generator=g)] = 1.0
    idx = torch.randperm(N, generator=g)[:B] if step == 0 else torch.arange(B).flip(0)
    corner = torch.rand(B, 2, generator=g) * 0.5
    side = 0.5 + torch.rand(B, 1, generator=g) * 0.5
    box = torch.cat([corner, (corner + side).clamp(max=1.0)], dim=1)
    flip = torch.rand(B, generator=g) < 0.5
    return x, gt, idx, box, flip


def _net():
    g = torch.Generator().manual_seed(7)
    net = nn.Linear(IN, C * SIZE * SIZE)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return net


def _step(router, net, x, gt, idx, box, flip):
    maps = net(x).view(-1, C, SIZE, SIZE)
    available = dict(
        class_maps=maps,
        logits=maps.mean((2, 3)),
        gt=gt,
        sample_idx=idx,
        crop_box=box,
        flip=flip,
        data_samples=[None] * len(x),
    )
    (loss,) = router(available).values()
    return loss


def _router(name):
    return LossRouter({name: CASES[name][0]}, NAMES, facts=lambda wanted: {})


def _state(router, name):
    loss = router[name]
    state = {key: getattr(loss, key).detach().clone() for key in CASES[name][1]}
    if name == 'role':  # the estimates' gradient: that of the global batch
        state['label_logits_grad'] = loss.label_logits.grad.clone()
    return state


def _worker(rank, port, name, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.set_num_threads(1)
    router, net = _router(name), _net()
    ddp = nn.parallel.DistributedDataParallel(net)
    half = slice(rank * B // 2, (rank + 1) * B // 2)
    losses = []
    for step in range(2):
        x, gt, idx, box, flip = _batches(step)
        loss = _step(router, ddp, x[half], gt[half], idx[half], box[half], flip[half])
        loss.backward()
        losses.append(loss.detach())
    torch.save(
        {'losses': torch.stack(losses), **_state(router, name)},
        os.path.join(out_dir, f'rank{rank}.pt'),
    )
    dist.destroy_process_group()


@pytest.mark.parametrize('name', sorted(CASES))
def test_two_ranks_keep_the_single_process_state(name, tmp_path):
    router, net = _router(name), _net()
    assert router.gathers[name]
    losses = []
    for step in range(2):
        loss = _step(router, net, *_batches(step))
        loss.backward()
        losses.append(loss.detach())
    single = {'losses': torch.stack(losses), **_state(router, name)}
    assert single['losses'][1] != 0  # the second step reads the state
    mp.start_processes(
        _worker, args=(free_port(), name, str(tmp_path)), nprocs=2, join=True, start_method='fork'
    )
    ranks = [torch.load(tmp_path / f'rank{r}.pt', weights_only=True) for r in range(2)]
    for result in ranks:
        assert result.keys() == single.keys()
        for key, value in single.items():
            torch.testing.assert_close(result[key], value, rtol=1e-5, atol=1e-6, msg=key)
