"""mlkd registries: children of mmpretrain's, mmpretrain classes resolve, plugins load."""

import subprocess
import sys
import textwrap

import pytest
from conftest import MULTIDIGITS_STUDENT, REPO, small_run_cfg
from mmengine.registry import DefaultScope

import mlkd
from mlkd import registry


def test_every_node_is_a_scoped_child_of_mmpretrain():
    import mmpretrain.registry as parent

    for name in registry.__all__:
        if name == 'register_all_modules':
            continue
        node = getattr(registry, name)
        assert node.scope == 'mlkd', name
        assert node.parent is getattr(parent, name), name


def test_mmpretrain_classes_resolve_in_a_fresh_process():
    # A fresh interpreter: nothing imported mmpretrain.models before the lookup, so this fails
    # unless the registry's `locations` make the parent import lazily.
    code = textwrap.dedent("""
        import mlkd
        from mmengine.registry import DefaultScope
        from mlkd.registry import MODELS, METRICS, DATASETS, TRANSFORMS
        DefaultScope.get_instance('probe', scope_name='mlkd')
        for reg, name in [(MODELS, 'ResNet'), (MODELS, 'ImageClassifier'),
                          (METRICS, 'AveragePrecision'), (DATASETS, 'VOC'),
                          (TRANSFORMS, 'RandAugment')]:
            assert reg.get(name) is not None, name
        print('resolved')
    """)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert 'resolved' in out.stdout


def test_unknown_type_names_the_type_and_registry():
    mlkd.register_all_modules()
    with DefaultScope.overwrite_default_scope('mlkd'):
        with pytest.raises(KeyError, match='NoSuchBackbone.*mlkd::model registry'):
            registry.MODELS.build(dict(type='NoSuchBackbone'))


def test_plugin_outside_the_package_trains_via_custom_imports(tmp_path, tmp_work_dir, monkeypatch):
    """A user's loss in their own file, loaded with custom_imports, used in a training run."""
    plugin_dir = tmp_path / 'user_code'
    plugin_dir.mkdir()
    (plugin_dir / 'my_plugin.py').write_text(
        textwrap.dedent("""
        import torch.nn.functional as F
        from torch import nn
        from mlkd.registry import MODELS

        CALLS = []

        @MODELS.register_module()
        class PluginBCELoss(nn.Module):
            def forward(self, cls_score, target, avg_factor=None, **kwargs):
                CALLS.append(cls_score.shape[0])
                return F.binary_cross_entropy_with_logits(cls_score, target, reduction='sum')
    """)
    )
    config = tmp_path / 'plugin_config.py'
    config.write_text(
        textwrap.dedent(f"""
        _base_ = [{MULTIDIGITS_STUDENT!r}]
        custom_imports = dict(imports=['my_plugin'], allow_failed_imports=False)
        model = dict(head=dict(loss=dict(type='PluginBCELoss')))
    """)
    )
    # The user's folder importable as PYTHONPATH would make it, for this test only (undone at its
    # end); in this process, to count the calls the run makes into the plugin.
    monkeypatch.syspath_prepend(str(plugin_dir))
    from mlkd.engine import build_runner

    cfg = small_run_cfg(str(config), tmp_work_dir, epochs=1, train_samples=64, val_samples=32)
    runner = build_runner(cfg)
    runner.train()
    import my_plugin

    assert len(my_plugin.CALLS) == 2  # 64 samples / batch 32, one epoch
