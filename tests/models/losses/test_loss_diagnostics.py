"""LossDiagnosticsHook: values match an independent computation; training is unchanged by it."""

import copy
import json
import os.path as osp

import pytest
import torch
from conftest import MULTIDIGITS_L2D, assert_same_state, small_run_cfg
from mmengine.hooks import Hook
from torch import nn

from mlkd.engine import build_runner
from mlkd.engine.hooks.loss_diagnostics import (
    LossDiagnosticsHook,
    default_module_path,
    last_parameterised_layer,
    loss_term_diagnostics,
    preserved_state,
)


def _l2d_cfg(work_dir, diagnostics: bool, interval: int = 1):
    # A random teacher is enough: the hook only needs every kind of term (task, MLD, LED dict).
    cfg = small_run_cfg(
        MULTIDIGITS_L2D,
        work_dir,
        epochs=1,
        train_samples=64,
        val_samples=32,
        batch_size=16,
        augment=True,
    )
    cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    cfg.randomness = dict(seed=3, deterministic=False)
    if diagnostics:
        cfg.custom_hooks = cfg.custom_hooks + [dict(type='LossDiagnosticsHook', interval=interval)]
    return cfg


def test_default_module_is_the_last_parameterised_layer_of_the_student_backbone():
    backbone = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Conv2d(4, 5, 1), nn.BatchNorm2d(5)
    )
    assert last_parameterised_layer(backbone) == '3'
    net = nn.Module()
    net.backbone = backbone
    distiller = nn.Module()
    distiller.student = net
    assert default_module_path(distiller) == 'student.backbone.3'
    assert default_module_path(net) == 'backbone.3'
    with pytest.raises(ValueError, match='no submodule with trainable parameters'):
        last_parameterised_layer(nn.Sequential(nn.ReLU(), nn.BatchNorm1d(3, affine=False)))


def test_term_statistics_equal_separate_backward_passes():
    """Independent reference: each term backpropagated alone into ``.grad`` of a copy."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))
    x, target = torch.randn(7, 5), torch.randn(7, 3)

    def losses(model):
        out = model(x)
        return {
            'loss_cls': ((out - target) ** 2).sum(),
            'loss_kd': 3.0 * out.pow(2).mean(),
            'loss_le_cd': out.sum() * 0.0 + out[:, 0].abs().sum(),
            'accuracy': torch.tensor(0.5),
        }

    params = list(net[0].parameters())
    stats = loss_term_diagnostics(losses(net), params)
    assert set(stats) == {'loss_cls', 'loss_kd', 'loss_le_cd'}
    reference = {}
    for key in stats:
        twin = copy.deepcopy(net)
        losses(twin)[key].backward()
        grad = torch.cat([p.grad.reshape(-1) for p in twin[0].parameters()]).double()
        reference[key] = (float(losses(twin)[key].detach()), grad)
    task_value, task_grad = reference['loss_cls']
    for key, (value, grad) in reference.items():
        row = stats[key]
        assert row['value'] == pytest.approx(value, rel=1e-6)
        assert row['grad_norm'] == pytest.approx(float(grad.norm()), rel=1e-6)
        assert row['value_ratio'] == pytest.approx(value / task_value, rel=1e-6)
        assert row['grad_ratio'] == pytest.approx(float(grad.norm() / task_grad.norm()), rel=1e-6)
        cos = float(grad @ task_grad / (grad.norm() * task_grad.norm()))
        assert row['cos'] == pytest.approx(cos, rel=1e-6, abs=1e-9)
    assert stats['loss_cls']['cos'] == pytest.approx(1.0)
    # Gradients never reach .grad: the training step's accumulation is untouched.
    assert all(p.grad is None for p in net.parameters())


def test_preserved_state_restores_buffers_and_rng():
    bn = nn.BatchNorm1d(3).train()
    before = copy.deepcopy(bn.state_dict())
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    with preserved_state(bn):
        bn(torch.randn(8, 3) * 4 + 2)
        torch.rand(10)
    assert_same_state(bn, type('R', (), {'state_dict': lambda self: before})(), atol=0)
    assert torch.equal(torch.rand(2), expected)


def test_preserved_state_restores_the_host_memory_state_of_stateful_losses():
    """SCL keeps its heat maps in host memory (a plain attribute, not a buffer): the diagnostic
    pass must not leave them updated for the training step."""
    from mlkd.models.losses import StatefulLoss

    class Store(StatefulLoss):
        def __init__(self):
            super().__init__()
            self.register_state('maps', torch.zeros(4, 2), keyed_by='sample', host=True)

    loss = Store()
    with preserved_state(nn.Sequential(loss)):
        loss.maps[1] = 7.0  # updated in place, as a stateful loss's step does
    assert torch.equal(loss.maps, torch.zeros(4, 2))


def test_hook_values_match_the_training_step_and_training_is_bit_identical(tmp_path):
    off = build_runner(_l2d_cfg(str(tmp_path / 'off'), diagnostics=False))
    off.train()
    on_cfg = _l2d_cfg(str(tmp_path / 'on'), diagnostics=True)
    on = build_runner(on_cfg)

    # Independent check of the first diagnostic: the model before any step, the first batch, the
    # same RNG state as the hook's pass, each term backpropagated alone into .grad.
    seen = {}

    class Recorder(Hook):
        priority = 'HIGH'  # before the diagnostics hook (LOW)

        def before_train_iter(self, runner, batch_idx, data_batch=None):
            if runner.iter == 0:
                seen['model'] = copy.deepcopy(runner.model)
                seen['batch'] = copy.deepcopy(data_batch)
                seen['rng'] = torch.get_rng_state()

    on.register_hook(Recorder())
    on.train()
    assert_same_state(on.model, off.model, atol=0)
    scalars = osp.join(on.log_dir, 'vis_data', 'scalars.json')
    rows = [json.loads(line) for line in open(scalars)]
    diag_rows = [r for r in rows if 'diag/loss_led_id/grad_ratio' in r]
    # One row per iteration (interval 1), at the iteration's step.
    assert [r['step'] for r in diag_rows] == list(range(1, on.max_iters + 1))
    first = diag_rows[0]
    assert first['diag/loss_cls/grad_norm'] > 0 and first['diag/loss_led_cd/grad_norm'] > 0

    model, path = seen['model'], 'student.backbone.layer4.1.bn2'
    assert default_module_path(model) == path
    for key in ('loss_cls', 'loss_mld', 'loss_led_cd', 'loss_led_id'):
        twin = copy.deepcopy(model)
        torch.set_rng_state(seen['rng'])
        data = twin.data_preprocessor(copy.deepcopy(seen['batch']), True)
        losses = twin(**data, mode='loss')
        losses[key].backward()
        grad = torch.cat([p.grad.reshape(-1) for p in twin.get_submodule(path).parameters()])
        assert first[f'diag/{key}/value'] == pytest.approx(float(losses[key]), rel=1e-5)
        assert first[f'diag/{key}/grad_norm'] == pytest.approx(float(grad.norm()), rel=1e-4)
    assert first['diag/loss_led_id/grad_ratio'] == pytest.approx(
        first['diag/loss_led_id/grad_norm'] / first['diag/loss_cls/grad_norm'], rel=1e-6
    )


def test_bad_module_path_is_named(tmp_path):
    cfg = _l2d_cfg(str(tmp_path), diagnostics=False)
    cfg.custom_hooks = cfg.custom_hooks + [
        dict(type='LossDiagnosticsHook', interval=1, module='student.backbone.nope')
    ]
    with pytest.raises(ValueError, match='student.backbone.nope'):
        build_runner(cfg).train()
    with pytest.raises(ValueError, match='interval'):
        LossDiagnosticsHook(interval=0)
