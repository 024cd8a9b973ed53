"""Every stage of tools/demo.py builds (a PS config with an unsupported key once crashed a run)."""

import pytest
from conftest import cheap_default_init
from mmengine.registry import DefaultScope

from mlkd.apis.demo import DEMO
from mlkd.registry import MODELS
from mlkd.utils.cli import load_config

STAGES = DEMO.stages

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


@pytest.mark.parametrize('stage', sorted(STAGES))
def test_every_demo_stage_builds(stage):
    cfg = load_config(STAGES[stage])
    if cfg.model.type == 'SingleTeacherDistiller':
        cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    with DefaultScope.overwrite_default_scope('mlkd'), cheap_default_init():
        model = MODELS.build(cfg.model)
    assert model.data_preprocessor is not None


METHOD_BASES = {
    'KD': 'kd',
    'MSE': 'mse',
    'PS': 'ps',
    'MLD': 'mld',
    'MDKD': 'mdkd',
    '3D': '3d',
    'L2D': 'l2d',
    '3D-paper': '3d',
    'L2D-paper': 'l2d',
}


@pytest.mark.parametrize('stage', sorted(METHOD_BASES))
def test_every_demo_method_keeps_all_terms_of_its_method(stage):
    """A leaf that changes one weight must not drop the method's other terms (an MDKD leaf that
    set the dependency weight once trained without MLD)."""
    cfg = load_config(STAGES[stage])
    method = load_config(f'mlkd::_base_/methods/{METHOD_BASES[stage]}.py').method
    assert set(cfg.model.distill_losses) == set(method.distill_losses)
    for name, loss in cfg.model.distill_losses.items():
        assert loss['type'] == method.distill_losses[name]['type'], name


@pytest.mark.parametrize('stage', ['3D-paper', 'L2D-paper'])
def test_paper_weight_stages_apply_the_method_weights_literally(stage):
    """A ``*-paper`` leaf inherits the val-chosen leaf; it must undo its weights and rescaling."""
    cfg = load_config(STAGES[stage])
    method = load_config(f'mlkd::_base_/methods/{METHOD_BASES[stage]}.py').method
    for name, loss in cfg.model.distill_losses.items():
        assert loss.get('weight_reference') is None, name
        assert loss.get('loss_weight', 1.0) == (
            method.distill_losses[name].get('loss_weight') or 1.0
        ), name


def test_every_distilled_demo_stage_is_listed():
    assert {s for s in STAGES if s not in ('teacher', 'student')} == set(METHOD_BASES)
