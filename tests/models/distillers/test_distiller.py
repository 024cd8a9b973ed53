"""SingleTeacherDistiller: frozen teacher, strict loading, taps, loss contract, export."""

import copy

import pytest
import torch
from conftest import DIGITS_STUDENT_CFG, DIGITS_TEACHER_CFG, build_model, digits_distiller
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmpretrain.structures import DataSample
from torch import nn

import mlkd
import mlkd.models  # noqa: E402,F401
from mlkd.models.losses.base import RoutedLoss
from mlkd.registry import MODELS


@MODELS.register_module(force=True)
class _ProbeLoss(RoutedLoss):
    """Test loss: logit MSE plus a trainable connector sized by the probe."""

    def __init__(self, s_channels, t_channels, loss_weight=1.0):
        super().__init__(loss_weight)
        self.connector = nn.Linear(s_channels['pooled'], t_channels['pooled'])
        self.seen = {}

    def compute(self, s_logits, t_logits, s_pooled, t_pooled, gt):
        self.seen = dict(s_logits=s_logits, t_logits=t_logits, gt=gt)
        feat = (self.connector(s_pooled) - t_pooled).pow(2).mean()
        return (s_logits - t_logits).pow(2).mean() + feat


@MODELS.register_module(force=True)
class _DictLoss(RoutedLoss):
    terms = ('a', 'b')

    def compute(self, s_logits, t_logits):
        return {'a': (s_logits - t_logits).abs().mean(), 'b': s_logits.sum() * 0}


def _samples(batch, num_classes=10):
    samples = []
    for i in range(batch):
        sample = DataSample().set_gt_label([i % num_classes, (i + 3) % num_classes])
        sample.set_gt_score(
            torch.zeros(num_classes).index_fill_(
                0, torch.tensor([i % num_classes, (i + 3) % num_classes]), 1.0
            )
        )
        samples.append(sample)
    return samples


def _distiller(**kwargs):
    losses = dict(probe=dict(type='_ProbeLoss', loss_weight=2.0), pair=dict(type='_DictLoss'))
    return digits_distiller(**{'distill_losses': losses, **kwargs})


def _teacher_checkpoint(tmp_path, prefix=''):
    teacher = build_model(Config.fromfile(DIGITS_TEACHER_CFG).model)
    state = {prefix + k: v for k, v in teacher.state_dict().items()}
    path = str(tmp_path / 'teacher.pth')
    torch.save({'state_dict': state, 'meta': {'epoch': 1}}, path)
    return path, teacher


def test_teacher_frozen_in_eval_and_survives_init_weights(tmp_path):
    path, reference = _teacher_checkpoint(tmp_path)
    model = _distiller(teacher_ckpt=path)
    model.init_weights()
    model.train()
    assert not model.teacher.training
    assert all(m.training for m in model.student.modules())
    assert not any(p.requires_grad for p in model.teacher.parameters())
    for key, value in reference.state_dict().items():
        torch.testing.assert_close(model.teacher.state_dict()[key], value)


@pytest.mark.parametrize('prefix', ['module.', 'student.'])
def test_teacher_checkpoint_prefixes_are_handled(tmp_path, prefix):
    path, reference = _teacher_checkpoint(tmp_path, prefix)
    model = _distiller(teacher_ckpt=path)
    key = next(iter(reference.state_dict()))
    torch.testing.assert_close(model.teacher.state_dict()[key], reference.state_dict()[key])


def test_a_checkpoint_that_does_not_fit_lists_the_keys(tmp_path):
    path, _ = _teacher_checkpoint(tmp_path)
    ckpt = torch.load(path, weights_only=False)
    ckpt['state_dict'].pop('head.fc.weight')
    ckpt['state_dict']['extra.weight'] = torch.zeros(1)
    torch.save(ckpt, path)
    with pytest.raises(
        ValueError,
        match=r"missing keys: \['head.fc.weight'\][\s\S]*"
        r"unexpected keys: \['extra.weight'\]",
    ):
        _distiller(teacher_ckpt=path)


def test_probe_sizes_connectors_before_training_and_keeps_modes():
    model = _distiller()
    assert model.distill_losses['probe'].connector.in_features == 128
    assert model.distill_losses['probe'].connector.out_features == 192
    assert model.student.training and not model.teacher.training


def test_loss_logs_every_term_and_only_the_student_gets_gradients():
    torch.manual_seed(0)
    model = _distiller(task_loss_weight=0.5)
    model.train()
    samples = _samples(4)
    losses = model.loss(torch.rand(4, 3, 32, 32), samples)
    assert set(losses) == {'loss_cls', 'loss_probe', 'loss_pair_a', 'loss_pair_b'}
    sum(losses.values()).backward()
    assert all(p.grad is None for p in model.teacher.parameters())
    assert model.student.backbone.conv1.weight.grad is not None
    assert model.distill_losses['probe'].connector.weight.grad is not None
    seen = model.distill_losses['probe'].seen
    assert not seen['t_logits'].requires_grad and seen['s_logits'].requires_grad
    torch.testing.assert_close(seen['gt'], torch.stack([s.gt_score for s in samples]))


def test_task_loss_weight_scales_the_student_loss():
    torch.manual_seed(0)
    inputs, samples = torch.rand(2, 3, 32, 32), _samples(2)
    model = _distiller(task_loss_weight=1.0)
    full = model.loss(inputs, samples)['loss_cls']
    model.task_loss_weight = 0.25
    torch.testing.assert_close(model.loss(inputs, samples)['loss_cls'], 0.25 * full)


def test_teacher_logits_equal_a_plain_teacher_forward():
    model = _distiller()
    model.train()
    inputs = torch.rand(3, 3, 32, 32)
    model.loss(inputs, _samples(3))
    with torch.no_grad():
        expected = model.teacher(inputs, mode='tensor')
    torch.testing.assert_close(model.distill_losses['probe'].seen['t_logits'], expected)


def test_unknown_loss_argument_fails_at_build_naming_it():
    @MODELS.register_module(force=True)
    class _NeedsEmbedding(RoutedLoss):
        def compute(self, s_label_emb, t_logits):
            return s_label_emb.sum()

    with pytest.raises(ValueError, match="needs \\['s_label_emb'\\].*student_taps"):
        _distiller(distill_losses=dict(x=dict(type='_NeedsEmbedding')))


def test_extra_taps_by_module_path_reach_the_loss():
    @MODELS.register_module(force=True)
    class _StageLoss(RoutedLoss):
        def compute(self, s_stage, t_stage):
            self.shapes = (s_stage.shape, t_stage.shape)
            return s_stage.mean() * 0

    model = _distiller(
        distill_losses=dict(x=dict(type='_StageLoss')),
        student_taps=dict(stage='backbone.layer2'),
        teacher_taps=dict(stage='backbone.layer2'),
    )
    model.loss(torch.rand(2, 3, 32, 32), _samples(2))
    assert model.distill_losses['x'].shapes == ((2, 32, 16, 16), (2, 48, 16, 16))
    # Hooks are removed after each step: a deep copy (EMA) carries none.
    assert not any(m._forward_hooks for m in copy.deepcopy(model).modules())


def test_taps_declared_by_the_network_configs_reach_the_loss_and_can_be_repointed():
    # The student and teacher come from config paths whose model base declares the ResNet's stage
    # taps (`taps`, configs/_base_/taps/digits_resnet.py): no tap is given here, and one given
    # here under a declared name takes the new path.
    @MODELS.register_module(force=True)
    class _DeclaredStageLoss(RoutedLoss):
        def compute(self, s_stage1, t_stage3):
            self.shapes = (s_stage1.shape, t_stage3.shape)
            return s_stage1.mean() * 0

    losses = dict(x=dict(type='_DeclaredStageLoss'))
    model = _distiller(distill_losses=losses)
    model.loss(torch.rand(2, 3, 32, 32), _samples(2))
    assert model.distill_losses['x'].shapes == ((2, 16, 32, 32), (2, 96, 8, 8))
    repointed = _distiller(distill_losses=losses, student_taps=dict(stage1='backbone.layer2'))
    repointed.loss(torch.rand(2, 3, 32, 32), _samples(2))
    assert repointed.distill_losses['x'].shapes[0] == (2, 32, 16, 16)


def test_predict_is_the_students():
    model = _distiller().eval()
    inputs = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        out = model(inputs, _samples(2), mode='predict')
        expected = torch.sigmoid(model.student(inputs, mode='tensor'))
    torch.testing.assert_close(torch.stack([o.pred_score for o in out]), expected)


def test_views_select_the_input_of_each_net():
    model = _distiller(views=dict(teacher=0, student=1))
    weak, strong = torch.rand(2, 3, 32, 32), torch.rand(2, 3, 32, 32)
    model.loss([weak, strong], _samples(2))
    with torch.no_grad():
        torch.testing.assert_close(
            model.distill_losses['probe'].seen['t_logits'], model.teacher(weak, mode='tensor')
        )
    with pytest.raises(TypeError, match='views'):
        _distiller().loss([weak, strong], _samples(2))


def test_networks_from_a_config_path_with_overrides():
    model = _distiller(
        student=dict(
            cfg_path=DIGITS_STUDENT_CFG,
            head=dict(num_classes=10),
            backbone=dict(base_channels=8, stem_channels=8),
        ),
        distill_losses=dict(pair=dict(type='_DictLoss')),
    )
    assert model.student.backbone.layer1[0].conv1.out_channels == 8
    assert model.student.head.loss_module.__class__.__name__ == 'BinaryCrossEntropySumLoss'


def test_optimizer_holds_only_trainable_parameters():
    from mmengine.optim import build_optim_wrapper

    model = _distiller()
    with DefaultScope.overwrite_default_scope('mlkd'):
        wrapper = build_optim_wrapper(
            model,
            dict(
                constructor='FrozenAwareOptimWrapperConstructor',
                optimizer=dict(type='Adam', lr=1e-3, weight_decay=1e-4),
                paramwise_cfg=dict(norm_decay_mult=0.0, bias_decay_mult=0.0),
            ),
        )
    in_optimizer = {id(p) for g in wrapper.param_groups for p in g['params']}
    assert not any(id(p) in in_optimizer for p in model.teacher.parameters())
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert all(id(p) in in_optimizer for p in trainable)
    frozen_in_optimizer = [
        p for g in wrapper.param_groups for p in g['params'] if not p.requires_grad and p.dim() > 0
    ]
    assert not frozen_in_optimizer
