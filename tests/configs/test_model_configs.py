"""Every base model config builds and produces [B, num_classes] scores."""

import glob
import os.path as osp

import pytest
import torch
from conftest import REPO, build_model, cheap_default_init, config_path
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


def _networks_declaring_taps() -> dict[str, str]:
    """One shipped config (outside ``_base_``) per distinct model that declares ``taps``, plus the
    model bases: a leaf that swaps its backbone must swap its taps too."""
    leaves = sorted(glob.glob(config_path('**', '*.py'), recursive=True))
    chosen = {}
    bases = sorted(glob.glob(config_path('_base_', 'models', '**', '*.py'), recursive=True))
    for path in bases + [p for p in leaves if '/_base_/' not in p]:
        text = open(path).read()
        if '/_base_/' not in path and 'backbone' not in text and 'taps' not in text:
            continue  # a leaf that keeps its base's network and taps
        cfg = Config.fromfile(path)
        if 'taps' in cfg and isinstance(cfg.get('model'), dict) and 'backbone' in cfg.model:
            chosen.setdefault(repr((cfg.model.backbone.to_dict(), cfg.taps.to_dict())), path)
    return {osp.relpath(p, config_path()): p for p in chosen.values()}


NETWORKS_DECLARING_TAPS = _networks_declaring_taps()


@pytest.mark.parametrize(
    'path', sorted(NETWORKS_DECLARING_TAPS.values()), ids=sorted(NETWORKS_DECLARING_TAPS)
)
def test_declared_taps_name_modules_of_the_network(path):
    mlkd.register_all_modules()
    cfg = Config.fromfile(path)
    cfg.model.backbone.pop('init_cfg', None)
    with cheap_default_init():
        model = build_model(cfg.model)
    modules = dict(model.named_modules())
    missing = {
        tap: module for tap, module in cfg.taps.items() if module.split('@')[0] not in modules
    }
    assert not missing, f'{path}: taps naming no module of its network: {missing}'


def test_the_l2d_protocol_ml_decoder_heads_keep_their_queries_frozen():
    """L2D's and the official ML-Decoder's class queries are a random embedding that is never
    trained (requires_grad False): every config of the L2D protocol says so."""
    from mlkd.utils.cli import load_config

    paths = [
        path
        for folder in ('teachers', 'students', 'own_teacher')
        for path in glob.glob(osp.join(REPO, 'configs', folder, '*.py'))
        if "'MLDecoderHead'" in open(path, encoding='utf-8').read()
    ]
    assert paths
    for path in paths:
        assert load_config(path).model.head.query_mode == 'frozen_random', path
