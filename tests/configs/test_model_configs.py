"""Every base model config builds and produces [B, num_classes] scores."""

import glob
import os.path as osp

import pytest
import torch
from conftest import build_model, cheap_default_init, config_path
from mmengine.config import Config

import mlkd

MODEL_FILES = sorted(glob.glob(config_path('_base_', 'models', '*.py')))

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


def test_the_source_papers_backbones_are_covered():
    names = {osp.basename(f)[:-3] for f in MODEL_FILES}
    for expected in (
        'resnet18_ml',
        'resnet34_ml',
        'resnet50_ml',
        'resnet101_ml',
        'mobilenet_v2_ml',
        'shufflenet_v2_ml',
        'repvgg_a0_ml',
        'swin_t_ml',
        'vgg13_bn_ml',
        'digits_resnet_teacher',
        'digits_resnet_student',
    ):
        assert expected in names


@pytest.mark.parametrize('path', MODEL_FILES, ids=lambda p: osp.basename(p)[:-3])
def test_model_builds_and_scores(path):
    mlkd.register_all_modules()
    cfg = Config.fromfile(path)
    model_cfg = cfg.model
    model_cfg.backbone.pop('init_cfg', None)  # no weight download in tests
    digits = 'digits' in path
    size = 32 if digits else 224
    with cheap_default_init():
        model = build_model(model_cfg)
    model.eval()
    with torch.no_grad():
        scores = model(torch.rand(1, 3, size, size), mode='tensor')
    assert scores.shape == (1, model_cfg.head.num_classes)
    assert torch.isfinite(scores).all()
