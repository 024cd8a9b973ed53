"""Constructor facts a distiller gives its losses: VID's variance count from the probed channels
of whatever ``t_feats`` is wired to, OFD's margins from the loaded teacher's BNs, and CRD's bank
size from the dataset config."""

import pytest
import torch
from conftest import build_model, config_path, digits_distiller
from mmengine.config import Config

from mlkd.models.losses import OFDLoss, VIDLoss, ofd_margin

TAPS = dict(stage2='backbone.layer2', stage3='backbone.layer3')
TEACHER_STAGES = ['t_stage2', 't_stage3']


def _distiller_through_connector(name: str, connector: str, loss: str, **loss_kwargs):
    """A random-teacher distiller whose loss ``name`` compares the student's stages 2 and 3,
    mapped by a ``connector`` (named ``s_<name>``), with the teacher's stages 2 and 3."""
    return digits_distiller(
        student_taps=TAPS,
        teacher_taps=TAPS,
        connectors={
            f's_{name}': dict(
                type=connector, source=['s_stage2', 's_stage3'], target=TEACHER_STAGES
            )
        },
        distill_losses={
            name: dict(
                type=loss, inputs=dict(s_feats=f's_{name}', t_feats=TEACHER_STAGES), **loss_kwargs
            )
        },
    )


def test_vid_variances_are_sized_from_the_teacher_stages_it_reads():
    model = _distiller_through_connector('vid', 'VIDRegressorConnector', 'VIDLoss')
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
    bns = ['backbone.layer2.1.bn2', 'backbone.layer3.1.bn2']
    model = _distiller_through_connector('ofd', 'OFDConnector', 'OFDLoss', margin_bns=bns)
    loss = model.distill_losses['ofd']
    for i, path in enumerate(bns):
        bn = model.teacher.get_submodule(path)
        torch.testing.assert_close(getattr(loss, f'margin_{i}'), ofd_margin(bn.weight, bn.bias))
    # the loss keeps no reference to the teacher (no teacher weights in its state dict)
    assert not any('teacher' in key for key in loss.state_dict())


def _cifar_resnet20():
    return build_model(
        Config.fromfile(config_path('_base_', 'models', 'cifar', 'resnet20.py')).model
    )


def test_ofd_auto_margins_read_the_cifar_backbone_bns():
    teacher = _cifar_resnet20()
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
        kwargs['teacher'] = _cifar_resnet20()
    with pytest.raises((ValueError, KeyError), match=message):
        OFDLoss(**kwargs)


def test_crd_bank_size_is_the_dataset_configs_training_set_size():
    cfg = Config.fromfile(config_path('crd', 'crd_cifar100_resnet56_to_resnet20.py'))
    assert cfg.model.distill_losses.crd.num_samples == cfg.num_train_samples == 50000
    cfg = Config.fromfile(config_path('crd', 'crd_tiny_imagenet_resnet32x4_to_resnet8x4.py'))
    assert cfg.model.distill_losses.crd.num_samples == 100000
