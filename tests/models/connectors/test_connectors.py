"""Connectors: a FitNet-style hint between stages of different widths, through the Runner."""

import os.path as osp

import torch
from conftest import MULTIDIGITS_3D, register_test_losses, run_tool, small_run_cfg

from mlkd.engine import build_runner
from mlkd.models.utils import unwrap_model

register_test_losses()


def _hint_cfg(work_dir, **model):
    """3D's MultiDigits pair (student layer3: 32 channels, teacher: 96) with a hint loss only."""
    cfg = small_run_cfg(MULTIDIGITS_3D, work_dir, epochs=1, train_samples=64, val_samples=32)
    cfg.model.teacher_ckpt = None
    cfg.model.allow_random_teacher = True
    cfg.model.student_taps = dict(stage3='backbone.layer3')
    cfg.model.teacher_taps = dict(stage3='backbone.layer3')
    cfg.model.connectors = dict(
        s_hint=dict(type='ConvBNConnector', source='s_stage3', target='t_stage3')
    )
    cfg.model.distill_losses = dict(
        hint=dict(type='TestHintLoss', inputs=dict(s_feats='s_hint', t_feats='t_stage3'))
    )
    cfg.model.update(model)
    return cfg


def test_hint_connector_trains_with_the_student_and_paramwise_cfg_reaches_it(tmp_path):
    cfg = _hint_cfg(str(tmp_path))
    # The connector's conv is frozen through paramwise_cfg; its BatchNorm trains. Under the
    # config's own one-cycle schedule: OneCycleLRWithMultipliers keeps lr_mult (MMEngine's
    # OneCycleLR set one absolute lr on every group and undid it).
    cfg.optim_wrapper.paramwise_cfg = dict(custom_keys={'connectors.s_hint.0': dict(lr_mult=0.0)})
    assert cfg.param_scheduler[0]['type'] == 'OneCycleLRWithMultipliers'
    runner = build_runner(cfg)
    model = unwrap_model(runner.model)
    conv, bn = model.connectors['s_hint'][0], model.connectors['s_hint'][1]
    assert (conv.in_channels, conv.out_channels) == (32, 96)  # sized by the probe
    conv_before, bn_before = conv.weight.detach().clone(), bn.weight.detach().clone()
    runner.train()
    assert torch.equal(conv.weight, conv_before)
    assert not torch.equal(bn.weight, bn_before)
    ckpt = torch.load(
        osp.join(str(tmp_path), 'epoch_1.pth'), map_location='cpu', weights_only=False
    )
    assert any(k.startswith('connectors.s_hint.') for k in ckpt['state_dict'])
    # The exported student carries no connector (nor teacher) weights and loads strictly.
    out = tmp_path / 'student.pth'
    done = run_tool('tools/export_student.py', osp.join(str(tmp_path), 'epoch_1.pth'), str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    exported = torch.load(out, weights_only=True)['state_dict']
    assert not any('connector' in k or k.startswith('teacher.') for k in exported)
    model.student.load_state_dict(exported, strict=True)


def test_under_amp_the_connector_runs_in_low_precision_and_the_loss_in_fp32(tmp_path):
    cfg = _hint_cfg(str(tmp_path))
    cfg.optim_wrapper.type = 'MixedPrecisionOptimWrapper'
    cfg.optim_wrapper.dtype = 'bfloat16'
    cfg.train_cfg.val_interval = 100  # training only
    runner = build_runner(cfg)
    model = unwrap_model(runner.model)
    seen = {}
    model.connectors['s_hint'][0].register_forward_hook(
        lambda m, a, out: seen.update(connector=out.dtype)
    )
    loss = model.distill_losses['hint']
    original = loss.forward

    def spy(s_feats, t_feats):
        seen['autocast'] = torch.is_autocast_enabled('cpu')
        seen['inputs'] = (s_feats.dtype, t_feats.dtype)
        out = original(s_feats, t_feats)
        seen['loss'] = out.dtype
        return out

    loss.forward = spy
    runner.train()
    assert seen['connector'] == torch.bfloat16
    assert seen['inputs'] == (torch.bfloat16, torch.bfloat16)  # network outputs stay low
    assert seen['autocast'] is False and seen['loss'] == torch.float32
