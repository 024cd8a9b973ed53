"""The ranking benchmark's configs (configs/ranking/): every distilled leaf takes a training step
on its own DigitScenes data, the declared benchmark (mlkd.apis.demo.RANKING) runs exactly these
leaves, and the regime keeps what docs/benchmarks/ranking_search.md chose on val: a teacher trained
on its own clean draw, students whose training labels (and only those) miss hard objects. The
task-loss leaves (configs/ranking/task_losses/) are that student on complete labels with each loss."""

import glob
import json
import math
import os.path as osp

import pytest
import torch
from conftest import REPO, build_model, cheap_default_init, step_on_own_data
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmpretrain.structures import DataSample

from mlkd.registry import MODELS

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')

LEAVES = sorted(glob.glob(osp.join(REPO, 'configs', 'ranking', '*.py')))
DISTILLED = [p for p in LEAVES if osp.basename(p) not in ('teacher.py', 'student.py')]


@pytest.mark.parametrize('path', DISTILLED, ids=lambda p: osp.basename(p)[:-3])
def test_ranking_leaf_takes_a_step_on_its_own_data(path):
    with cheap_default_init():
        losses = step_on_own_data(path, dict(num_samples=4, serialize_data=False))
    assert 'loss_cls' in losses


def test_ranking_benchmark_runs_every_leaf():
    from mlkd.apis.demo import RANKING

    declared = sorted(
        osp.join(REPO, 'configs', p.split('::', 1)[1]) for p in RANKING.stages.values()
    )
    assert declared == LEAVES


def _train_and_eval_sets(leaf: str) -> tuple[dict, list[dict]]:
    cfg = Config.fromfile(osp.join(REPO, 'configs', 'ranking', leaf))
    return cfg.train_dataloader.dataset, [cfg.val_dataloader.dataset, cfg.test_dataloader.dataset]


def test_ranking_regime_teacher_sees_a_clean_draw_of_its_own():
    teacher, teacher_eval = _train_and_eval_sets('teacher.py')
    student, student_eval = _train_and_eval_sets('student.py')
    assert tuple(teacher.missed_annotation) == (0.0, 0.0)
    assert teacher.seed != student.seed and teacher.num_samples >= student.num_samples
    easy, hard = student.missed_annotation
    assert easy == 0.0 and 0.0 < hard < 1.0
    # Both networks are scored on the same complete labels.
    for dataset in teacher_eval + student_eval:
        assert tuple(dataset.get('missed_annotation', (0.0, 0.0))) == (0.0, 0.0)
    assert teacher_eval == student_eval


def test_ranking_leaves_hold_the_weights_chosen_on_val():
    # The factor docs/benchmarks/ranking_search.md chose for each method scales every loss term of
    # its method base (the grid's rule: a multi-term method scales all its terms together).
    with open(osp.join(REPO, 'docs', 'benchmarks', 'ranking_search_results.json')) as f:
        choices = json.load(f)['freeze_path_weight_grids']['choices']
    assert sorted(choices) == sorted(osp.basename(p)[:-3] for p in DISTILLED)
    for method, choice in choices.items():
        base = Config.fromfile(osp.join(REPO, 'configs', '_base_', 'methods', f'{method}.py'))
        leaf = Config.fromfile(osp.join(REPO, 'configs', 'ranking', f'{method}.py'))
        for name, loss in base.method.distill_losses.items():
            chosen = leaf.model.distill_losses[name].get('loss_weight', 1.0)
            assert chosen == pytest.approx(loss.get('loss_weight', 1.0) * choice['factor']), (
                method,
                name,
            )
    # KD's temperature was chosen on val before its weight (T 2 over the base's 4).
    kd = Config.fromfile(osp.join(REPO, 'configs', 'ranking', 'kd.py'))
    assert kd.model.distill_losses.kd.temperature == 2.0


TASK_LOSS_LEAVES = sorted(glob.glob(osp.join(REPO, 'configs', 'ranking', 'task_losses', '*.py')))


def test_task_loss_benchmark_runs_every_task_loss_leaf():
    from mlkd.apis.demo import TASK_LOSSES

    declared = sorted(
        osp.join(REPO, 'configs', p.split('::', 1)[1]) for p in TASK_LOSSES.stages.values()
    )
    assert declared == TASK_LOSS_LEAVES
    assert TASK_LOSSES.teacher_stages == ()


@pytest.mark.parametrize('path', TASK_LOSS_LEAVES, ids=lambda p: osp.basename(p)[:-3])
def test_task_loss_leaf_is_the_ranking_student_on_complete_labels_with_its_loss(path):
    student = Config.fromfile(osp.join(REPO, 'configs', 'ranking', 'student.py'))
    leaf = Config.fromfile(path)
    assert tuple(leaf.train_dataloader.dataset.missed_annotation) == (0.0, 0.0)
    # Everything else is the benchmark's student: the network but its loss, the recipe, the data.
    assert {k: v for k, v in leaf.model.head.items() if k != 'loss'} == {
        k: v for k, v in student.model.head.items() if k != 'loss'
    }
    for key in ('optim_wrapper', 'param_scheduler', 'train_cfg', 'val_dataloader', 'seed_key'):
        assert leaf[key] == student[key], key
    assert leaf.val_evaluator == [student.val_evaluator, dict(type='SampleMAP')]
    with cheap_default_init():
        model = build_model(leaf.model)
    model.train()
    g = torch.Generator().manual_seed(0)
    images = torch.rand(3, 3, 32, 32, generator=g)
    samples = [DataSample().set_gt_label(labels) for labels in ([1, 3], [0], [2, 3, 39])]
    loss = model(images, samples, mode='loss')['loss']
    assert type(model.head.loss_module).__name__ == leaf.model.head.loss.type
    assert torch.isfinite(loss)
    loss.backward()
    assert model.backbone.conv1.weight.grad.abs().sum() > 0


@pytest.mark.parametrize('path', TASK_LOSS_LEAVES, ids=lambda p: osp.basename(p)[:-3])
def test_every_task_loss_is_at_the_scale_the_weight_decay_was_set_against(path):
    """The recipe's coupled weight decay was set against BCE summed over the batch; a loss
    averaged over the batch would meet a decay B (or B x C) times stronger. A loss summed over
    the batch doubles when every sample is repeated; Two-way, which only averages, is weighted
    by the batch size."""
    leaf = Config.fromfile(path)
    with DefaultScope.overwrite_default_scope('mlkd'):
        loss = MODELS.build(leaf.model.head.loss)
    if leaf.model.head.loss.type == 'TwoWayMultiLabelLoss':
        assert leaf.model.head.loss.loss_weight == leaf.train_dataloader.batch_size
        return
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 40, generator=g)
    targets = (torch.rand(6, 40, generator=g) < 0.1).float()
    targets[:, 0] = 1.0  # every sample has a positive (the softmax loss skips those without)
    once = loss(logits, targets)
    twice = loss(torch.cat([logits, logits]), torch.cat([targets, targets]))
    torch.testing.assert_close(twice, 2 * once)


SINGLE_POSITIVE_LEAVES = sorted(
    glob.glob(osp.join(REPO, 'configs', 'ranking', 'single_positive', '*.py'))
)


@pytest.mark.parametrize('path', SINGLE_POSITIVE_LEAVES, ids=lambda p: osp.basename(p)[:-3])
def test_single_positive_leaf_trains_the_ranking_student_from_its_loss_alone(path, tmp_path):
    from conftest import TWO_AUGMENTED_BATCHES, small_run_cfg

    from mlkd.engine import build_runner

    cfg = small_run_cfg(path, str(tmp_path), epochs=1, **TWO_AUGMENTED_BATCHES)
    runner = build_runner(cfg)
    runner.train()
    assert runner.iter == 2
    for loss in cfg.model.losses:
        assert math.isfinite(runner.message_hub.get_scalar(f'train/loss_{loss}').current()), loss
    assert runner.message_hub.get_scalar('train/loss_cls').current() == 0  # the head's loss off
    student = Config.fromfile(osp.join(REPO, 'configs', 'ranking', 'student.py'))
    assert cfg.model.classifier.cfg_path.endswith('ranking/student.py')
    leaf = Config.fromfile(path)
    for key in ('val_dataloader', 'test_dataloader'):
        assert leaf[key] == student[key], key

    # The ranking student's one-cycle schedule, stretched to the study's own number of epochs.
    def shape(schedulers):
        return [{k: v for k, v in s.items() if k not in ('total_steps', 'end')} for s in schedulers]

    assert shape(leaf.param_scheduler) == shape(student.param_scheduler)
    epochs = leaf.train_cfg.max_epochs
    assert all(s.total_steps == s.end == epochs for s in leaf.param_scheduler)


def test_each_seed_draws_its_own_single_positive_from_the_complete_labels():
    """The observed positive of each image is drawn once per seed (seed_key lists the draw's
    seed): two seeds keep different positives of the same complete label sets."""
    from mlkd.apis.runs import set_run_seed
    from mlkd.datasets.observed_labels import label_lists_to_matrix
    from mlkd.registry import DATASETS

    path = osp.join(REPO, 'configs', 'ranking', 'single_positive', 'an.py')
    drawn = {}
    for seed in (1, 2):
        cfg = Config.fromfile(path)
        set_run_seed(cfg, seed)
        assert cfg.train_dataloader.sampler.seed == seed
        with DefaultScope.overwrite_default_scope('mlkd'):
            data = DATASETS.build(dict(cfg.train_dataloader.dataset, num_samples=300))
        infos = [data.get_data_info(i) for i in range(len(data))]
        observed = label_lists_to_matrix([i['gt_label'] for i in infos], 40)
        full = label_lists_to_matrix([i['gt_label_full'] for i in infos], 40)
        assert (observed <= full).all() and (observed.sum(1) == 1).all()
        drawn[seed] = (observed, full)
    assert (drawn[1][1] == drawn[2][1]).all()  # the same images and complete labels
    assert (drawn[1][0] != drawn[2][0]).any()  # another positive kept
    assert (drawn[1][1].sum(1) > 1).any()


def test_single_positive_benchmark_runs_every_single_positive_leaf():
    from mlkd.apis.demo import BENCHMARKS, SINGLE_POSITIVE

    declared = sorted(
        osp.join(REPO, 'configs', p.split('::', 1)[1]) for p in SINGLE_POSITIVE.stages.values()
    )
    assert declared == SINGLE_POSITIVE_LEAVES
    assert SINGLE_POSITIVE.teacher_stages == () and BENCHMARKS['single-positive'] is SINGLE_POSITIVE


def test_a_work_dirs_dumped_reviewkd_config_builds_again(tmp_path):
    """A run dumps its config into its work dir (the file ``tools/test.py`` is then given), with
    dict keys in alphabetical order: ReviewKD's fusion came before the pooled feature it reads."""
    from conftest import distiller_step

    dumped = str(tmp_path / 'reviewkd.py')
    Config.fromfile(osp.join(REPO, 'configs', 'ranking', 'reviewkd.py')).dump(dumped)
    connectors = list(Config.fromfile(dumped).model.connectors)
    assert connectors.index('s_abf') < connectors.index('s_pool')  # the order that failed
    losses = distiller_step(dumped, 32)
    assert torch.isfinite(losses['loss_reviewkd'])
