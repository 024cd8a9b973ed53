"""IntraClassContrastiveLoss against loops written from eqs. (4)-(7) and §3.3 of the paper."""

import itertools
import math
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import free_port

import mlkd.models  # noqa: F401
from mlkd.models.algorithms import LossRouter
from mlkd.models.losses import IntraClassContrastiveLoss, StateSizeError, class_margins

C, D = 3, 4


def _batch(seed, b=8, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(C, (b,), generator=g)
    return dict(
        anchor=torch.randn(b, D, generator=g) * scale,
        positive=torch.randn(b, D, generator=g) * scale,
        logits=torch.randn(b, C, generator=g) * 3,
        gt=torch.eye(C)[labels],
    )


def _margin(logits_row, y):
    p = torch.softmax(logits_row.double(), 0)
    return float(p[y] - max(p[i] for i in range(C) if i != y))


def _tuplet(anchor_i, positive_i, negatives, temperature):
    """-log(e^{s+} / (e^{s+} + Σ_k e^{s_k})) by its definition, in float64."""
    s_pos = math.exp(float(anchor_i.double() @ positive_i.double()) / temperature)
    s_neg = sum(math.exp(float(anchor_i.double() @ n.double()) / temperature) for n in negatives)
    return -math.log(s_pos / (s_pos + s_neg))


def _prepare(batch, normalize):
    a, p = batch['anchor'], batch['positive']
    if normalize:
        a, p = torch.nn.functional.normalize(a, dim=1), torch.nn.functional.normalize(p, dim=1)
    return a, p, batch['gt'].argmax(1)


def _batch_reference(batch, delta, temperature, normalize, negatives, reduction):
    a, p, y = _prepare(batch, normalize)
    margins = [_margin(batch['logits'][i], int(y[i])) for i in range(len(y))]
    total, count = 0.0, 0
    for i in range(len(y)):
        if margins[i] <= delta:
            continue  # eq. (7): 0 otherwise
        others = [
            a[k]
            for k in range(len(y))
            if k != i and y[k] == y[i] and (negatives == 'all' or margins[k] > delta)
        ]
        total += _tuplet(a[i], p[i], others, temperature)
        count += 1
    return total / (len(y) if reduction == 'batch' else max(count, 1))


@pytest.mark.parametrize(
    'normalize,temperature,negatives,reduction',
    list(itertools.product([False, True], [1.0, 0.5], ['all', 'qualifying'], ['batch', 'anchors'])),
)
def test_batch_mode_equals_the_formula(normalize, temperature, negatives, reduction):
    loss = IntraClassContrastiveLoss(
        num_classes=C,
        margin_threshold=0.1,
        temperature=temperature,
        normalize=normalize,
        negatives=negatives,
        reduction=reduction,
        queue_size=None,
    )
    for seed in range(3):
        batch = _batch(seed)
        expected = _batch_reference(batch, 0.1, temperature, normalize, negatives, reduction)
        assert float(loss(**batch)) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_margin_is_definition_1():
    logits = torch.tensor([[2.0, 1.0, 0.0], [0.0, 3.0, 3.0]])
    p = torch.softmax(logits, 1)
    torch.testing.assert_close(
        class_margins(logits, torch.tensor([0, 2])),
        torch.stack([p[0, 0] - p[0, 1], p[1, 2] - p[1, 1]]),
    )


class _PipelineReference:
    """§3.3 with Python lists: per-class queues of (anchor, positive) past the margin; when a
    class's queue plus its new anchors reach the size, every member is an anchor against the
    others, then the queue is cleared."""

    def __init__(self, size, delta, temperature, normalize, reduction):
        self.queues = {c: [] for c in range(C)}
        self.size, self.delta, self.temperature = size, delta, temperature
        self.normalize, self.reduction = normalize, reduction

    def step(self, batch):
        a, p, y = _prepare(batch, self.normalize)
        arriving = {c: [] for c in range(C)}
        for i in range(len(y)):
            if _margin(batch['logits'][i], int(y[i])) > self.delta:
                arriving[int(y[i])].append((a[i], p[i]))
        total, count = 0.0, 0
        for c in range(C):
            if arriving[c] and len(self.queues[c]) + len(arriving[c]) >= self.size:
                members = self.queues[c] + arriving[c]
                for i, (anchor_i, positive_i) in enumerate(members):
                    others = [m[0] for k, m in enumerate(members) if k != i]
                    total += _tuplet(anchor_i, positive_i, others, self.temperature)
                    count += 1
                self.queues[c] = []
            else:
                self.queues[c] += arriving[c]
        return total / (len(y) if self.reduction == 'batch' else max(count, 1))


@pytest.mark.parametrize('normalize,reduction', [(False, 'batch'), (True, 'anchors')])
def test_pipeline_equals_per_class_queues(normalize, reduction):
    loss = IntraClassContrastiveLoss(
        num_classes=C,
        margin_threshold=-0.2,
        normalize=normalize,
        reduction=reduction,
        queue_size=4,
        embed_dim=D,
        temperature=0.7,
    )
    reference = _PipelineReference(4, -0.2, 0.7, normalize, reduction)
    flushed = 0
    for seed in range(12):
        batch = _batch(seed, b=5)
        value = loss(**batch)
        expected = reference.step(batch)
        flushed += expected > 0
        assert float(value) == pytest.approx(expected, rel=1e-5, abs=1e-6), seed
        for c in range(C):
            assert int(loss.queue_count[c]) == len(reference.queues[c])
            if reference.queues[c]:
                cached = torch.stack([m[0] for m in reference.queues[c]])
                torch.testing.assert_close(loss.queue_anchor[c, : len(cached)], cached)
    assert flushed >= 3  # the test exercised several flushes


def test_pipeline_gradient_reaches_only_the_batch():
    loss = IntraClassContrastiveLoss(
        num_classes=C, margin_threshold=-1.0, queue_size=2, embed_dim=D
    )
    first = _batch(0, b=3)
    first['gt'] = torch.eye(C)[torch.tensor([0, 1, 2])]
    loss(**first)  # one anchor per class: all cached
    assert loss.queue_count.tolist() == [1, 1, 1]
    second = _batch(1, b=3)
    second['gt'] = torch.eye(C)[torch.tensor([0, 0, 1])]
    second['anchor'].requires_grad_(True)
    value = loss(**second)
    value.backward()
    assert loss.queue_count.tolist() == [0, 0, 1]  # classes 0 and 1 flushed, 2 kept
    assert torch.isfinite(second['anchor'].grad).all() and second['anchor'].grad.abs().sum() > 0


def test_edge_cases_are_finite_and_connected():
    loss = IntraClassContrastiveLoss(num_classes=C, margin_threshold=0.5, queue_size=None)
    batch = _batch(0)
    batch['anchor'].requires_grad_(True)
    batch['logits'] = torch.zeros_like(batch['logits'])  # no margin: nothing counts
    value = loss(**batch)
    value.backward()
    assert float(value) == 0 and batch['anchor'].grad is not None
    single = _batch(1, b=1)  # one sample: no negatives
    single['logits'] = torch.eye(C)[single['gt'].argmax(1)] * 10
    assert float(loss(**single)) == pytest.approx(0.0, abs=1e-6)
    same = _batch(2, b=4)  # identical embeddings
    same['gt'] = torch.eye(C)[torch.zeros(4, dtype=torch.long)]
    same['logits'] = same['gt'] * 10
    same['anchor'] = same['positive'] = torch.ones(4, D)
    assert float(loss(**same)) == pytest.approx(math.log(4.0), rel=1e-5)  # log(1 + m), m = 3
    same['anchor'] = same['positive'] = torch.ones(4, D) * 30  # e^3600: still finite
    assert float(loss(**same)) == pytest.approx(math.log(4.0), abs=1e-3)
    huge = _batch(3)
    huge['anchor'], huge['logits'] = huge['anchor'] * 1e3, huge['gt'] * 20
    assert torch.isfinite(loss(**huge))


@pytest.mark.parametrize(
    'kwargs,message',
    [
        (dict(margin_threshold=1.5), r'margin_threshold \(δ\) must be in \[-1, 1\].*1.5'),
        (dict(queue_size=1, embed_dim=D), 'queue_size must be >= 2.*got 1'),
        (dict(loss_weight=-0.01), 'loss_weight must be a finite number >= 0, got -0.01'),
        (dict(queue_size=4), 'needs the embedding size'),
        (dict(negatives='some'), 'negatives must be one of'),
    ],
)
def test_bad_settings_are_refused_naming_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        IntraClassContrastiveLoss(num_classes=C, **kwargs)


def test_multi_label_targets_and_mismatched_views_are_refused():
    loss = IntraClassContrastiveLoss(num_classes=C, queue_size=None)
    batch = _batch(0)
    batch['gt'] = batch['gt'].clone()
    batch['gt'][0] = 1.0
    with pytest.raises(ValueError, match='one-hot .*single-label'):
        loss(**batch)
    batch = _batch(0)
    batch['positive'] = batch['positive'][:, :2]
    with pytest.raises(ValueError, match=r'anchor and positive must be \[B, D\]'):
        loss(**batch)


def test_the_cache_travels_through_a_checkpoint_and_refuses_another_size():
    loss = IntraClassContrastiveLoss(
        num_classes=C, margin_threshold=-1.0, queue_size=8, embed_dim=D
    )
    loss(**_batch(0, b=5))
    state = loss.state_dict()
    fresh = IntraClassContrastiveLoss(
        num_classes=C, margin_threshold=-1.0, queue_size=8, embed_dim=D
    )
    fresh.load_state_dict(state)
    batch = _batch(1, b=5)
    torch.testing.assert_close(fresh(**batch), loss(**batch), rtol=0, atol=0)
    with pytest.raises(
        StateSizeError,
        match=r"'queue_anchor' has shape \(3, 8, 4\) \(3 classes\)"
        r', this run needs \(5, 8, 4\) \(5 classes\)',
    ):
        IntraClassContrastiveLoss(num_classes=5, queue_size=8, embed_dim=D).load_state_dict(state)


CONFIG = dict(
    type='IntraClassContrastiveLoss',
    num_classes=C,
    margin_threshold=-0.3,
    queue_size=4,
    embed_dim=D,
)
NAMES = {'anchor', 'positive', 'logits', 'gt', 'data_samples'}


def _run(rank=None, world=1):
    router = LossRouter({'intra': dict(CONFIG)}, NAMES, facts=lambda wanted: {'channels': {}})
    values = []
    for seed in range(6):
        batch = _batch(seed, b=6)
        if rank is not None:
            part = slice(rank * 6 // world, (rank + 1) * 6 // world)
            batch = {k: v[part] for k, v in batch.items()}
        batch['anchor'].requires_grad_(True)
        value = router({**batch, 'data_samples': [None] * len(batch['gt'])})['loss_intra']
        value.backward()
        values.append(value.detach())
    return {
        'values': torch.stack(values),
        **{k: v.clone() for k, v in router['intra'].state_dict().items()},
    }


def _worker(rank, port, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.save(_run(rank, 2), os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


def test_two_processes_see_the_queues_and_loss_of_one(tmp_path):
    single = _run()
    assert (single['values'] > 0).sum() >= 2
    mp.start_processes(
        _worker, args=(free_port(), str(tmp_path)), nprocs=2, join=True, start_method='fork'
    )
    for rank in range(2):
        result = torch.load(tmp_path / f'rank{rank}.pt', weights_only=True)
        for key, value in single.items():
            torch.testing.assert_close(result[key], value, rtol=1e-6, atol=1e-6, msg=key)
