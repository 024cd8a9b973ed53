"""configs/multi_teacher: the teachers of partial label sets and the students distilled from them.

Every teacher leaf trains a step on its own data, labelled with its label subset; every distilled
MultiDigits leaf builds (random teachers) and takes a step on its own data with every teacher's
losses; the COCO leaf builds its two teachers of all 80 classes. The runs through the Runner (two
steps, a cache per teacher) are tests/engine/test_multi_teacher_runs.py.
"""

import glob
import os.path as osp

import pytest
import torch
from conftest import REPO, build_model, cheap_default_init
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

import mlkd
from mlkd.registry import DATASETS
from mlkd.utils.cli import load_config

FOLDER = osp.join(REPO, 'configs', 'multi_teacher')
LEAVES = sorted(osp.basename(p)[:-3] for p in glob.glob(osp.join(FOLDER, '*.py')))
TEACHERS = {
    'teacher_digits0to6': ('0', '1', '2', '3', '4', '5', '6'),
    'teacher_digits3to9': ('3', '4', '5', '6', '7', '8', '9'),
    'timm_teacher_digits3to9': ('3', '4', '5', '6', '7', '8', '9'),
}
#: Distilled MultiDigits leaves -> (teacher name -> its label set).
STUDENTS = {
    'l2d_digits0to6': {'low': TEACHERS['teacher_digits0to6']},
    'l2d_digits3to9': {'high': TEACHERS['teacher_digits3to9']},
    'l2d_two_teachers': {
        'low': TEACHERS['teacher_digits0to6'],
        'high': TEACHERS['teacher_digits3to9'],
    },
    'l2d_two_teachers_best_ap': {
        'low': TEACHERS['teacher_digits0to6'],
        'high': TEACHERS['teacher_digits3to9'],
    },
    'l2d_resnet_and_timm_teachers': {
        'low': TEACHERS['teacher_digits0to6'],
        'high': TEACHERS['timm_teacher_digits3to9'],
    },
}
SMALL = dict(num_samples=4, serialize_data=False)

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


def test_every_leaf_is_covered_here():
    assert set(LEAVES) == set(TEACHERS) | set(STUDENTS) | {'l2d_coco_two_teachers'}


def _build(cfg_model):
    mlkd.register_all_modules()
    with cheap_default_init():
        return build_model(cfg_model)


def _step(model, dataset):
    model.train()
    batch = model.data_preprocessor(pseudo_collate([dataset[0], dataset[1]]), True)
    losses = model(**batch, mode='loss')
    total = sum(v for k, v in losses.items() if 'loss' in k)
    assert torch.isfinite(total)
    total.backward()
    return losses


@pytest.mark.parametrize('leaf', sorted(TEACHERS))
def test_a_teacher_trains_on_its_label_subset(leaf):
    cfg = load_config(osp.join(FOLDER, f'{leaf}.py'))
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset = cfg[key].dataset
        assert dataset.type == 'LabelSubset' and tuple(dataset.classes) == TEACHERS[leaf], key
        assert dataset.dataset.type == 'MultiDigits' and dataset.dataset.grid == 4, key
    cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = _build(cfg.model)
    train = cfg.train_dataloader.dataset
    with DefaultScope.overwrite_default_scope('mlkd'):
        dataset = DATASETS.build(dict(train, dataset=dict(train.dataset, **SMALL)))
    assert dataset.metainfo['classes'] == TEACHERS[leaf]
    assert model.head.num_classes == model.data_preprocessor.num_classes == 7
    losses = _step(model, dataset)
    assert set(losses) == {'loss'}


@pytest.mark.parametrize('leaf', sorted(STUDENTS))
def test_a_student_steps_with_the_losses_of_every_teacher(leaf):
    cfg = load_config(osp.join(FOLDER, f'{leaf}.py'))
    cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
    for teacher in cfg.model.teachers.values():
        teacher.update(ckpt=None, allow_random=True)
    model = _build(cfg.model)
    with DefaultScope.overwrite_default_scope('mlkd'):
        dataset = DATASETS.build(dict(cfg.train_dataloader.dataset, **SMALL))
    assert model.classes == dataset.metainfo['classes']  # what NumClassesCheckHook checks
    assert {n: s.classes for n, s in model.label_sets.items()} == STUDENTS[leaf]
    if model.label_targets == 'best_val_ap':  # what TeacherEvalHook hands over before training
        model.select_label_teachers(
            {
                n: [0.5 if str(c) in s.classes else float('nan') for c in range(10)]
                for n, s in model.label_sets.items()
            }
        )
    losses = _step(model, dataset)
    expected = {f'loss_{n}_{term}' for n in STUDENTS[leaf] for term in ('mld', 'led_cd', 'led_id')}
    assert expected <= set(losses)
    assert type(
        model.teachers['high' if 'high' in model.teachers else 'low'].backbone
    ).__name__ == ('TimmBackbone' if leaf == 'l2d_resnet_and_timm_teachers' else 'ResNet_CIFAR')


def test_the_coco_leaf_distils_each_class_from_the_better_of_two_teachers():
    cfg = load_config(osp.join(FOLDER, 'l2d_coco_two_teachers.py'))
    assert cfg.model.label_targets == 'best_val_ap'
    assert {n: t.ckpt for n, t in cfg.model.teachers.items()} == {
        'resnet': 'work_dirs/teachers/coco_resnet101_mldecoder',
        'convnext': 'work_dirs/own_teacher/coco_timm_convnext_tiny_mldecoder',
    }
    for teacher in cfg.model.teachers.values():
        teacher.update(ckpt=None, allow_random=True)
    model = _build(cfg.model)
    assert type(model.teachers['convnext'].backbone).__name__ == 'TimmBackbone'
    assert all(labels.student_index == tuple(range(80)) for labels in model.label_sets.values())
    assert [s.output_names for s in model.teacher_sources.values()] == [
        ['t_logits', 't_label_emb']
    ] * 2
