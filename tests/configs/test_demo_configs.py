"""Every stage of tools/demo.py builds (a PS config with an unsupported key once crashed a run)."""
import os.path as osp
import sys

import pytest
from mmengine.registry import DefaultScope

from conftest import REPO, cheap_default_init
from mlkd.registry import MODELS
from mlkd.utils.cli import load_config

sys.path.insert(0, osp.join(REPO, 'tools'))
from demo import STAGES  # noqa: E402

sys.path.remove(osp.join(REPO, 'tools'))

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


@pytest.mark.parametrize('stage', sorted(STAGES))
def test_every_demo_stage_builds(stage):
    cfg = load_config(osp.join(REPO, STAGES[stage]))
    if cfg.model.type == 'SingleTeacherDistiller':
        cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    with DefaultScope.overwrite_default_scope('mlkd'), cheap_default_init():
        model = MODELS.build(cfg.model)
    assert model.data_preprocessor is not None
