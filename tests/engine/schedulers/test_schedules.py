"""The one-cycle recipe reproduces torch's OneCycleLR (lr and Adam beta1) over a whole cycle."""

import pytest
import torch
from conftest import config_path
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

from mlkd.registry import PARAM_SCHEDULERS


@pytest.mark.parametrize('total_steps,pct_start', [(100, 0.2), (37, 0.3)])
def test_onecycle_matches_torch_over_a_whole_cycle(total_steps, pct_start):
    model = torch.nn.Linear(3, 2)
    reference_opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.95, 0.999))
    reference = torch.optim.lr_scheduler.OneCycleLR(
        reference_opt, max_lr=1e-4, total_steps=total_steps, pct_start=pct_start
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.95, 0.999))
    with DefaultScope.overwrite_default_scope('mlkd'):
        lr_sched = PARAM_SCHEDULERS.build(
            dict(
                type='OneCycleLR',
                optimizer=opt,
                eta_max=1e-4,
                total_steps=total_steps,
                pct_start=pct_start,
                by_epoch=False,
            )
        )
        beta_sched = PARAM_SCHEDULERS.build(
            dict(
                type='OneCycleMomentum',
                optimizer=opt,
                total_steps=total_steps,
                pct_start=pct_start,
                by_epoch=False,
            )
        )
    for step in range(total_steps):
        expected = reference_opt.param_groups[0]
        got = opt.param_groups[0]
        assert got['lr'] == pytest.approx(expected['lr'], rel=1e-12, abs=1e-18), step
        assert got['betas'][0] == pytest.approx(expected['betas'][0], rel=1e-12), step
        assert got['betas'][1] == expected['betas'][1]
        reference_opt.step()
        opt.step()
        if step < total_steps - 1:
            reference.step()
            lr_sched.step()
            beta_sched.step()
    # The cycle ends where torch's does: beta1 back at its maximum, lr at max / (25 * 1e4).
    assert opt.param_groups[0]['betas'][0] == pytest.approx(0.95)
    assert opt.param_groups[0]['lr'] == pytest.approx(1e-4 / 25 / 1e4)


def test_stepping_past_the_cycle_fails_loudly():
    opt = torch.optim.Adam(torch.nn.Linear(2, 2).parameters(), lr=1e-3)
    with DefaultScope.overwrite_default_scope('mlkd'):
        sched = PARAM_SCHEDULERS.build(
            dict(type='OneCycleMomentum', optimizer=opt, total_steps=3, by_epoch=False)
        )
    sched.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match='total_steps'):
        sched.step()


def test_recipe_config_excludes_biases_and_norms_from_weight_decay():
    cfg = Config.fromfile(config_path('_base_', 'schedules', 'onecycle_80e.py'))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    with DefaultScope.overwrite_default_scope('mlkd'):
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    decay = {tuple(g['params'][0].shape): g['weight_decay'] for g in wrapper.param_groups}
    assert decay[(4, 3, 3, 3)] == pytest.approx(1e-4)  # conv weight
    assert decay[(4,)] == 0.0  # conv bias, BN weight and bias
    assert wrapper.param_groups[0]['betas'] == (0.95, 0.999)


def test_teacher_schedule_stops_at_30_of_80():
    cfg = Config.fromfile(config_path('_base_', 'schedules', 'onecycle_80e_stop30.py'))
    assert cfg.train_cfg.max_epochs == 30
    assert all(s['total_steps'] == 80 for s in cfg.param_scheduler)


@pytest.mark.parametrize(
    'name, base_lr, base_batch', [('sgd_90e.py', 0.05, 128), ('sgd_90e_teacher.py', 0.5, 256)]
)
def test_intra_class_paper_recipes_step_at_30_and_60_of_90(name, base_lr, base_batch):
    """Student / teacher recipe of the intra-class contrastive paper: SGD, lr x0.1 at epochs 30
    and 60 of 90, and linear lr scaling with the global batch when --auto-scale-lr is on."""
    from types import SimpleNamespace

    from mmengine.logging import MMLogger
    from mmengine.runner import Runner

    cfg = Config.fromfile(config_path('_base_', 'schedules', name))
    assert cfg.train_cfg.max_epochs == 90
    assert cfg.auto_scale_lr == dict(base_batch_size=base_batch, enable=False)
    model = torch.nn.Conv2d(3, 4, 3)
    with DefaultScope.overwrite_default_scope('mlkd'):
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        group = wrapper.param_groups[0]
        assert (group['momentum'], group['weight_decay']) == (0.9, 5e-4)
        (scheduler,) = [
            PARAM_SCHEDULERS.build(dict(s, optimizer=wrapper)) for s in cfg.param_scheduler
        ]
    lrs = []
    for _ in range(90):
        lrs.append(group['lr'])
        wrapper.step()  # an (empty) optimizer step first, as in training
        scheduler.step()
    expected = [base_lr] * 30 + [base_lr / 10] * 30 + [base_lr / 100] * 30
    assert lrs == pytest.approx(expected, rel=1e-12)
    # --auto-scale-lr: the lr follows GPUs x per-GPU batch / base batch (mmengine's rule).
    for world_size, per_gpu, factor in ((2, base_batch // 2, 1.0), (4, base_batch, 4.0)):
        with DefaultScope.overwrite_default_scope('mlkd'):
            wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        runner = SimpleNamespace(
            _train_dataloader=dict(batch_size=per_gpu),
            world_size=world_size,
            param_schedulers=None,
            logger=MMLogger.get_current_instance(),
        )
        Runner.scale_lr(runner, wrapper, dict(cfg.auto_scale_lr, enable=True))
        assert wrapper.param_groups[0]['lr'] == pytest.approx(base_lr * factor)
