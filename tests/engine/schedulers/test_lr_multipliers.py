"""``paramwise_cfg`` learning-rate multipliers hold under every schedule the toolbox ships.

MMEngine's ``OneCycleLR`` sets one absolute learning rate on every parameter group at every step,
which silently undid ``lr_mult`` (ROLE's 10x label-estimate rate on MultiDigits trained at 1x).
The shipped one-cycle bases use ``OneCycleLRWithMultipliers``; every shipped config with an
``lr_mult`` is built here (model, optimizer wrapper, schedulers) and stepped through its whole
schedule at a small epoch length.
"""

from __future__ import annotations

import functools
import glob
import os.path as osp
import re

import pytest
import torch
from conftest import cheap_default_init, config_path
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

from mlkd.registry import MODELS, PARAM_SCHEDULERS

#: Iterations per epoch when a config's epoch-based schedule is converted to iterations (two:
#: steps inside an epoch as well as across epochs).
EPOCH_LENGTH = 2


def _mentions_lr_mult(node) -> bool:
    if isinstance(node, dict):
        return any('lr_mult' in str(key) or _mentions_lr_mult(value) for key, value in node.items())
    if isinstance(node, (list, tuple)):
        return any(_mentions_lr_mult(value) for value in node)
    return False


#: A config file path in a config (``_base_`` entries, ``cfg_path``): MMEngine needs literals.
_PY_PATH = re.compile(r"""['"]([^'"\s]+\.py)['"]""")


@functools.cache
def _may_set_lr_mult(path: str) -> bool:
    """Whether ``lr_mult`` is written (outside comments) in ``path`` or in a config file it
    names, transitively: a superset of the configs whose resolution holds one, read without
    resolving anything."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if any('lr_mult' in line.split('#')[0] for line in text.splitlines()):
        return True
    for ref in _PY_PATH.findall(text):
        ref = ref.replace('{{fileDirname}}', osp.dirname(path))
        ref = (
            config_path(ref[len('mlkd::') :])
            if ref.startswith('mlkd::')
            else osp.join(osp.dirname(path), ref)
        )
        if osp.isfile(ref) and _may_set_lr_mult(osp.normpath(ref)):
            return True
    return False


@functools.lru_cache(maxsize=1)
def configs_with_lr_mult() -> tuple[str, ...]:
    """Every runnable config under configs/ whose resolved config sets a learning-rate multiplier
    anywhere: the candidates that name ``lr_mult`` somewhere in their inheritance are resolved
    with MMEngine and kept if the resolved config has one (not chosen by file name)."""
    found = []
    for path in sorted(glob.glob(config_path('**', '*.py'), recursive=True)):
        if f'{osp.sep}_base_{osp.sep}' in path or not _may_set_lr_mult(path):
            continue
        if _mentions_lr_mult(Config.fromfile(path).to_dict()):
            found.append(osp.relpath(path, config_path()))
    return tuple(found)


def expected_multiplier(name: str, paramwise_cfg: dict) -> float:
    """The multiplier that ``paramwise_cfg`` asks for on parameter ``name``, by MMEngine's
    documented rule: the longest ``custom_keys`` key contained in the name wins (ties:
    alphabetical order)."""
    other = sorted(k for k in paramwise_cfg if k.endswith('lr_mult'))
    if other:
        raise NotImplementedError(f'paramwise_cfg keys {other}: extend this test to them')
    keys = sorted(sorted(paramwise_cfg.get('custom_keys', {})), key=len, reverse=True)
    for key in keys:
        if key in name:
            return paramwise_cfg['custom_keys'][key].get('lr_mult', 1.0)
    return 1.0


def build_schedule(cfg: Config):
    """The model, its optimizer wrapper and its parameter schedulers as the Runner builds them
    (no weights loaded, no data), the epoch length set to EPOCH_LENGTH. The weights' values do
    not matter here: the default initialisation draws from a pool (``cheap_default_init``)."""
    with DefaultScope.overwrite_default_scope('mlkd'):
        with cheap_default_init():
            model = MODELS.build(cfg.model)
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        schedulers = []
        for scheduler in cfg.get('param_scheduler') or []:
            scheduler = dict(scheduler)
            scheduler.setdefault('end', cfg.train_cfg.max_epochs)
            schedulers.append(
                PARAM_SCHEDULERS.build(
                    scheduler, default_args=dict(optimizer=wrapper, epoch_length=EPOCH_LENGTH)
                )
            )
    return model, wrapper, schedulers


def group_multipliers(model, wrapper, paramwise_cfg: dict) -> list[float]:
    """Each parameter group's expected multiplier, from the names of its parameters (the
    optimizer's groups: the wrapper adds a parameterless one that records the base settings)."""
    names = {id(p): n for n, p in model.named_parameters()}
    multipliers = []
    for group in wrapper.optimizer.param_groups:
        wanted = {expected_multiplier(names[id(p)], paramwise_cfg) for p in group['params']}
        assert len(wanted) == 1, f'one group mixes multipliers {wanted}'
        multipliers.append(wanted.pop())
    return multipliers


def _trajectory(wrapper, schedulers, steps: int) -> list[list[float]]:
    """The optimizer groups' learning rates before each of ``steps`` iterations."""
    lrs = []
    for _ in range(steps):
        lrs.append([group['lr'] for group in wrapper.optimizer.param_groups])
        wrapper.step()  # an (empty) optimizer step first, as in training
        for scheduler in schedulers:
            scheduler.step()
    return lrs


def test_configs_with_a_multiplier_are_found():
    names = configs_with_lr_mult()
    # ROLE's label estimates (10x) and the Two-way recipe's backbone (0.1x), at least.
    assert 'spml/role_multidigits.py' in names and 'spml/role_coco_single.py' in names
    assert 'task_losses/two_way_coco_resnet50.py' in names
    assert len(names) >= 18


def test_every_config_with_a_multiplier_keeps_it_at_every_iteration():
    failures = []
    for name in configs_with_lr_mult():
        cfg = Config.fromfile(config_path(name))
        model, wrapper, schedulers = build_schedule(cfg)
        multipliers = group_multipliers(model, wrapper, cfg.optim_wrapper.get('paramwise_cfg', {}))
        assert any(m != 1.0 for m in multipliers), f'{name}: no group has a multiplier'
        unit = multipliers.index(1.0)
        lrs = _trajectory(wrapper, schedulers, cfg.train_cfg.max_epochs * EPOCH_LENGTH)
        if schedulers:  # the schedule moves the rate (else the check below would be weak)
            assert len({round(row[unit] / lrs[0][unit], 9) for row in lrs}) > 2, name
        for step, row in enumerate(lrs):
            ratios = [lr / row[unit] for lr in row]
            if any(abs(r - m) > 1e-9 * abs(m) for r, m in zip(ratios, multipliers)):
                failures.append(
                    f'{name} iteration {step}: group lr ratios {sorted(set(ratios))}, '
                    f'lr_mult asks {sorted(set(multipliers))}'
                )
                break
    assert not failures, '\n'.join(failures)


def _adam_groups(lr_mult: float | None):
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(4, 2)
    )
    paramwise_cfg = dict(bias_decay_mult=0.0, norm_decay_mult=0.0)
    if lr_mult is not None:
        paramwise_cfg['custom_keys'] = {'2.': dict(lr_mult=lr_mult)}
    cfg = dict(optimizer=dict(type='Adam', lr=1e-4, weight_decay=1e-4), paramwise_cfg=paramwise_cfg)
    with DefaultScope.overwrite_default_scope('mlkd'):
        return build_optim_wrapper(model, cfg)


def _one_cycle(kind: str, wrapper, total_steps: int = 50):
    with DefaultScope.overwrite_default_scope('mlkd'):
        return PARAM_SCHEDULERS.build(
            dict(
                type=kind,
                optimizer=wrapper,
                eta_max=2e-3,
                total_steps=total_steps,
                pct_start=0.2,
                by_epoch=False,
            )
        )


def test_without_multipliers_the_schedule_is_mmengines_bit_for_bit():
    """Configs without lr_mult train exactly as before the change (equality, not approx)."""
    ours, theirs = _adam_groups(None), _adam_groups(None)
    ours_lrs = _trajectory(ours, [_one_cycle('OneCycleLRWithMultipliers', ours)], 50)
    theirs_lrs = _trajectory(theirs, [_one_cycle('OneCycleLR', theirs)], 50)
    assert ours_lrs == theirs_lrs
    assert len(ours.param_groups) > 1 and max(ours_lrs)[0] == 2e-3


def test_each_group_peaks_at_eta_max_times_its_multiplier():
    wrapper = _adam_groups(10.0)
    lrs = _trajectory(wrapper, [_one_cycle('OneCycleLRWithMultipliers', wrapper)], 50)
    multipliers = [g['lr'] / 1e-4 for g in _adam_groups(10.0).optimizer.param_groups]
    assert sorted(set(round(m, 9) for m in multipliers)) == [1.0, 10.0]
    for column, multiplier in enumerate(multipliers):
        trajectory = [row[column] for row in lrs]
        assert max(trajectory) == pytest.approx(2e-3 * multiplier, rel=1e-12)
        assert trajectory[0] == pytest.approx(2e-3 * multiplier / 25, rel=1e-12)
        assert trajectory[-1] == pytest.approx(2e-3 * multiplier / 25 / 1e4, rel=1e-9)
    # MMEngine's OneCycleLR, for contrast, gives every group the same rate (the defect).
    plain = _adam_groups(10.0)
    plain_lrs = _trajectory(plain, [_one_cycle('OneCycleLR', plain)], 50)
    assert all(len(set(row)) == 1 for row in plain_lrs)


def test_an_auto_scaled_learning_rate_scales_the_peak():
    """``--auto-scale-lr`` multiplies the groups' rates (not the base rate) before the schedulers
    are built: under OneCycleLR it did nothing; here it scales every group's peak."""
    wrapper = _adam_groups(10.0)
    for group in wrapper.optimizer.param_groups:  # what Runner.scale_lr does, ratio 2
        group['lr'] *= 2
    lrs = _trajectory(wrapper, [_one_cycle('OneCycleLRWithMultipliers', wrapper)], 50)
    peaks = sorted({round(max(column), 12) for column in zip(*lrs)})
    assert peaks == pytest.approx([2 * 2e-3, 2 * 10 * 2e-3], rel=1e-9)


def test_bad_arguments_are_refused():
    wrapper = _adam_groups(None)
    with DefaultScope.overwrite_default_scope('mlkd'):
        with pytest.raises(ValueError, match='one eta_max'):
            PARAM_SCHEDULERS.build(
                dict(
                    type='OneCycleLRWithMultipliers',
                    optimizer=wrapper,
                    eta_max=[1e-3] * len(wrapper.param_groups),
                    total_steps=10,
                    by_epoch=False,
                )
            )
        zero = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.0)
        with pytest.raises(ValueError, match='base learning rate 0.0'):
            PARAM_SCHEDULERS.build(
                dict(
                    type='OneCycleLRWithMultipliers',
                    optimizer=zero,
                    eta_max=1e-3,
                    total_steps=10,
                    by_epoch=False,
                )
            )


def test_the_shipped_one_cycle_bases_use_the_multiplier_aware_scheduler():
    for base in ('onecycle_80e.py', 'onecycle_12e_demo.py', 'onecycle_80e_stop30.py'):
        cfg = Config.fromfile(config_path('_base_', 'schedules', base))
        assert cfg.param_scheduler[0]['type'] == 'OneCycleLRWithMultipliers', base
