"""configs/own_teacher: timm and torchvision networks as teacher or student, as users run them.

A timm teacher -> mmpretrain student and an mmpretrain teacher -> timm student train two
iterations through the Runner with 3D and L2D; the feature methods step on the timm stage taps;
bad input (an unknown timm name, weights of another architecture, a tap the model lacks) fails
before training. Every teacher loads from a file written here; nothing is downloaded.
"""

import os.path as osp

import pytest
import timm
import torch
from conftest import REPO, build_model, cheap_default_init, distiller_step, small_run_cfg
from mmengine.config import Config
from mmengine.registry import DefaultScope
from safetensors.torch import load_file, save_file

import mlkd
from mlkd.engine import build_runner
from mlkd.models.backbones import timm_backbone
from mlkd.models.builder import build_network

FOLDER = osp.join(REPO, 'configs', 'own_teacher')
PAIRS = osp.join(REPO, 'configs', '_base_', 'pairs', 'own_teacher')


def leaf(name: str) -> str:
    return osp.join(FOLDER, f'{name}.py')


def build(cfg):
    mlkd.register_all_modules()
    return build_model(cfg)


@pytest.fixture(scope='module')
def teacher_files(tmp_path_factory):
    """``{pair: checkpoint}``: each pair's teacher, randomly initialised, saved as mlkd saves a
    classifier (``state_dict``), to load strictly as ``model.teacher_ckpt``."""
    root = tmp_path_factory.mktemp('own_teachers')
    files = {}
    for pair in ('timm_teacher', 'timm_student'):
        teacher = Config.fromfile(leaf(f'3d_multidigits_{pair}')).model.teacher
        mlkd.register_all_modules()
        with DefaultScope.overwrite_default_scope('mlkd'), cheap_default_init():
            net = build_network(teacher, 'teacher')
        files[pair] = str(root / f'{pair}.pth')
        torch.save({'state_dict': net.state_dict()}, files[pair])
    return files


def two_iterations(config: str, work_dir: str, teacher_ckpt: str):
    cfg = small_run_cfg(config, work_dir, epochs=1, train_samples=8, val_samples=8, batch_size=4)
    cfg.model.teacher_ckpt = teacher_ckpt
    cfg.custom_hooks = [h for h in cfg.custom_hooks if h['type'] != 'TeacherEvalHook']
    # Training only: no evaluation, no checkpoint (tens of MB for a timm resnet18).
    cfg.train_cfg.val_interval = 2
    cfg.default_hooks.checkpoint = None
    return cfg


def with_3d_losses(cfg):
    """The L2D leaf ``cfg`` with 3D's losses added: one run trains with both methods' losses."""
    three_d = Config.fromfile(osp.join(REPO, 'configs', '_base_', 'methods', '3d.py'))
    cfg.model.distill_losses.update(three_d.method.distill_losses)
    return cfg


LOGGED = ['loss_cls', 'loss_pd', 'loss_ndd', 'loss_mld', 'loss_led_cd', 'loss_led_id']


def test_a_timm_teacher_distils_into_an_mmpretrain_student(teacher_files, tmp_work_dir):
    cfg = two_iterations(
        leaf('l2d_multidigits_timm_teacher'), tmp_work_dir, teacher_files['timm_teacher']
    )
    runner = build_runner(with_3d_losses(cfg))
    assert type(runner.model.teacher.backbone).__name__ == 'TimmBackbone'
    assert type(runner.model.student.backbone).__name__ == 'ResNet_CIFAR'
    runner.train()
    assert runner.iter == 2
    logged = runner.message_hub.log_scalars
    for key in LOGGED:
        assert torch.isfinite(torch.tensor(logged[f'train/{key}'].current())), key
    # The teacher is the file's, untouched by training.
    saved = torch.load(teacher_files['timm_teacher'], weights_only=True)['state_dict']
    for key, value in runner.model.teacher.state_dict().items():
        assert torch.equal(value, saved[key]), key


def test_an_mmpretrain_teacher_distils_into_a_timm_student(teacher_files, tmp_work_dir, tmp_path):
    # The timm student starts from a timm weights file, read by init_weights.
    timm_weights = str(tmp_path / 'mobilenetv2_050.safetensors')
    torch.manual_seed(1)
    save_file(timm.create_model('mobilenetv2_050', output_stride=8).state_dict(), timm_weights)
    cfg = two_iterations(
        leaf('l2d_multidigits_timm_student'), tmp_work_dir, teacher_files['timm_student']
    )
    cfg.model.student = dict(cfg_path=cfg.model.student, backbone=dict(weights=timm_weights))
    runner = build_runner(with_3d_losses(cfg))
    assert type(runner.model.student.backbone).__name__ == 'TimmBackbone'
    runner.model.init_weights()  # what train() does first
    stem = runner.model.student.backbone.model.conv_stem.weight.detach().clone()
    assert torch.equal(stem, load_file(timm_weights)['conv_stem.weight'])
    runner.train()
    assert runner.iter == 2
    assert not torch.equal(runner.model.student.backbone.model.conv_stem.weight, stem)
    logged = runner.message_hub.log_scalars
    for key in LOGGED:
        assert torch.isfinite(torch.tensor(logged[f'train/{key}'].current())), key


#: FitNet's hint at the last stage: a timm student's second stage (4x4) is smaller than the demo
#: teacher's (16x16), which HintConnector cannot regress onto.
HINT_AT_STAGE4 = """
model = dict(
    connectors=dict(s_hint=dict(type='HintConnector', source='s_stage4', target='t_stage4')),
    distill_losses=dict(
        fitnet=dict(type='FitNetLoss', inputs=dict(s_feats='s_hint', t_feats='t_stage4'))
    ),
)
"""


@pytest.mark.parametrize(
    'method, pair',
    [('fitnet', 'timm_student'), ('reviewkd', 'timm_teacher'), ('rkd', 'timm_student')],
)
def test_feature_methods_step_on_timm_stage_taps(method, pair, tmp_path):
    config = tmp_path / f'{method}_{pair}.py'
    if method == 'fitnet' and pair == 'timm_student':
        config.write_text(f"_base_ = ['{PAIRS}/multidigits_{pair}.py']\n{HINT_AT_STAGE4}")
    else:
        config.write_text(
            f"_base_ = ['{PAIRS}/multidigits_{pair}.py', "
            f"'{REPO}/configs/_base_/methods/{method}.py']\nmodel = _base_.method\n"
        )
    with cheap_default_init():
        losses = distiller_step(str(config), 32, batch=4)
    assert f'loss_{method}' in losses and losses[f'loss_{method}'].requires_grad


def test_the_torchvision_teacher_config_loads_a_torchvision_file(tmp_path):
    import torchvision

    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=10).eval()
    path = str(tmp_path / 'torchvision_resnet18.pth')
    torch.save(net.state_dict(), path)
    cfg = Config.fromfile(leaf('3d_multidigits_torchvision_teacher'))
    cfg.model.teacher_ckpt.path = path
    cfg.model.probe_input_size = (32, 32)
    with cheap_default_init():
        distiller = build(cfg.model)
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(distiller.teacher(x, mode='tensor'), net(x))


def test_a_tap_the_timm_model_lacks_is_refused_before_training():
    cfg = Config.fromfile(leaf('3d_multidigits_timm_teacher'))
    cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    cfg.model.teacher_taps = dict(stage5='backbone.feature_maps.4')
    with cheap_default_init(), pytest.raises(KeyError) as error:
        build(cfg.model)
    message = str(error.value)
    assert "teacher has no module 'backbone.feature_maps.4'" in message
    assert 'backbone.feature_maps.3' in message


def test_an_unknown_timm_name_is_refused_before_training():
    cfg = Config.fromfile(leaf('3d_multidigits_timm_student'))
    cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    cfg.model.student = dict(
        cfg_path=cfg.model.student, backbone=dict(model_name='mobilenetv2_O50')
    )
    with pytest.raises(KeyError, match=r"'mobilenetv2_O50' is not a timm model.*mobilenetv2_050"):
        build(cfg.model)


def test_timm_weights_of_another_architecture_are_refused_before_training(tmp_path):
    """``init_weights``, which the Runner calls before the first iteration, reads the file."""
    other = str(tmp_path / 'resnet18.safetensors')
    save_file(timm.create_model('resnet18', channels=(8, 16, 32, 64)).state_dict(), other)
    cfg = Config.fromfile(leaf('3d_multidigits_timm_student'))
    cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    cfg.model.student = dict(cfg_path=cfg.model.student, backbone=dict(weights=other))
    with cheap_default_init():
        distiller = build(cfg.model)
    with pytest.raises(ValueError, match=r"(?s)resnet18\.safetensors' does not fit.*conv_stem"):
        distiller.init_weights()


def test_the_coco_timm_configs_build_without_downloading(monkeypatch):
    def no_download(repo_id):
        raise AssertionError(f'a test downloaded {repo_id}')

    monkeypatch.setattr(timm_backbone, 'hub_weights_file', no_download)
    teacher = Config.fromfile(leaf('coco_timm_convnext_tiny_mldecoder_teacher')).model
    assert teacher.backbone.weights == 'hf-hub:timm/convnext_tiny.in12k_ft_in1k'
    with cheap_default_init():
        losses = distiller_step(leaf('l2d_coco_timm_convnext_tiny_to_resnet34'), 32)
    assert {'loss_mld', 'loss_led_cd', 'loss_led_id'} <= set(losses)
