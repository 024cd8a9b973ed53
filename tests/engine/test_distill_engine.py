"""Distillation through the Runner: teacher evaluation at step 0, student EMA, resume, export,
and two-view batches."""

import os.path as osp

import pytest
import torch
from conftest import (
    MULTIDIGITS_MLD,
    MULTIDIGITS_TEACHER,
    assert_same_state,
    build_model,
    config_path,
    load_tool,
    small_run_cfg,
    whole_and_resumed_runs,
)
from mmengine.config import Config
from mmpretrain.structures import DataSample

import mlkd
from mlkd.engine import build_runner


def _distill_cfg(work_dir, teacher_ckpt, epochs=1, **kw):
    cfg = small_run_cfg(
        MULTIDIGITS_MLD, work_dir, epochs=epochs, train_samples=64, val_samples=32, **kw
    )
    cfg.model.teacher_ckpt = teacher_ckpt
    return cfg


@pytest.fixture(scope='module')
def with_and_without_teacher_evaluation(tmp_path_factory, multidigits_teacher_ckpt):
    """One epoch of MLD with augmentation, with and without the TeacherEvalHook."""
    root = tmp_path_factory.mktemp('teacher_eval')
    runners = {}
    for name, keep in (('with', True), ('without', False)):
        cfg = _distill_cfg(str(root / name), multidigits_teacher_ckpt, augment=True)
        if not keep:
            cfg.custom_hooks = [h for h in cfg.custom_hooks if h['type'] != 'TeacherEvalHook']
        runners[name] = build_runner(cfg)
        runners[name].train()
    return runners


def test_teacher_is_evaluated_before_the_first_step(
    with_and_without_teacher_evaluation, multidigits_teacher_ckpt, tmp_work_dir
):
    runner = with_and_without_teacher_evaluation['with']
    teacher_map = runner.message_hub.get_scalar('teacher/mAP').current()
    # Independent check: evaluate the same checkpoint as a plain classifier.
    cfg = small_run_cfg(
        MULTIDIGITS_TEACHER, tmp_work_dir, epochs=1, train_samples=64, val_samples=32
    )
    cfg.load_from = multidigits_teacher_ckpt
    metrics = build_runner(cfg).val()
    assert teacher_map == pytest.approx(metrics['mAP'], abs=1e-6)


def test_teacher_evaluation_does_not_change_training(with_and_without_teacher_evaluation):
    """The hook's val pass must leave the RNG streams alone: same weights with and without it."""
    runners = with_and_without_teacher_evaluation
    assert 'teacher/mAP' in runners['with'].message_hub.log_scalars
    assert 'teacher/mAP' not in runners['without'].message_hub.log_scalars
    assert_same_state(runners['with'].model, runners['without'].model, atol=0)


def test_distiller_resume_equals_uninterrupted_run(tmp_path, multidigits_teacher_ckpt):
    whole, resumed = whole_and_resumed_runs(
        lambda work, epochs: _distill_cfg(work, multidigits_teacher_ckpt, epochs), tmp_path
    )
    assert_same_state(resumed.model, whole.model)


def test_student_ema_and_export_load_into_plain_mmpretrain(
    tmp_work_dir, multidigits_teacher_ckpt, tmp_path
):
    cfg = _distill_cfg(tmp_work_dir, multidigits_teacher_ckpt)
    cfg.custom_hooks = list(cfg.custom_hooks) + [
        dict(type='StudentEMAHook', momentum=0.5, priority='ABOVE_NORMAL')
    ]
    runner = build_runner(cfg)
    runner.train()
    hook = next(h for h in runner.hooks if type(h).__name__ == 'StudentEMAHook')
    ema_keys = set(hook.ema_model.module.state_dict())
    assert ema_keys == set(runner.model.student.state_dict())  # the teacher is not averaged
    ckpt = torch.load(osp.join(tmp_work_dir, 'epoch_1.pth'), weights_only=False)
    assert all(k.startswith('module.') for k in ckpt['ema_state_dict'] if k != 'steps')
    # The checkpoint's student weights are the EMA ones, the raw ones sit in ema_state_dict.
    key = 'backbone.conv1.weight'
    torch.testing.assert_close(
        ckpt['state_dict']['student.' + key], hook.ema_model.module.state_dict()[key]
    )

    export = load_tool('export_student')
    out = str(tmp_path / 'student.pth')
    export.export_student(osp.join(tmp_work_dir, 'epoch_1.pth'), out)
    exported = torch.load(out, weights_only=True)
    mlkd.register_all_modules()
    plain = build_model(Config.fromfile(config_path('multidigits', 'mldecoder_student.py')).model)
    plain.load_state_dict(exported['state_dict'], strict=True)
    assert exported['meta']['classes'] == [str(i) for i in range(10)]


def test_export_refuses_a_plain_classifier_checkpoint(multidigits_teacher_ckpt, tmp_path):
    export = load_tool('export_student')
    with pytest.raises(ValueError, match='not a distiller checkpoint'):
        export.export_student(multidigits_teacher_ckpt, str(tmp_path / 'x.pth'))


def test_two_view_batches_are_normalised_per_view():
    mlkd.register_all_modules()
    pre = build_model(
        dict(
            type='MultiViewClsDataPreprocessor',
            num_classes=10,
            mean=[10.0, 20.0, 30.0],
            std=[2.0, 4.0, 5.0],
            to_rgb=True,
            to_onehot=True,
        )
    )
    weak = [torch.randint(0, 255, (3, 8, 8), dtype=torch.uint8) for _ in range(2)]
    strong = [torch.randint(0, 255, (3, 8, 8), dtype=torch.uint8) for _ in range(2)]
    samples = [DataSample().set_gt_label([1, 2]), DataSample().set_gt_label([0])]
    # The collated layout of mmengine's pseudo_collate: one sequence of images per view.
    out = pre({'inputs': [tuple(weak), tuple(strong)], 'data_samples': samples})
    mean = torch.tensor([10.0, 20.0, 30.0]).view(1, 3, 1, 1)
    std = torch.tensor([2.0, 4.0, 5.0]).view(1, 3, 1, 1)
    for view, raw in zip(out['inputs'], (weak, strong)):
        expected = (torch.stack(raw).float().flip(1) - mean) / std  # BGR -> RGB, then normalise
        torch.testing.assert_close(view, expected)
    assert out['data_samples'][0].gt_score.tolist() == [0, 1, 1] + [0] * 7
    # A batch given sample by sample ([[weak, strong], x3]) has views of 3 images for 3 samples
    # only when its size equals the number of views; otherwise it is refused.
    three = samples + [DataSample().set_gt_label([4])]
    with pytest.raises(ValueError, match=r'views of \[2, 2, 2\] images for 3 samples'):
        pre(
            {
                'inputs': [[w, s] for w, s in zip(weak + weak[:1], strong + strong[:1])],
                'data_samples': three,
            }
        )


def test_a_zero_weight_distiller_trains_the_student_exactly_as_the_plain_config(tmp_path):
    """Same seed, same data: the distiller's student starts from the plain student's weights
    (building the teacher does not consume the random stream) and, with the distillation
    weight at 0, ends bit-identical."""
    from mlkd.models.utils import unwrap_model

    plain = small_run_cfg(
        config_path('multidigits', 'mldecoder_student.py'),
        str(tmp_path / 'plain'),
        epochs=1,
        train_samples=64,
        val_samples=32,
    )
    distilled = small_run_cfg(
        MULTIDIGITS_MLD, str(tmp_path / 'mld'), epochs=1, train_samples=64, val_samples=32
    )
    distilled.model.teacher_ckpt, distilled.model.allow_random_teacher = None, True
    distilled.model.distill_losses.mld.loss_weight = 0.0
    runners = []
    for cfg in (plain, distilled):  # the Runner seeds when it is built: build, then train
        runners.append(build_runner(cfg))
        runners[-1].train()
    student = unwrap_model(runners[1].model).student
    assert_same_state(student, unwrap_model(runners[0].model), atol=0)
