"""Constructor facts a distiller gives its losses: VID's variance count from the probed channels
of whatever ``t_feats`` is wired to, OFD's margins from the loaded teacher's BNs, and CRD's bank
size from the dataset config."""

import pytest
import torch
from conftest import config_path
from mmengine.config import Config
from mmengine.registry import DefaultScope

from mlkd.models.losses import OFDLoss, VIDLoss, ofd_margin
from mlkd.registry import MODELS

STUDENT_CFG = config_path('_base_', 'models', 'digits_resnet_student.py')
TEACHER_CFG = config_path('_base_', 'models', 'digits_resnet_teacher.py')
TAPS = dict(stage2='backbone.layer2', stage3='backbone.layer3')


def _distiller(**losses_and_connectors):
    with DefaultScope.overwrite_default_scope('mlkd'):
        return MODELS.build(
            dict(
                type='SingleTeacherDistiller',
                student=STUDENT_CFG,
                teacher=TEACHER_CFG,
                probe_input_size=(32, 32),
                allow_random_teacher=True,
                student_taps=TAPS,
                teacher_taps=TAPS,
                **losses_and_connectors,
            )
        )


def test_vid_variances_are_sized_from_the_teacher_stages_it_reads():
    model = _distiller(
        connectors=dict(
            s_vid=dict(
                type='VIDRegressorConnector',
                source=['s_stage2', 's_stage3'],
                target=['t_stage2', 't_stage3'],
            )
        ),
        distill_losses=dict(
            vid=dict(type='VIDLoss', inputs=dict(s_feats='s_vid', t_feats=['t_stage2', 't_stage3']))
        ),
    )
    # the digits teacher: 48 channels after layer2, 96 after layer3 (independent of the probe)
    widths = [
        m.out_channels
        for m in (model.teacher.backbone.layer2[-1].conv2, model.teacher.backbone.layer3[-1].conv2)
    ]
    assert widths == [48, 96]
    assert [p.numel() for p in model.distill_losses['vid'].log_scales] == widths


def test_vid_without_channels_outside_a_distiller_says_what_to_give():
    with pytest.raises(ValueError, match='num_channels'):
        VIDLoss()
    assert [p.numel() for p in VIDLoss(num_channels=[3, 5]).log_scales] == [3, 5]


def test_ofd_margins_come_from_the_loaded_teacher_bns():
    model = _distiller(
        connectors=dict(
            s_ofd=dict(
                type='OFDConnector',
                source=['s_stage2', 's_stage3'],
                target=['t_stage2', 't_stage3'],
            )
        ),
        distill_losses=dict(
            ofd=dict(
                type='OFDLoss',
                inputs=dict(s_feats='s_ofd', t_feats=['t_stage2', 't_stage3']),
                margin_bns=['backbone.layer2.1.bn2', 'backbone.layer3.1.bn2'],
            )
        ),
    )
    loss = model.distill_losses['ofd']
    for i, path in enumerate(['backbone.layer2.1.bn2', 'backbone.layer3.1.bn2']):
        bn = model.teacher.get_submodule(path)
        torch.testing.assert_close(getattr(loss, f'margin_{i}'), ofd_margin(bn.weight, bn.bias))
    # the loss keeps no reference to the teacher (no teacher weights in its state dict)
    assert not any('teacher' in key for key in loss.state_dict())


def test_ofd_auto_margins_read_the_cifar_backbone_bns():
    with DefaultScope.overwrite_default_scope('mlkd'):
        teacher = MODELS.build(
            Config.fromfile(config_path('_base_', 'models', 'cifar', 'resnet20.py')).model
        )
    with torch.no_grad():
        for i, path in enumerate(teacher.backbone.bn_before_relu_paths()):
            bn = teacher.backbone.get_submodule(path)
            bn.weight.fill_(0.5 + i)
            bn.bias.fill_(-0.2 * i)
    loss = OFDLoss(margin_bns='auto', teacher=teacher)
    assert loss.num_stages == 3
    for i in range(3):
        width = 16 * 2**i
        expected = ofd_margin(torch.full((width,), 0.5 + i), torch.full((width,), -0.2 * i))
        torch.testing.assert_close(getattr(loss, f'margin_{i}'), expected)


@pytest.mark.parametrize(
    'kwargs, message',
    [
        (dict(margin_bns=['backbone.layer1.0.bn2']), 'needs the teacher'),
        (dict(margin_bns='auto', teacher=torch.nn.Module()), 'bn_before_relu_paths'),
        (
            dict(margin_bns=['backbone.layer1.0.conv1'], teacher='resnet20'),
            'not an affine BatchNorm',
        ),
        (dict(margin_bns=['backbone.nowhere'], teacher='resnet20'), 'nowhere'),
        (dict(margins=[[0.0]], margin_bns=['x']), 'not both'),
    ],
)
def test_ofd_bad_margin_sources_fail_naming_the_module(kwargs, message):
    if kwargs.get('teacher') == 'resnet20':
        with DefaultScope.overwrite_default_scope('mlkd'):
            kwargs['teacher'] = MODELS.build(
                Config.fromfile(config_path('_base_', 'models', 'cifar', 'resnet20.py')).model
            )
    with pytest.raises((ValueError, KeyError), match=message):
        OFDLoss(**kwargs)


def test_crd_bank_size_is_the_dataset_configs_training_set_size():
    cfg = Config.fromfile(config_path('crd', 'crd_cifar100_resnet56_to_resnet20.py'))
    assert cfg.model.distill_losses.crd.num_samples == cfg.num_train_samples == 50000
    cfg = Config.fromfile(config_path('crd', 'crd_tiny_imagenet_resnet32x4_to_resnet8x4.py'))
    assert cfg.model.distill_losses.crd.num_samples == 100000
