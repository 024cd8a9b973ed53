"""The ranking benchmark's configs (configs/ranking/): every distilled leaf takes a training step
on its own DigitScenes data, the declared benchmark (mlkd.apis.demo.RANKING) runs exactly these
leaves, and the regime keeps what docs/benchmarks/ranking_search.md chose on val: a teacher trained
on its own clean draw, students whose training labels (and only those) miss hard objects."""

import glob
import json
import os.path as osp

import pytest
from conftest import REPO, cheap_default_init, step_on_own_data
from mmengine.config import Config

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
