"""Each version shim of mlkd.utils.compat, shown to be needed and to work; nothing else patched."""

import importlib.util
import os.path as osp
import pickle
import re
import sys

import pytest
import torch
from conftest import REPO
from mmengine.config import Config
from mmengine.logging import HistoryBuffer
from mmengine.runner.checkpoint import CheckpointLoader

from mlkd.utils import compat, config_paths
from mlkd.utils.version_check import check_versions


def _mmengine_style_checkpoint(path):
    # What the Runner writes: besides tensors, a message hub holding HistoryBuffer objects.
    torch.save(
        {
            'meta': {'epoch': 2, 'iter': 10},
            'state_dict': {'w': torch.ones(2)},
            'message_hub': {'log_scalars': {'loss': HistoryBuffer([1.0, 2.0], [1, 1])}},
        },
        path,
    )


def test_plain_torch_load_rejects_mmengine_checkpoints(tmp_path):
    """Why the shim exists: torch >= 2.6 defaults to weights_only=True."""
    path = str(tmp_path / 'ckpt.pth')
    _mmengine_style_checkpoint(path)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)


def test_local_checkpoint_loader_reads_mmengine_checkpoints_weights_only(tmp_path, monkeypatch):
    """The shim loads them without falling back to a full (code-running) unpickle."""
    path = str(tmp_path / 'ckpt.pth')
    _mmengine_style_checkpoint(path)
    calls = []
    real_load = torch.load
    monkeypatch.setattr(torch, 'load', lambda *a, **kw: calls.append(kw) or real_load(*a, **kw))
    ckpt = CheckpointLoader.load_checkpoint(path, map_location='cpu')
    assert torch.equal(ckpt['state_dict']['w'], torch.ones(2))
    assert isinstance(ckpt['message_hub']['log_scalars']['loss'], HistoryBuffer)
    assert [kw['weights_only'] for kw in calls] == [True]
    # mlkd's allow-list was scoped to the load: none of it stays allowed process-wide.
    from mlkd.utils.checkpoint import safe_globals

    allowed_now = torch.serialization.get_safe_globals()
    assert safe_globals() and not [entry for entry in safe_globals() if entry in allowed_now]


def test_missing_checkpoint_names_the_path(tmp_path):
    missing = str(tmp_path / 'nope.pth')
    with pytest.raises(FileNotFoundError, match='nope.pth'):
        CheckpointLoader.load_checkpoint(missing, map_location='cpu')


class _RunsCode:
    """A pickle payload: unpickling it in full writes a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, 'w'))


def test_a_checkpoint_at_a_url_is_read_weights_only_from_the_hub_cache(tmp_path, monkeypatch):
    """mmengine reads an http(s) checkpoint with torch.hub.load_state_dict_from_url, which
    unpickles in full (code in the file runs); the shim reads the cached download weights-only:
    an mmengine checkpoint loads, one carrying code is refused and its code never runs. (The
    files are put into the hub cache, so nothing is downloaded.)"""
    from mmengine.utils.dl_utils import load_url

    monkeypatch.setattr(torch.hub, 'get_dir', lambda: str(tmp_path / 'hub'))
    (tmp_path / 'hub' / 'checkpoints').mkdir(parents=True)
    _mmengine_style_checkpoint(str(tmp_path / 'hub' / 'checkpoints' / 'good.pth'))
    ckpt = CheckpointLoader.load_checkpoint('https://example.invalid/w/good.pth', 'cpu')
    assert torch.equal(ckpt['state_dict']['w'], torch.ones(2))

    marker = tmp_path / 'code_ran'
    torch.save(
        {'state_dict': {'w': torch.ones(1)}, 'x': _RunsCode(str(marker))},
        str(tmp_path / 'hub' / 'checkpoints' / 'bad.pth'),
    )
    url = 'https://example.invalid/w/bad.pth'
    with pytest.raises(pickle.UnpicklingError, match='bad.pth'):
        CheckpointLoader.load_checkpoint(url, 'cpu')
    assert not marker.exists()
    load_url(url, model_dir=str(tmp_path / 'hub' / 'checkpoints'))  # what mmengine would do
    assert marker.exists()


def _mmengine_package_utils():
    """mmengine's own ``mmengine.utils.package_utils``, executed afresh from its file (the
    imported module's functions may be the shim's by now)."""
    import mmengine.utils.package_utils as imported

    spec = importlib.util.spec_from_file_location('mmengine_package_utils', imported.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_pkg_resources_mmengine_cannot_resolve_package_bases_and_the_shim_can(
    monkeypatch,
):
    """setuptools >= 82 has no pkg_resources (simulated here, whatever this environment has):
    mmengine's lookup then fails on a ``pkg::`` base; the shim, installed because pkg_resources is
    missing, resolves it."""
    import mmengine.config.config as config_module
    import mmengine.hub.hub as hub_module
    import mmengine.utils as utils_module
    import mmengine.utils.package_utils as package_utils

    monkeypatch.setitem(sys.modules, 'pkg_resources', None)  # `import pkg_resources` fails
    assert compat.pkg_resources_missing()
    modules = (package_utils, utils_module, config_module, hub_module)
    for module in modules:  # restored after the test, whatever is installed below
        for name in ('is_installed', 'get_installed_path'):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, getattr(module, name))
    base_config = osp.join(REPO, 'tests', 'data', 'pkg_base_config.py')

    mmengine_own = _mmengine_package_utils()
    with pytest.raises(ImportError):
        mmengine_own.get_installed_path('mmpretrain')
    monkeypatch.setattr(config_module, 'is_installed', mmengine_own.is_installed)
    monkeypatch.setattr(config_module, 'get_installed_path', mmengine_own.get_installed_path)
    with pytest.raises(ImportError):
        Config.fromfile(base_config)

    compat._look_packages_up_without_pkg_resources()
    assert all(
        getattr(module, name) is getattr(config_paths, name)
        for module in modules
        for name in ('is_installed', 'get_installed_path')
        if hasattr(module, name)
    )
    assert Config.fromfile(base_config).model.backbone.type == 'ResNet'
    assert config_paths.is_installed('mmpretrain')
    assert not config_paths.is_installed('surely_not_a_package_xyz')
    assert osp.isdir(config_paths.get_installed_path('mmcv-lite'))


def test_version_conflicts_give_one_readable_message():
    with pytest.raises(ImportError) as info:
        check_versions(
            {'torch': '2.14.1', 'mmengine': '0.9.1', 'mmcv': None, 'mmpretrain': '1.2.0'}
        )
    message = str(info.value)
    assert 'mmengine: 0.9.1 installed, mlkd needs >=0.10.0,<0.11.0' in message
    assert 'mmcv: not installed' in message
    assert 'torch' not in message.split('\n', 1)[1].split('Install')[0]
    check_versions(
        {'torch': '2.14.1', 'mmengine': '0.10.7', 'mmcv': '2.2.0', 'mmpretrain': '1.2.0'}
    )


def test_collect_env_lists_the_stack():
    from mlkd.utils.collect_env import collect_env

    env = collect_env()
    assert env['mlkd']
    assert any(key.startswith('mmpretrain') for key in env)


def test_configs_inherit_mlkd_package_configs(tmp_path):
    """``_base_ = ['mlkd::...']`` resolves (mmengine alone rejects packages outside its table)."""
    config = tmp_path / 'user.py'
    config.write_text(
        "_base_ = ['mlkd::_base_/datasets/multidigits.py']\ntrain_dataloader = dict(batch_size=7)\n"
    )
    cfg = Config.fromfile(str(config))
    assert cfg.train_dataloader.batch_size == 7
    assert cfg.train_dataloader.dataset.type == 'MultiDigits'
    assert cfg.num_classes == 10


def _installed() -> dict:
    """shim name -> whether it is in place in this process (each one's effect is tested above;
    this checks that the named list is what runs)."""
    import mmengine.utils.package_utils as package_utils

    from mlkd.utils import checkpoint

    return {
        'weights-only checkpoint loading': CheckpointLoader._schemes['']
        is checkpoint.load_local_checkpoint
        and CheckpointLoader._schemes['https://'] is checkpoint.load_url_checkpoint,
        'package lookup without pkg_resources': package_utils.get_installed_path
        is config_paths.get_installed_path,
        'mlkd:: config bases': 'mlkd_aware' in Config._get_cfg_path.__qualname__,
    }


def test_import_mlkd_installs_exactly_the_needed_version_shims(monkeypatch):
    """Only version shims, each installed where its condition holds (in this environment), each
    once; the package-lookup shim only where pkg_resources is missing."""
    applied = compat.applied_shims()
    assert applied == tuple(name for name, needed, _ in compat._INSTALLS if needed())
    assert len(set(applied)) == len(applied)
    installed = _installed()
    assert set(installed) == set(compat.SHIMS)
    assert {name for name, present in installed.items() if present} == set(applied), installed
    wrapped = Config._get_cfg_path
    compat.apply()  # idempotent: nothing is wrapped twice
    assert compat.applied_shims() == applied and Config._get_cfg_path is wrapped

    installs = []
    monkeypatch.setattr(
        compat,
        '_INSTALLS',
        tuple(
            (name, needed, lambda name=name: installs.append(name))
            for name, needed, _ in compat._INSTALLS
        ),
    )
    real_find_spec = importlib.util.find_spec
    for pkg_resources_found in (True, False):
        monkeypatch.setattr(
            importlib.util,
            'find_spec',
            lambda name, *a, found=pkg_resources_found: (
                (object() if found else None)
                if name == 'pkg_resources'
                else real_find_spec(name, *a)
            ),
        )
        assert compat.pkg_resources_missing() is not pkg_resources_found
        monkeypatch.setattr(compat, '_applied', [])
        installs.clear()
        compat.apply()
        lookup = 'package lookup without pkg_resources'
        assert installs == [n for n in compat.SHIMS if n != lookup or not pkg_resources_found]


NUMBER_WORDS = ('zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine')


def test_readme_and_docs_state_the_shims_that_import_mlkd_applies():
    """The README once said four patches while eight were applied: the number and the list in the
    README's compatibility notes and in docs/architecture.md are :data:`compat.SHIMS`."""
    word = NUMBER_WORDS[len(compat.SHIMS)]
    for doc in ('README.md', osp.join('docs', 'architecture.md')):
        with open(osp.join(REPO, doc), encoding='utf-8') as f:
            text = f.read()
        counts = re.findall(r'\b(\w+) (?:version )?(?:shims|patches)\b', text)
        stated = [c for c in counts if c in NUMBER_WORDS or c.isdigit()]
        assert stated and all(c in (word, str(len(compat.SHIMS))) for c in stated), (doc, stated)
        bullets = [line[2:] for line in text.splitlines() if line.startswith('* ')]
        for name in compat.SHIMS:
            assert any(b.startswith(name) for b in bullets), (doc, name)
