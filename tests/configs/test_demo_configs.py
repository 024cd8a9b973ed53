"""Every stage of tools/demo.py trains, and every distilled stage keeps its method's terms."""

import ast
import os.path as osp

import pytest
import torch
from conftest import REPO, cheap_default_init, step_on_own_data
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

from mlkd.apis.demo import DEMO
from mlkd.registry import DATASETS, MODELS
from mlkd.utils.cli import load_config
from mlkd.utils.config_paths import resolve_config_path

STAGES = DEMO.stages

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


def _method_base(path: str) -> str | None:
    """The method base (``configs/_base_/methods/<name>.py``) that a config inherits, directly or
    through a leaf it builds on (``3d_paper_weights.py`` on ``3d.py``), read from its ``_base_``."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read())
    bases = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ['_base_']
    )
    for base in [bases] if isinstance(bases, str) else bases:
        if '_base_/methods/' in base:
            return osp.splitext(osp.basename(base))[0]
        if '_base_/' not in base:
            return _method_base(osp.normpath(osp.join(osp.dirname(path), base)))
    return None


#: Distilled stage -> the method base its config inherits.
METHOD_BASES = {
    stage: _method_base(resolve_config_path(path))
    for stage, path in STAGES.items()
    if stage not in ('teacher', 'student')
}


@pytest.mark.parametrize('stage', sorted(STAGES))
def test_every_demo_stage_trains_a_step_on_its_own_data(stage):
    """Each stage builds (a PS config with an unsupported key once crashed a run) and takes a
    training step on a few samples of its own dataset and pipeline: finite losses, every
    configured distillation term among them, gradient in the trained network."""
    path = resolve_config_path(STAGES[stage])
    data = dict(num_samples=4, serialize_data=False)
    with cheap_default_init():
        if stage in METHOD_BASES:
            losses = step_on_own_data(path, data)
            names = load_config(path).model.distill_losses
            assert all(any(k.startswith(f'loss_{name}') for k in losses) for name in names)
            return
        cfg = load_config(path)
        cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
        with DefaultScope.overwrite_default_scope('mlkd'):
            model = MODELS.build(cfg.model)
            dataset = DATASETS.build(dict(cfg.train_dataloader.dataset, **data))
    model.train()
    batch = model.data_preprocessor(pseudo_collate([dataset[0], dataset[1]]), True)
    losses = model(**batch, mode='loss')
    assert set(losses) == {'loss'} and torch.isfinite(losses['loss'])
    losses['loss'].backward()
    assert all(p.grad is not None for p in model.head.parameters() if p.requires_grad)


def test_every_distilled_stage_inherits_a_method_base():
    assert all(METHOD_BASES.values()), METHOD_BASES


@pytest.mark.parametrize('stage', sorted(METHOD_BASES))
def test_every_demo_method_keeps_all_terms_of_its_method(stage):
    """A leaf that changes one weight must not drop the method's other terms (an MDKD leaf that
    set the dependency weight once trained without MLD)."""
    cfg = load_config(resolve_config_path(STAGES[stage]))
    method = load_config(
        osp.join(REPO, 'configs', '_base_', 'methods', f'{METHOD_BASES[stage]}.py')
    ).method
    assert set(cfg.model.distill_losses) == set(method.distill_losses)
    for name, loss in cfg.model.distill_losses.items():
        assert loss['type'] == method.distill_losses[name]['type'], name


@pytest.mark.parametrize('stage', ['3D-paper', 'L2D-paper'])
def test_paper_weight_stages_apply_the_method_weights_literally(stage):
    """A ``*-paper`` leaf inherits the val-chosen leaf; it must undo its weights and rescaling."""
    cfg = load_config(resolve_config_path(STAGES[stage]))
    method = load_config(
        osp.join(REPO, 'configs', '_base_', 'methods', f'{METHOD_BASES[stage]}.py')
    ).method
    for name, loss in cfg.model.distill_losses.items():
        assert loss.get('weight_reference') is None, name
        assert loss.get('loss_weight', 1.0) == (
            method.distill_losses[name].get('loss_weight') or 1.0
        ), name
