"""Every config parses; every distillation pair and method builds and takes a training step."""

import glob
import os.path as osp

import pytest
from conftest import REPO, cheap_default_init, distiller_step, multi_label_pairs
from mmengine.config import Config

ALL_CONFIGS = sorted(glob.glob(osp.join(REPO, 'configs', '**', '*.py'), recursive=True))
METHODS = ['3d', 'l2d', 'mld', 'ps', 'mse', 'kd', 'mdkd']
PAIRS = multi_label_pairs()

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


@pytest.mark.parametrize('path', ALL_CONFIGS, ids=lambda p: osp.relpath(p, REPO))
def test_config_parses(path):
    cfg = Config.fromfile(path)
    if osp.sep + '_base_' + osp.sep not in path:  # runnable configs
        assert cfg.default_scope == 'mlkd'
        assert 'model' in cfg and 'train_cfg' in cfg


def test_every_method_has_a_config_for_every_pair():
    for method in METHODS:
        for pair in PAIRS:
            assert osp.isfile(osp.join(REPO, 'configs', method, f'{method}_{pair}.py')), (
                method,
                pair,
            )


@pytest.mark.parametrize('method', METHODS)
def test_every_method_trains_a_step_on_multidigits(method):
    with cheap_default_init():
        losses = distiller_step(
            osp.join(REPO, 'configs', method, f'{method}_multidigits.py'), 32, batch=4
        )
    assert 'loss_cls' in losses and len(losses) >= 2


@pytest.mark.parametrize('pair', [p for p in PAIRS if p != 'multidigits'])
def test_every_paper_pair_builds_and_steps(pair):
    # 3D on each pair of the 3D tables (L2D adds the label-embedding taps: checked on one pair).
    size = 224 if 'swin' in pair else 64
    with cheap_default_init():
        distiller_step(osp.join(REPO, 'configs', '3d', f'3d_{pair}.py'), size)


def test_l2d_on_a_paper_pair_uses_label_embeddings():
    with cheap_default_init():
        losses = distiller_step(
            osp.join(REPO, 'configs', 'l2d', 'l2d_coco_resnet101_to_resnet34.py'), 64
        )
    assert {'loss_led_cd', 'loss_led_id', 'loss_mld'} <= set(losses)
