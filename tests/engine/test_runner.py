"""MLKDRunner: strict loading, atomic saving, keyed fetch and config text formatted once, chosen by
``runner_type``; a config without it gets mmengine's Runner, untouched by ``import mlkd``."""

import ast
import glob
import os
import os.path as osp

import pytest
import torch
from conftest import (
    MULTIDIGITS_STUDENT,
    REPO,
    config_path,
    file_size_limit,
    small_run_cfg,
    write_jpeg,
)
from mmengine.config import Config
from mmengine.dataset import BaseDataset
from mmengine.runner import Runner

from mlkd.datasets import KeyedDataset, MultiDigits
from mlkd.engine import MLKDRunner, build_runner
from mlkd.utils.checkpoint import CheckpointMismatchError


def _cfg(work_dir, **options):
    cfg = small_run_cfg(
        MULTIDIGITS_STUDENT, str(work_dir), epochs=1, train_samples=32, val_samples=16
    )
    cfg.update(options)
    return cfg


def _base_files(path: str) -> list[str]:
    """The ``_base_`` files a config names (read from its syntax tree, nothing executed)."""
    with open(path, encoding='utf-8') as file:
        tree = ast.parse(file.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', None) == '_base_':
            bases = ast.literal_eval(node.value)
            bases = [bases] if isinstance(bases, str) else bases
            return [osp.normpath(osp.join(osp.dirname(path), base)) for base in bases]
    return []


def _assigns(path: str, name: str) -> bool:
    with open(path, encoding='utf-8') as file:
        tree = ast.parse(file.read(), path)
    return any(
        isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', None) == name
        for node in tree.body
    )


def test_every_shipped_config_selects_the_mlkd_runner():
    """Each config under configs/ (leaves and bases) reaches default_runtime.py, the one file that
    sets runner_type (so no leaf sets it back)."""
    runtime = config_path('_base_', 'default_runtime.py')
    files = sorted(glob.glob(config_path('**', '*.py'), recursive=True))
    setters = [path for path in files if _assigns(path, 'runner_type')]
    assert setters == [runtime]
    with open(runtime, encoding='utf-8') as file:
        assert "runner_type = 'MLKDRunner'" in file.read()

    reaches: dict[str, bool] = {runtime: True}

    def reaches_runtime(path: str) -> bool:
        if path not in reaches:
            reaches[path] = False  # no cycles in configs; guards against one anyway
            reaches[path] = any(reaches_runtime(base) for base in _base_files(path))
        return reaches[path]

    leaves = [path for path in files if f'{os.sep}_base_{os.sep}' not in path]
    assert len(leaves) > 100
    missing = [osp.relpath(path, REPO) for path in leaves if not reaches_runtime(path)]
    assert not missing, missing


@pytest.fixture(scope='module')
def runner(tmp_path_factory):
    """An MLKDRunner of the MultiDigits student (built, not trained)."""
    return build_runner(_cfg(tmp_path_factory.mktemp('mlkd_runner')))


def test_build_runner_picks_the_runner_the_config_names(runner, tmp_path):
    assert type(runner) is MLKDRunner
    assert isinstance(runner.train_dataloader.dataset, KeyedDataset)
    assert isinstance(runner.val_dataloader.dataset, KeyedDataset)
    cfg = _cfg(tmp_path)
    cfg.runner_type = 'NoSuchRunner'
    with pytest.raises(KeyError, match='NoSuchRunner'):
        build_runner(cfg)


def test_runner_loads_checkpoints_strictly(runner, tmp_path):
    """mmengine only warns and goes on with partly random weights; MLKDRunner stops, naming
    the file and the keys; load_strict=False restores the partial load on purpose."""
    state = runner.model.state_dict()
    fitting = str(tmp_path / 'fitting.pth')
    torch.save({'state_dict': state}, fitting)
    del state['head.fc.bias']
    state['neck.extra'] = torch.zeros(1)
    state['backbone.conv1.weight'] = state['backbone.conv1.weight'][:1]
    wrong = str(tmp_path / 'wrong.pth')
    torch.save({'state_dict': state}, wrong)

    runner.load_checkpoint(fitting)
    with pytest.raises(CheckpointMismatchError) as info:
        build_runner(_cfg(tmp_path / 'wrong', load_from=wrong)).load_or_resume()
    message = str(info.value)
    for expected in (
        'wrong.pth',
        'missing keys in source state_dict: head.fc.bias',
        'unexpected key in source state_dict: neck.extra',
        'size mismatch for backbone.conv1.weight',
        'load_strict=False',
    ):
        assert expected in message
    partial = build_runner(_cfg(tmp_path / 'partial', load_from=wrong, load_strict=False))
    partial.load_or_resume()
    assert torch.equal(partial.model.state_dict()['head.fc.weight'], state['head.fc.weight'])


def _save(runner, out_dir, filename):
    # Before train() the optimizer and schedulers are configs, not objects: weights only.
    runner.save_checkpoint(str(out_dir), filename, save_optimizer=False, save_param_scheduler=False)


def test_a_full_disk_while_saving_leaves_the_old_checkpoint_intact(runner, tmp_path):
    """mmengine truncates the destination, then writes: the disk filling up mid-write (here a
    file-size limit) destroys the file it replaces. MLKDRunner keeps the old file and leaves no
    temporary file."""
    _save(runner, tmp_path, 'epoch_3.pth')
    path = tmp_path / 'epoch_3.pth'
    before = path.read_bytes()
    with file_size_limit(len(before) // 2), pytest.raises(OSError):
        _save(runner, tmp_path, 'epoch_3.pth')
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['epoch_3.pth']


def test_config_text_is_formatted_once_and_unchanged(runner, tmp_path, monkeypatch):
    """mmengine formats the same text with yapf for the log, the dumped config and every
    checkpoint; MLKDRunner's config formats it once, byte for byte what mmengine writes, and
    again when the config changes."""
    import mmengine.config.config as config_module

    plain = Config(runner.cfg.to_dict(), filename=runner.cfg.filename)
    plain_text = plain.pretty_text
    assert type(plain) is Config and runner.cfg.pretty_text == plain_text
    calls = []
    real = config_module.FormatCode
    monkeypatch.setattr(
        config_module, 'FormatCode', lambda *a, **kw: calls.append(1) or real(*a, **kw)
    )
    _save(runner, tmp_path, 'a.pth')
    _save(runner, tmp_path, 'b.pth')
    runner.dump_config()
    assert calls == []
    saved = torch.load(str(tmp_path / 'b.pth'), weights_only=False)['meta']['cfg']
    assert saved == plain_text
    runner.cfg.merge_from_dict({'train_cfg.max_epochs': 7})
    assert 'max_epochs=7' in runner.cfg.pretty_text and calls == [1]
    runner.cfg.merge_from_dict({'train_cfg.max_epochs': 1})


def _mmpretrain_cifar_config(tmp_path) -> Config:
    """mmpretrain's own ResNet-18 CIFAR-10 config (no runner_type: mmpretrain's tools build
    ``Runner.from_cfg``), its data a tiny image folder read by mmpretrain's CustomDataset; the
    training set in mmengine's ConcatDataset."""
    from mlkd.utils.config_paths import get_installed_path

    for index, name in enumerate(('cat/a.jpg', 'cat/b.jpg', 'dog/c.jpg', 'dog/d.jpg')):
        write_jpeg(tmp_path / 'images' / name, size=(32, 32), value=40 * index)
    cfg = Config.fromfile(
        osp.join(
            get_installed_path('mmpretrain'),
            '.mim',
            'configs',
            'resnet',
            'resnet18_8xb16_cifar10.py',
        )
    )
    folder = dict(
        type='CustomDataset',
        data_root=str(tmp_path / 'images'),
        pipeline=[dict(type='LoadImageFromFile'), dict(type='PackInputs')],
    )
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[key].update(num_workers=0, persistent_workers=False, batch_size=2, dataset=folder)
    cfg.train_dataloader.dataset = dict(type='ConcatDataset', datasets=[folder])
    cfg.work_dir = str(tmp_path / 'work')
    return cfg


def test_a_config_without_runner_type_gets_mmengines_runner(tmp_path, capsys):
    """``import mlkd`` changes nothing of mmengine that an mmpretrain config runs through: its
    Runner, the datasets and their wrappers fetch as they are, a checkpoint that does not fit
    only warns, checkpoints are saved by mmengine's code (also what CheckpointHook imports to
    publish one), configs are parsed and formatted by mmengine's code."""
    import mmengine.config.config as config_module
    import mmengine.runner as runner_package
    import mmengine.runner.checkpoint as checkpoint_module
    import mmengine.runner.runner as runner_module
    from mmengine.dataset import ClassBalancedDataset, ConcatDataset, RepeatDataset
    from yapf.yapflib import yapf_api

    for method in ('load_checkpoint', 'save_checkpoint', 'build_dataloader'):
        assert getattr(Runner, method).__module__ == 'mmengine.runner.runner', method
    for function in (runner_package.save_checkpoint, runner_module.save_checkpoint):
        assert function is checkpoint_module.save_checkpoint
    assert checkpoint_module.save_checkpoint.__module__ == 'mmengine.runner.checkpoint'
    for dataset_class in (BaseDataset, ConcatDataset, RepeatDataset, ClassBalancedDataset):
        module = dataset_class.__getitem__.__module__
        assert module.startswith('mmengine.dataset.'), (dataset_class, module)
    assert BaseDataset.prepare_data.__module__ == 'mmengine.dataset.base_dataset'
    assert Config._is_lazy_import.__qualname__ == 'Config._is_lazy_import'
    assert Config._is_lazy_import.__module__ == 'mmengine.config.config'
    assert config_module.FormatCode is yapf_api.FormatCode

    runner = build_runner(_mmpretrain_cifar_config(tmp_path))
    assert type(runner) is Runner
    dataset = runner.train_dataloader.dataset
    assert type(dataset) is ConcatDataset and type(dataset.datasets[0]).__name__ == 'CustomDataset'
    assert set(dataset[0]) == {'inputs', 'data_samples'}  # fetched by mmengine's code alone

    state = runner.model.state_dict()
    del state['head.fc.bias']
    wrong = str(tmp_path / 'wrong.pth')
    torch.save({'state_dict': state}, wrong)
    capsys.readouterr()
    runner.load_checkpoint(wrong)  # no error: mmengine prints the mismatch and goes on
    printed = capsys.readouterr().out
    assert 'do not match exactly' in printed and 'missing keys in source state_dict' in printed


def test_epoch_keyed_sampler_refuses_a_dataset_that_ignores_its_keys():
    """Under mmengine's Runner the keys would be dropped silently; the sampler says so."""
    from mmengine.registry import DefaultScope

    loader = dict(
        dataset=dict(type='MultiDigits', num_samples=8),
        sampler=dict(type='EpochKeyedSampler', shuffle=True),
        batch_size=4,
    )
    with DefaultScope.overwrite_default_scope('mlkd'):
        with pytest.raises(TypeError, match=r'\(MultiDigits\).*MLKDRunner'):
            Runner.build_dataloader(loader, seed=0)
        # mmengine's num_batch_per_epoch slices the wrapped dataset: still keyed.
        sliced = MLKDRunner.build_dataloader(dict(loader, num_batch_per_epoch=1), seed=0)
        # A loader config may hold a dataset built already: MLKDRunner wraps it too.
        given = MLKDRunner.build_dataloader(
            dict(loader, dataset=MultiDigits(num_samples=8)), seed=0
        )
    assert len(sliced.sampler) == 4 and {k.seed for k in sliced.sampler} == {0}
    assert isinstance(given.dataset, KeyedDataset) and type(given.dataset.dataset) is MultiDigits
    assert [type(k).__name__ for k in given.sampler] == ['SampleKey'] * 8


def test_runners_built_in_the_same_second_keep_their_own_logs(tmp_path, monkeypatch):
    # Two runs of one config started within a second (as a fast machine does in a script):
    # mmengine would give both the same `<config>_<timestamp>` logger and visualizer.
    import mmengine.runner.runner as mmengine_runner

    monkeypatch.setattr(mmengine_runner.time, 'time', lambda: 1.8e9)
    runners = []
    for name in ('a', 'b'):
        cfg = _cfg(tmp_path / name)
        cfg.pop('experiment_name')  # the config's own name, as `tools/train.py` gives it
        runners.append(MLKDRunner.from_cfg(cfg))
    first, second = runners
    assert second.timestamp == f'{first.timestamp}_1'
    assert second.experiment_name != first.experiment_name
    assert second.logger is not first.logger and second.visualizer is not first.visualizer
    assert osp.dirname(second.log_dir) == str(tmp_path / 'b')
