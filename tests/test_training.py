"""End-to-end runs on MultiDigits: resume equivalence, clear start-up errors, tools."""
import os.path as osp
import subprocess
import sys

import pytest
import torch
from mmengine.runner import Runner

from conftest import (REPO, SMALL_TOOL_RUN, assert_same_state, config_path, small_run_cfg,
                      whole_and_resumed_runs)

STUDENT = config_path('multidigits', 'resnet_student.py')


def _train(cfg):
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner


def _optimizer_state(runner):
    opt = runner.optim_wrapper.optimizer
    group = opt.param_groups[0]
    states = [opt.state[p] for g in opt.param_groups for p in g['params'] if p in opt.state]
    return group['lr'], group['betas'], states


def test_resumed_run_equals_uninterrupted_run(tmp_path):
    full, resumed = whole_and_resumed_runs(
        lambda work, epochs, schedule: small_run_cfg(STUDENT, work, epochs=epochs,
                                                     schedule_epochs=schedule),
        tmp_path, epochs=3)
    assert resumed.epoch == full.epoch == 3
    assert resumed.iter == full.iter
    assert_same_state(resumed.model, full.model)
    lr_r, betas_r, states_r = _optimizer_state(resumed)
    lr_f, betas_f, states_f = _optimizer_state(full)
    assert lr_r == pytest.approx(lr_f, rel=1e-12)
    assert betas_r[0] == pytest.approx(betas_f[0], rel=1e-12)
    assert len(states_r) == len(states_f) > 0
    for s_r, s_f in zip(states_r, states_f):
        for key in ('exp_avg', 'exp_avg_sq', 'step'):
            torch.testing.assert_close(s_r[key], s_f[key], rtol=0, atol=1e-6)


def test_head_num_classes_mismatch_fails_at_start(tmp_work_dir):
    cfg = small_run_cfg(STUDENT, tmp_work_dir, epochs=1)
    cfg.model.head.num_classes = 7
    with pytest.raises(ValueError, match=r'model\.head\.num_classes = 7.*train_dataloader'):
        _train(cfg)


def _run_tool(*args, timeout=600):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout)


def test_test_tool_reports_a_missing_checkpoint(tmp_path):
    out = _run_tool('tools/test.py', STUDENT, str(tmp_path / 'missing.pth'))
    assert out.returncode != 0
    assert 'checkpoint file not found' in out.stderr and 'missing.pth' in out.stderr


def test_train_tool_reports_a_missing_resume_checkpoint(tmp_path):
    out = _run_tool('tools/train.py', STUDENT, '--resume', str(tmp_path / 'gone.pth'))
    assert out.returncode != 0
    assert '--resume checkpoint not found' in out.stderr and 'gone.pth' in out.stderr


def test_train_then_test_tool_with_out_file(tmp_path):
    """train.py writes a checkpoint that test.py (torch >= 2.6) loads, evaluates and dumps."""
    work = str(tmp_path / 'work')
    out = _run_tool('tools/train.py', STUDENT, '--work-dir', work, '--cfg-options',
                    *SMALL_TOOL_RUN)
    assert out.returncode == 0, out.stderr[-3000:]
    ckpt = osp.join(work, 'epoch_1.pth')
    assert osp.isfile(ckpt)
    dump = str(tmp_path / 'scores.npz')
    out = _run_tool('tools/test.py', STUDENT, ckpt, '--work-dir', work, '--out', dump,
                    '--cfg-options', *SMALL_TOOL_RUN)
    assert out.returncode == 0, out.stderr[-3000:]
    log = out.stdout + out.stderr
    assert f'Loaded checkpoint {ckpt}' in log
    assert 'per-class AP' in out.stdout
    import numpy as np
    data = np.load(dump)
    assert data['scores'].shape == data['labels'].shape == (32, 10)
    assert set(np.unique(data['labels'])) <= {0.0, 1.0}
