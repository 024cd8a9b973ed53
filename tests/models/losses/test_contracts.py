"""The three loss contracts: TaskLoss, RoutedLoss, StatefulLoss (mlkd/models/losses/base.py)."""

import importlib
import inspect
import os
import pydoc
import re

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import free_port
from loss_cases import CASES, build
from mmengine.runner.checkpoint import load_state_dict
from torch import nn

import mlkd.models  # noqa: F401
from mlkd.models.algorithms import LossRouter
from mlkd.models.losses import (
    ReferenceWeighted,
    RoutedLoss,
    StatefulLoss,
    StateSizeError,
    TaskLoss,
)
from mlkd.registry import MODELS

STATEFUL = {
    'ExpectedNegativeLoss',
    'IntraClassContrastiveLoss',
    'ROLELoss',
    'CRDLoss',
    'ConsistencyLoss',
    'SpatialConsistencyLoss',
    'MultiOrderDependencyLoss',
}


def _registered_losses():
    return {
        name: cls
        for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mlkd.models.losses')
    }


def test_every_registered_loss_has_exactly_one_contract():
    for name, cls in _registered_losses().items():
        assert issubclass(cls, TaskLoss) != issubclass(cls, RoutedLoss), name
    stateful = {n for n, cls in _registered_losses().items() if issubclass(cls, StatefulLoss)}
    assert STATEFUL <= stateful
    for name in stateful:  # every stateful loss sees the global batch
        assert _registered_losses()[name].compares_samples, name


@pytest.mark.parametrize('weight', [-1.0, float('nan'), float('inf')])
def test_a_bad_loss_weight_is_refused_naming_it(weight):
    with pytest.raises(ValueError, match=f'MultiLabelKDLoss: loss_weight .* got {weight}'):
        MODELS.build(dict(type='MultiLabelKDLoss', loss_weight=weight))


@pytest.mark.parametrize('name', sorted(CASES))
def test_the_contract_applies_the_weight(name):
    if name == 'UnobservedAsNegative':
        pytest.skip('a wrapper: the wrapped loss carries the weight')
    args, named = CASES[name][1](0)
    once, twice = build(name).train(), build(name, loss_weight=2.5).train()
    a, b = once(*args, **named), twice(*args, **named)
    a = a if isinstance(a, dict) else {'': a}
    b = b if isinstance(b, dict) else {'': b}
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(b[key], 2.5 * a[key], msg=f'{name} {key}')


def test_declared_terms_are_checked():
    class Declares(RoutedLoss):
        terms = ('a', 'b')

        def compute(self, s_logits):
            return {'a': s_logits.sum()}

    with pytest.raises(RuntimeError, match=r"returned the terms \['a'\].*terms=\('a', 'b'\)"):
        Declares()(torch.ones(2, 3))

    class Forgets(RoutedLoss):
        terms = ('a',)

        def compute(self, s_logits):
            return s_logits.sum()

    with pytest.raises(RuntimeError, match='single tensor'):
        Forgets()(torch.ones(2, 3))


def test_weight_reference_is_a_policy_a_loss_opts_in_to():
    class Literal(RoutedLoss):
        def compute(self, s_logits):
            return s_logits.sum()

    with pytest.raises(TypeError, match='weight_reference'):
        Literal(weight_reference=dict(batch_size=64, num_classes=80))
    with pytest.raises(TypeError, match='NoExponents: a ReferenceWeighted loss declares'):

        class NoExponents(ReferenceWeighted, RoutedLoss):
            def compute(self, s_logits):
                return s_logits.sum()

    mld = MODELS.build(
        dict(
            type='MultiLabelLogitDistillLoss', weight_reference=dict(batch_size=64, num_classes=80)
        )
    )
    assert mld.reference_scale(64, 10) == pytest.approx(1.0)  # (a, b) = (0, 1): unchanged


def test_repr_shows_the_declared_fields_subclass_first():
    """Each class lists its own ``repr_fields``; a subclass's come before its bases' (the
    contract's ``reduction`` and ``loss_weight`` last), values as ``repr`` writes them."""
    hill = MODELS.build(dict(type='HillLoss', hill_lambda=2.0, loss_weight=0.5))
    assert repr(hill) == (
        "HillLoss(hill_lambda=2.0, margin=1.0, gamma=2.0, reduction='sum', loss_weight=0.5)"
    )

    class Probe(RoutedLoss):
        repr_fields = ('mode', 'scale')

        def __init__(self):
            super().__init__(loss_weight=2.0)
            self.mode, self.scale = 'a', (1, 2)

        def compute(self, s_logits):
            return s_logits.sum()

    assert repr(Probe()) == "Probe(mode='a', scale=(1, 2), loss_weight=2.0)"


def test_an_undocumented_compute_of_named_inputs_is_documented_from_the_table():
    class Standard(RoutedLoss):
        def compute(self, t_logits, gt):
            return t_logits.sum() * gt.sum()

    class Own(RoutedLoss):
        def compute(self, s_logits, s_feats):
            return s_logits.sum() * s_feats.sum()

    expected = [
        'Args:',
        't_logits: ``[B, C]`` teacher logits.',
        'gt: ``[B, C]`` targets, 1 positive, 0 negative, -1 ignored.',
    ]
    doc = pydoc.render_doc(Standard(), renderer=pydoc.plaintext)
    lines = [row.strip(' |') for row in doc.splitlines()]
    forward = lines.index(next(row for row in lines if row.startswith('forward(self')))
    assert lines[forward + 3 : forward + 6] == expected
    assert inspect.getdoc(Standard.compute).splitlines() == expected
    assert Own.compute.__doc__ is None  # s_feats is not in the table: nothing half-written
    assert 'Args:' not in Own.forward.__doc__


def test_compute_runs_in_fp32_with_autocast_off():
    seen = []

    class Probe(RoutedLoss):
        def compute(self, s_logits, t_logits):
            seen.append(
                (s_logits.dtype, torch.is_autocast_enabled('cpu'), (s_logits @ t_logits.T).dtype)
            )
            return (s_logits - t_logits).pow(2).mean()

    low = torch.randn(4, 3).bfloat16()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        value = Probe()(low, low)
    assert seen == [(torch.float32, False, torch.float32)] and value.dtype == torch.float32


def test_task_loss_inputs_are_forward_plus_computes_extras():
    from mlkd.models.algorithms.routing import forward_arguments

    assert forward_arguments(MODELS.get('ROLELoss')) == (
        ['logits', 'gt', 'sample_idx'],
        ['avg_factor', 'reduction_override'],
    )
    assert forward_arguments(MODELS.get('HillLoss')) == (
        ['logits', 'gt'],
        ['avg_factor', 'reduction_override'],
    )
    assert forward_arguments(MODELS.get('MultiLabelKDLoss'))[0] == ['s_logits', 't_logits']
    assert forward_arguments(nn.MSELoss) == (['input', 'target'], [])  # foreign modules: forward


@pytest.mark.parametrize('name', sorted(CASES))
def test_signature_and_help_name_the_inputs(name):
    """inspect.signature(loss) and help(loss) show the inputs compute reads (a task loss: the
    heads' call plus compute's further inputs), not (*args, **kwargs)."""
    loss = build(name)
    compute = [
        name
        for name, p in inspect.signature(type(loss).compute).parameters.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ][1:]
    if isinstance(loss, TaskLoss):  # compute(logits, gt, reduction, *further)
        expected = ['logits', 'gt', 'avg_factor', 'reduction_override'] + compute[3:]
    else:
        expected = compute
    shown = inspect.signature(loss)
    assert list(shown.parameters) == expected, name
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in shown.parameters.values())
    doc = pydoc.render_doc(loss, renderer=pydoc.plaintext)
    line = next(row for row in doc.splitlines() if row.strip(' |').startswith('forward(self'))
    assert re.findall(r'[(,] (\w+)(?=[:=,)])', line) == expected, line
    assert inspect.signature(type(loss)) == inspect.signature(type(loss).__init__).replace(
        parameters=list(inspect.signature(type(loss).__init__).parameters.values())[1:]
    )  # the class still shows its constructor


def test_a_missing_or_unknown_input_names_it():
    kd = MODELS.build(dict(type='MultiLabelKDLoss'))
    with pytest.raises(TypeError, match="missing a required argument: 't_logits'"):
        kd(torch.zeros(2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'teacher'"):
        kd(torch.zeros(2, 3), torch.zeros(2, 3), teacher=torch.zeros(2, 3))


def test_task_loss_refuses_a_reduction_it_does_not_offer():
    with pytest.raises(
        ValueError,
        match=r'TwoWayMultiLabelLoss: reduction must be one of '
        r"\('mean',\), got 'sum'",
    ):
        MODELS.build(dict(type='TwoWayMultiLabelLoss', reduction='sum'))
    loss = MODELS.build(dict(type='HillLoss'))
    with pytest.raises(ValueError, match='reduction must be one of'):
        loss(torch.zeros(2, 3), torch.zeros(2, 3), reduction_override='batchmean')


# ----------------------------------------------------------------------------- StatefulLoss
@MODELS.register_module(force=True)
class ToyRunningMeanLoss(RoutedLoss, StatefulLoss):
    """Distance of each sample's probabilities to their running mean over visits (a toy).

    State: ``mean [N, C]`` and ``visits [N]`` on the device, ``total [N]`` (Σ of every visit's
    probabilities) in host memory.
    """

    def __init__(self, num_samples: int, num_classes: int, loss_weight: float = 1.0) -> None:
        super().__init__(loss_weight)
        self.num_samples = num_samples
        self.register_state('mean', torch.zeros(num_samples, num_classes), 'sample')
        self.register_state('visits', torch.zeros(num_samples), 'sample')
        self.register_state(
            'total', torch.zeros(num_samples, dtype=torch.float64), 'sample', host=True
        )

    def compute(self, logits, sample_idx):
        self.check_sample_idx(sample_idx, self.num_samples)
        probs = torch.sigmoid(logits)
        seen = (self.visits[sample_idx] > 0)[:, None]
        loss = ((probs - self.mean[sample_idx]).pow(2) * seen).sum() / probs.numel()
        with torch.no_grad():
            count = self.visits[sample_idx][:, None] + 1
            self.mean[sample_idx] += (probs - self.mean[sample_idx]) / count
            self.visits[sample_idx] += 1
            self.total.index_add_(0, sample_idx.cpu(), probs.sum(1).double().cpu())
        return loss


def _toy(n=10, c=3):
    return ToyRunningMeanLoss(num_samples=n, num_classes=c)


def test_state_travels_in_the_state_dict_and_host_state_stays_on_the_host():
    loss = _toy()
    loss(torch.randn(4, 3), torch.tensor([1, 5, 7, 2]))
    assert loss.state_names == dict(mean='sample', visits='sample', total='sample')
    assert 'total' not in dict(loss.named_buffers())
    loss.half()
    assert loss.total.dtype == torch.float64 and loss.mean.dtype == torch.float16
    state = loss.state_dict()
    assert {'mean', 'visits', 'total'} <= set(state) and state['total'][7] > 0
    fresh = _toy().half()
    fresh.load_state_dict(state)
    for key in ('mean', 'visits', 'total'):
        assert torch.equal(getattr(fresh, key), getattr(loss, key)), key


@pytest.mark.parametrize('strict', [True, False])
def test_state_sized_for_another_dataset_is_refused_naming_both_sizes(strict):
    state = _toy(n=10).state_dict()
    target = _toy(n=12)
    before = target.mean.clone()
    with pytest.raises(
        StateSizeError,
        match=r"'mean' has shape \(10, 3\) \(10 samples\), this "
        r'run needs \(12, 3\) \(12 samples\)',
    ):
        if strict:
            target.load_state_dict(state)
        else:  # mmengine's non-strict loader only logs mismatches; the state still refuses
            load_state_dict(target, state, strict=False)
    assert torch.equal(target.mean, before)  # nothing resized, nothing half loaded


def test_state_index_out_of_range_is_refused():
    with pytest.raises(
        IndexError,
        match=r'sample_idx in \[0, 10\] is outside the state of '
        'num_samples=10',
    ):
        _toy()(torch.randn(2, 3), torch.tensor([0, 10]))


def _toy_router():
    return LossRouter(
        {'toy': dict(type='ToyRunningMeanLoss', num_samples=12, num_classes=3)},
        {'logits', 'sample_idx', 'data_samples'},
        facts=lambda wanted: {},
    )


def _toy_batches(step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(8, 3, generator=g), torch.randperm(12, generator=g)[:8]


def _toy_steps(router, rank=None):
    for step in range(3):
        logits, idx = _toy_batches(step)
        if rank is not None:
            logits, idx = logits[rank * 4 : (rank + 1) * 4], idx[rank * 4 : (rank + 1) * 4]
        router(dict(logits=logits, sample_idx=idx, data_samples=[None] * len(idx)))
    return {k: v.clone() for k, v in router['toy'].state_dict().items()}


def _toy_worker(rank, port, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.save(_toy_steps(_toy_router(), rank), os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


def test_two_ranks_keep_the_state_of_one_process(tmp_path):
    router = _toy_router()
    assert router.gathers['toy']  # stateful: the global batch by default
    single = _toy_steps(router)
    assert single['visits'].sum() == 24
    mp.start_processes(
        _toy_worker, args=(free_port(), str(tmp_path)), nprocs=2, join=True, start_method='fork'
    )
    for rank in range(2):
        state = torch.load(tmp_path / f'rank{rank}.pt', weights_only=True)
        assert state.keys() == single.keys()
        for key, value in single.items():
            torch.testing.assert_close(state[key], value, rtol=0, atol=1e-7, msg=key)


def test_resume_continues_the_state_bit_for_bit(tmp_path):
    from conftest import assert_same_run_state, config_path, small_run_cfg, whole_and_resumed_runs

    def make_cfg(work_dir, epochs):
        cfg = small_run_cfg(
            config_path('spml', 'an_multidigits.py'),
            work_dir,
            epochs=epochs,
            train_samples=64,
            val_samples=32,
            num_workers=None,
        )
        cfg.model.losses['toy'] = dict(type='ToyRunningMeanLoss', num_samples=64)
        return cfg

    whole, resumed = whole_and_resumed_runs(make_cfg, tmp_path)
    assert_same_run_state(resumed, whole)
    toy = whole.model.losses['toy']
    assert toy.visits.sum() == 2 * 64 and float(toy.total.min()) > 0
    assert torch.equal(resumed.model.losses['toy'].total, toy.total)


# ----------------------------------------------------------------------------- no aliases
@pytest.mark.parametrize(
    'old', ['mlkd.models.losses.kd', 'mlkd.models.losses.bce', 'mlkd.models.losses._deprecated']
)
def test_the_flat_module_paths_of_before_the_families_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_the_old_names_are_gone():
    import mlkd.models.losses as losses

    for name in ('BaseDistillLoss', 'MultiLabelTaskLoss'):
        assert not hasattr(losses, name), name
    with pytest.raises(
        ValueError, match=r"inputs \['cls_score'\] are not arguments of BinaryCrossEntropySumLoss"
    ):
        LossRouter(
            {'bce': dict(type='BinaryCrossEntropySumLoss', inputs=dict(cls_score='s_logits'))},
            {'s_logits', 'gt'},
            facts=lambda wanted: {},
        )
