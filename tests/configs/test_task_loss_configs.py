"""Every task-loss config (``configs/task_losses/``) builds and takes a training step; one trains
through ``tools/train.py`` as a user runs it."""

import glob
import json
import math
import os
import os.path as osp

import pytest
import torch
from conftest import REPO, SMALL_TOOL_RUN, build_model, run_tool
from mmengine.config import Config
from mmengine.optim import OptimWrapper
from mmpretrain.structures import DataSample

import mlkd

CONFIGS = sorted(glob.glob(osp.join(REPO, 'configs', 'task_losses', 'resnet_student_*.py')))
LOSS_TYPES = {
    'asl': 'AsymmetricMultiLabelLoss',
    'asl_focal': 'AsymmetricFocalLoss',
    'sigmoid_focal': 'SigmoidFocalLoss',
    'two_way': 'TwoWayMultiLabelLoss',
    'hill': 'HillLoss',
    'splc': 'SPLCLoss',
    'focal_margin': 'FocalMarginLoss',
}


def test_there_is_a_config_per_task_loss():
    names = {osp.basename(p)[len('resnet_student_') : -3] for p in CONFIGS}
    assert names == set(LOSS_TYPES)


@pytest.mark.parametrize('path', CONFIGS, ids=osp.basename)
def test_task_loss_config_builds_and_takes_a_step(path):
    cfg = Config.fromfile(path)
    mlkd.register_all_modules()
    model = build_model(cfg.model)
    expected = LOSS_TYPES[osp.basename(path)[len('resnet_student_') : -3]]
    assert type(model.head.loss_module).__name__ == expected
    assert cfg.model.head.loss == dict(type=expected)  # the leaf only swaps the loss
    model.train()
    g = torch.Generator().manual_seed(0)
    images = [torch.randint(0, 255, (3, 32, 32), generator=g, dtype=torch.uint8) for _ in range(4)]
    samples = [DataSample().set_gt_label(labels) for labels in ([1, 3], [0], [2, 3, 9], [5])]
    optim = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    before = model.head.fc.weight.detach().clone()
    log = model.train_step(dict(inputs=images, data_samples=samples), optim)
    assert torch.isfinite(log['loss']) and log['loss'] > 0
    assert not torch.equal(before, model.head.fc.weight)


def test_splc_config_trains_with_tools_train_under_amp(tmp_path):
    work = str(tmp_path / 'work')
    # AMP on the CPU. On a machine without CUDA hiding the devices changes nothing, and the run
    # keeps the tool server's environment (a differing one costs a fresh interpreter).
    cpu_only = {'CUDA_VISIBLE_DEVICES': ''} if torch.cuda.is_available() else None
    out = run_tool(
        'tools/train.py',
        osp.join('configs', 'task_losses', 'resnet_student_splc.py'),
        '--amp',
        '--work-dir',
        work,
        '--cfg-options',
        *SMALL_TOOL_RUN,
        'model.head.loss.change_epoch=0',  # correct labels from the first epoch
        env=cpu_only,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert osp.isfile(osp.join(work, 'epoch_1.pth'))
    records = []
    for root, _, files in os.walk(work):
        if 'scalars.json' in files:
            with open(osp.join(root, 'scalars.json')) as f:
                records += [json.loads(line) for line in f]
    losses = [r['loss'] for r in records if 'loss' in r]
    assert losses and all(math.isfinite(v) and v > 0 for v in losses)
    assert any('multi-label/mAP' in r or any('mAP' in k for k in r) for r in records)
