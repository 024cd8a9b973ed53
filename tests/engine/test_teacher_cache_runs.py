"""Training from a teacher cache is bit-identical to training with the live teacher.

Runs through the Runner on tiny MultiDigits data (32 samples, two batches an epoch) with the
shipped augmentation pipeline (random crops and flips, keyed by (seed, epoch, index)), two epochs,
for a logit method (MLD) and a feature method (FitNet, which reads the teacher's stage-3 map
through a connector): a run with the live teacher, a run with ``mode='write'`` and a run with
``mode='read'`` end with the same weights, bit for bit, and log the same losses at every step. A
cache of another teacher, and a cache missing the epoch or the tap a run needs, are refused before
the first step.
"""

import os.path as osp

import pytest
import torch
from conftest import (
    MULTIDIGITS_MLD,
    MULTIDIGITS_TEACHER,
    TWO_AUGMENTED_BATCHES,
    config_path,
    logged_losses,
    small_run_cfg,
)
from mmengine.hooks import Hook
from mmengine.registry import DefaultScope

from mlkd.engine import build_runner
from mlkd.models.builder import build_network
from mlkd.teacher_cache import TeacherCacheError

METHODS = {
    'mld': MULTIDIGITS_MLD,
    'fitnet': config_path('fitnet', 'fitnet_multidigits.py'),
}


@pytest.fixture(scope='module')
def teacher_checkpoints(tmp_path_factory):
    """Two different teachers (saved as mmpretrain-style checkpoints)."""
    root = tmp_path_factory.mktemp('teachers')
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mlkd'):
        teacher = build_network(MULTIDIGITS_TEACHER, 'teacher')
    paths = {}
    for name in ('a', 'b'):
        paths[name] = str(root / f'{name}.pth')
        torch.save({'state_dict': teacher.state_dict()}, paths[name])
        with torch.no_grad():
            next(teacher.parameters()).add_(0.01)
    return paths


def _cfg(method, work_dir, teacher, cache=None, epochs=2):
    cfg = small_run_cfg(METHODS[method], work_dir, epochs=epochs, **TWO_AUGMENTED_BATCHES)
    cfg.model.teacher_ckpt = teacher
    cfg.randomness = dict(seed=7)
    cfg.custom_hooks = [h for h in cfg.custom_hooks if h['type'] != 'TeacherEvalHook']
    if cache is not None:
        cfg.model.teacher_cache = dict(cfg.model.teacher_cache, **cache)
    return cfg


def _train(cfg):
    runner = build_runner(cfg)
    runner.train()
    return runner


@pytest.fixture(scope='module')
def trained(tmp_path_factory, teacher_checkpoints):
    """``trained(method)``: the live, write and read runs of a method (made once per module)."""
    made_runs = {}

    def runs(method):
        if method not in made_runs:
            root = tmp_path_factory.mktemp(f'cache_{method}')
            cache = str(root / 'cache')
            made = {}
            for name, setting in (
                ('live', None),
                ('write', dict(dir=cache, mode='write')),
                ('read', dict(dir=cache, mode='read')),
            ):
                made[name] = _train(
                    _cfg(method, str(root / name), teacher_checkpoints['a'], setting)
                )
            made_runs[method] = (method, cache, made)
        return made_runs[method]

    return runs


@pytest.fixture(params=sorted(METHODS))
def three_runs(request, trained):
    return trained(request.param)


@pytest.fixture
def mld_runs(trained):
    return trained('mld')


def test_write_and_read_runs_equal_the_live_run_bit_for_bit(three_runs):
    method, _, runs = three_runs
    live = runs['live'].model.state_dict()
    for name in ('write', 'read'):
        state = runs[name].model.state_dict()
        assert state.keys() == live.keys()
        for key, value in live.items():
            assert torch.equal(state[key], value), f'{method} {name}: {key} differs'
    losses = logged_losses(runs['live'].work_dir)
    assert len(losses) == 4 and all(losses)  # 2 steps x 2 epochs, each logged
    assert any(k != 'loss' and k != 'loss_cls' for k in losses[0]), losses[0]  # a KD term
    for name in ('write', 'read'):
        assert logged_losses(runs[name].work_dir) == losses, name


def test_read_run_does_not_run_the_teacher(mld_runs, tmp_path, teacher_checkpoints):
    method, cache, _ = mld_runs
    runner = build_runner(
        _cfg(
            method,
            str(tmp_path / 'w'),
            teacher_checkpoints['a'],
            dict(dir=cache, mode='read'),
            epochs=1,
        )
    )
    calls, training = [], []

    class TrainingEpochFlag(Hook):  # NonFiniteGuardHook checks the teacher once before training
        def before_train_epoch(self, runner):
            training.append(True)

        def after_train_epoch(self, runner):
            training.clear()

    runner.register_hook(TrainingEpochFlag())
    runner.model.teacher.register_forward_hook(lambda *args: calls.append(bool(training)))
    runner.train()
    assert True not in calls


def test_cache_of_another_teacher_is_refused(mld_runs, tmp_path, teacher_checkpoints):
    method, cache, _ = mld_runs
    runner = build_runner(
        _cfg(method, str(tmp_path / 'w'), teacher_checkpoints['b'], dict(dir=cache, mode='read'))
    )
    with pytest.raises(TeacherCacheError, match='teacher_weights_sha256 differs'):
        runner.train()
    assert runner.iter == 0


def test_cache_of_another_normalisation_is_refused(mld_runs, tmp_path, teacher_checkpoints):
    """The same teacher on inputs normalised otherwise gives other outputs."""
    method, cache, _ = mld_runs
    cfg = _cfg(method, str(tmp_path / 'w'), teacher_checkpoints['a'], dict(dir=cache, mode='read'))
    cfg.data_preprocessor.std = [128.0, 128.0, 128.0]
    runner = build_runner(cfg)
    with pytest.raises(TeacherCacheError, match='preprocessor_sha256 differs'):
        runner.train()
    assert runner.iter == 0


def test_other_seed_and_missing_epoch_are_refused(mld_runs, tmp_path, teacher_checkpoints):
    method, cache, _ = mld_runs
    cfg = _cfg(
        method, str(tmp_path / 'seed'), teacher_checkpoints['a'], dict(dir=cache, mode='read')
    )
    cfg.randomness = dict(seed=8)
    with pytest.raises(TeacherCacheError, match='seed differs'):
        build_runner(cfg).train()
    cfg = _cfg(
        method,
        str(tmp_path / 'long'),
        teacher_checkpoints['a'],
        dict(dir=cache, mode='read'),
        epochs=3,
    )
    runner = build_runner(cfg)
    with pytest.raises(TeacherCacheError, match=r'epoch 2 was not written'):
        runner.train()
    assert runner.iter == 4  # epochs 0 and 1 were trained from it


def test_unkeyed_sampler_is_refused(tmp_path, teacher_checkpoints):
    cfg = _cfg(
        'mld',
        str(tmp_path / 'w'),
        teacher_checkpoints['a'],
        dict(dir=str(tmp_path / 'cache'), mode='write'),
    )
    cfg.train_dataloader.sampler = dict(type='DefaultSampler', shuffle=True)
    with pytest.raises(TeacherCacheError, match='sampler is DefaultSampler'):
        build_runner(cfg).train()
    assert not osp.exists(osp.join(tmp_path, 'cache', 'manifest.json'))


def test_a_repeated_or_joined_training_set_is_refused(tmp_path, teacher_checkpoints):
    """Under mmengine's RepeatDataset / ConcatDataset two loader indices share a sample_idx (the
    cache's key): one cached row would serve two different augmentations, or two images."""
    cfg = _cfg(
        'mld',
        str(tmp_path / 'w'),
        teacher_checkpoints['a'],
        dict(dir=str(tmp_path / 'cache'), mode='write'),
    )
    cfg.train_dataloader.dataset = dict(
        type='RepeatDataset', times=2, dataset=cfg.train_dataloader.dataset
    )
    with pytest.raises(TeacherCacheError, match='training dataset is a RepeatDataset, whose'):
        build_runner(cfg).train()
    assert not osp.exists(osp.join(tmp_path, 'cache', 'manifest.json'))
