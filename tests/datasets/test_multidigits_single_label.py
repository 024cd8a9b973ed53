"""MultiDigits' single-label variant with mmpretrain's LinearClsHead, end to end on CPU."""

from __future__ import annotations

import glob
import json
import os.path as osp

import torch
import torch.nn.functional as F
from conftest import SMALL_TOOL_RUN, config_path, run_tool
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.engine import MLKDRunner
from mlkd.registry import MODELS

mlkd.register_all_modules()
CONFIG = config_path('multidigits', 'resnet_student_single_label.py')


def test_batch_labels_and_loss_are_single_label_cross_entropy():
    cfg = Config.fromfile(CONFIG)
    assert (
        cfg.model.head.type == 'LinearClsHead'
        and cfg.train_dataloader.dataset.variant == 'single_label'
        and cfg.data_preprocessor.to_onehot is False
    )
    loader_cfg = cfg.train_dataloader
    loader_cfg.dataset.num_samples = 16
    loader_cfg.update(batch_size=16, num_workers=0, persistent_workers=False)
    with DefaultScope.overwrite_default_scope('mlkd'):
        model = MODELS.build(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
        loader = MLKDRunner.build_dataloader(loader_cfg)
    batch = model.data_preprocessor(next(iter(loader)), training=True)
    labels = torch.cat([s.gt_label for s in batch['data_samples']])
    assert labels.shape == (16,)
    digits = [
        [c for c in loader.dataset.get_data_info(s.sample_idx)['cell_labels'] if c >= 0]
        for s in batch['data_samples']
    ]  # the sampler shuffles
    assert [[int(label)] for label in labels] == digits  # the one digit drawn in the image
    logits = model(batch['inputs'], mode='tensor')
    losses = model(batch['inputs'], batch['data_samples'], mode='loss')
    torch.testing.assert_close(losses['loss'], F.cross_entropy(logits, labels))


def test_one_epoch_through_the_train_tool(tmp_path):
    work = str(tmp_path / 'work')
    out = run_tool('tools/train.py', CONFIG, '--work-dir', work, '--cfg-options', *SMALL_TOOL_RUN)
    assert out.returncode == 0, out.stderr[-3000:]
    assert osp.isfile(osp.join(work, 'epoch_1.pth'))
    (scalars,) = glob.glob(osp.join(work, '*', 'vis_data', 'scalars.json'))
    with open(scalars) as file:
        records = [json.loads(line) for line in file]
    train = [r for r in records if 'loss' in r]
    val = [r for r in records if 'accuracy/top1' in r]
    assert train and all(torch.isfinite(torch.tensor(r['loss'])) for r in train)
    assert len(val) == 1 and 0 <= val[0]['accuracy/top1'] <= val[0]['accuracy/top5'] <= 100
