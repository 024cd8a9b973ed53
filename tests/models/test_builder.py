"""network_taps: the taps a network's config declares, and those a distillation config adds;
with_networks_resolved: the networks a run's config names by path, as the models they build."""

from __future__ import annotations

import pytest
from conftest import config_path
from mmengine.config import Config

from mlkd.models.builder import network_taps, with_networks_resolved


def _taps_file(name: str) -> dict[str, str]:
    """The preset of configs/_base_/taps/<name>.py, read on its own."""
    cfg = Config.fromfile(config_path('_base_', 'taps', f'{name}.py'))
    return dict(cfg[f'{name}_taps'])


@pytest.mark.parametrize(
    ('network', 'preset'),
    [
        (('cifar100', 'wrn_16_2.py'), 'cifar_wrn'),
        (('cifar100', 'resnet8x4.py'), 'cifar_resnet8x4'),
        (('teachers', 'voc_swin_t_mldecoder.py'), 'swin_t'),
        (('students', 'coco_resnet34_mldecoder.py'), 'resnet'),
        (('ranking', 'student.py'), 'digits_resnet'),
        # A timm network inheriting the digits ResNet replaces its taps, none of them left.
        (('multidigits', 'timm_resnet18_mldecoder_teacher.py'), 'timm'),
    ],
)
def test_a_network_config_declares_the_taps_of_its_architecture(network, preset):
    assert network_taps(config_path(*network), None, 'student') == _taps_file(preset)


def test_taps_a_config_gives_are_added_and_take_a_declared_name_over():
    path = config_path('cifar100', 'vgg8.py')
    extra = dict(label_emb='head.decoder', stage1='backbone.relu0')
    taps = network_taps(path, extra, 'student')
    assert taps == {**_taps_file('cifar_vgg'), **extra}
    assert taps['stage1'] == 'backbone.relu0'


def test_a_config_path_with_overrides_declares_the_taps_of_that_file():
    cfg = dict(cfg_path=config_path('_base_', 'models', 'resnet18_ml.py'), head=dict(num_classes=3))
    assert network_taps(cfg, None, 'teacher') == _taps_file('resnet')


def test_a_model_dict_declares_no_taps():
    model = dict(type='ImageClassifier', backbone=dict(type='ResNet', depth=18))
    assert network_taps(model, None, 'student') == {}
    assert network_taps(model, dict(stage3='backbone.layer3'), 'student') == {
        'stage3': 'backbone.layer3'
    }


def test_a_config_without_a_model_is_refused_naming_it():
    path = config_path('_base_', 'taps', 'resnet.py')
    with pytest.raises(ValueError, match='teacher: config .*resnet.py.* defines no `model`'):
        network_taps(path, None, 'teacher')


def test_networks_named_by_path_are_resolved_and_the_given_config_is_left_alone():
    resnet = config_path('_base_', 'models', 'resnet18_ml.py')
    given = dict(cfg_path=resnet, head=dict(num_classes=3))
    model_dict = dict(type='ImageClassifier', backbone=dict(type='ResNet', depth=18))
    cfg = Config(dict(model=dict(student=resnet, teacher=given, classifier=model_dict), seed=1))
    resolved = with_networks_resolved(cfg)
    expected = Config.fromfile(resnet).model.to_dict()
    assert resolved['model']['student'] == expected
    assert resolved['model']['teacher'] == {
        **expected,
        'head': {**expected['head'], 'num_classes': 3},
    }
    assert resolved['model']['classifier'] == model_dict
    assert resolved['seed'] == 1
    assert cfg.model.student == resnet and cfg.model.teacher.cfg_path == resnet


def test_the_networks_of_a_multi_teacher_distiller_are_resolved():
    resnet = config_path('_base_', 'models', 'resnet18_ml.py')
    teachers = dict(low=dict(network=resnet, ckpt='low.pth'), high=dict(ckpt='high.pth'))
    resolved = with_networks_resolved(dict(model=dict(teachers=teachers)))
    assert resolved['model']['teachers']['low'] == dict(
        network=Config.fromfile(resnet).model.to_dict(), ckpt='low.pth'
    )
    assert resolved['model']['teachers']['high'] == dict(ckpt='high.pth')
    assert teachers['low']['network'] == resnet  # the given config is left alone
