"""Each compatibility shim of mlkd.utils.compat, shown to be needed and to work."""

import os
import os.path as osp
import pickle
import re
import resource
import signal

import pytest
import torch
from conftest import REPO, config_path, small_run_cfg
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


def test_a_full_disk_while_saving_leaves_the_old_checkpoint_intact(tmp_path):
    """mmengine truncates the destination, then writes: the disk filling up mid-write (here a
    file-size limit) destroyed the file. Now the old file stays and no temporary file is left."""
    import mmengine.runner.runner as runner_module

    path = str(tmp_path / 'epoch_3.pth')
    runner_module.save_checkpoint({'state_dict': {'w': torch.ones(4)}}, path)
    with open(path, 'rb') as file:
        before = file.read()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failing write, not a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, hard))
    try:
        with pytest.raises((OSError, RuntimeError)):
            runner_module.save_checkpoint({'state_dict': {'w': torch.zeros(1 << 20)}}, path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    with open(path, 'rb') as file:
        assert file.read() == before
    assert os.listdir(tmp_path) == ['epoch_3.pth']


def test_runner_loads_checkpoints_strictly(tmp_path):
    """mmengine only warned and went on with partly random weights; now the run stops, naming
    the file and the keys; load_strict=False restores the partial load on purpose."""
    from mmengine.runner import Runner

    from mlkd.utils.checkpoint import CheckpointMismatchError

    def runner(load_from, **options):
        cfg = small_run_cfg(
            config_path('multidigits', 'resnet_student.py'), str(tmp_path / 'w'), epochs=1
        )
        cfg.update(load_from=load_from, **options)
        return Runner.from_cfg(cfg)

    state = runner(None).model.state_dict()
    fitting = str(tmp_path / 'fitting.pth')
    torch.save({'state_dict': state}, fitting)
    del state['head.fc.bias']
    state['neck.extra'] = torch.zeros(1)
    state['backbone.conv1.weight'] = state['backbone.conv1.weight'][:1]
    wrong = str(tmp_path / 'wrong.pth')
    torch.save({'state_dict': state}, wrong)

    runner(fitting).load_or_resume()
    with pytest.raises(CheckpointMismatchError) as info:
        runner(wrong).load_or_resume()
    message = str(info.value)
    for expected in (
        'wrong.pth',
        'missing keys in source state_dict: head.fc.bias',
        'unexpected key in source state_dict: neck.extra',
        'size mismatch for backbone.conv1.weight',
        'load_strict=False',
    ):
        assert expected in message
    partial = runner(wrong, load_strict=False)
    partial.load_or_resume()
    assert torch.equal(partial.model.state_dict()['head.fc.weight'], state['head.fc.weight'])


def test_missing_checkpoint_names_the_path(tmp_path):
    missing = str(tmp_path / 'nope.pth')
    with pytest.raises(FileNotFoundError, match='nope.pth'):
        CheckpointLoader.load_checkpoint(missing, map_location='cpu')


def test_pkg_resources_is_gone_and_package_configs_still_load():
    with pytest.raises(ImportError):
        import pkg_resources  # noqa: F401
    cfg = Config.fromfile(osp.join(REPO, 'tests', 'data', 'pkg_base_config.py'))
    assert cfg.model.backbone.type == 'ResNet'
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


def test_mmengine_datasets_and_wrappers_fetch_keyed_indices_under_their_key():
    """Every mmengine dataset, wrapped or not, runs a SampleKey's pipeline under its key."""
    from conftest import draw_all, record_draws
    from mmengine.dataset import BaseDataset, ClassBalancedDataset, ConcatDataset, RepeatDataset

    from mlkd.datasets import MultiDigits
    from mlkd.utils.sample_seed import SampleKey, sample_random_state

    for dataset_class in (BaseDataset, ConcatDataset, RepeatDataset, ClassBalancedDataset):
        assert getattr(dataset_class.__getitem__, 'keyed', False), dataset_class
    dataset = MultiDigits(num_samples=4, pipeline=[record_draws])
    for outer in (
        dataset,
        ConcatDataset([dataset, dataset]),
        RepeatDataset(dataset, 2),
        ClassBalancedDataset(dataset, oversample_thr=0.0),
    ):
        index = len(outer) - 1
        with sample_random_state(3, 1, index):
            expected = draw_all()
        assert outer[SampleKey(index, seed=3, epoch=1)]['draws'] == expected, type(outer)
        assert outer[index]['draws'] != expected  # a plain index is not keyed


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


#: patch name -> whether it is in place in this process (each one's effect is tested above and in
#: tests/tools/test_bad_inputs.py; this checks that the named list is what runs).
def _installed() -> dict:
    import mmengine.config.config as config_module
    import mmengine.runner.runner as runner_module
    import mmengine.utils.package_utils as package_utils
    from mmengine.dataset import BaseDataset, ConcatDataset

    from mlkd.utils import checkpoint

    return {
        'weights-only loading of local checkpoints': CheckpointLoader._schemes['']
        is checkpoint.load_local_checkpoint,
        'atomic checkpoint saving': runner_module.save_checkpoint is checkpoint.save_checkpoint,
        'strict loading of checkpoints into the model': runner_module.Runner.load_checkpoint
        is checkpoint.strict_runner_load_checkpoint,
        'package lookup without pkg_resources': package_utils.get_installed_path
        is config_paths.get_installed_path,
        'mlkd:: config bases': 'mlkd_aware' in Config._get_cfg_path.__qualname__,
        'config syntax errors name the file': 'syntax_checked'
        in Config._is_lazy_import.__qualname__,
        'sample loading errors name the sample': 'sample_named'
        in BaseDataset.prepare_data.__qualname__,
        'keyed dataset fetch': getattr(BaseDataset.__getitem__, 'keyed', False)
        and getattr(ConcatDataset.__getitem__, 'keyed', False),
        'config text formatted once': hasattr(config_module.FormatCode, 'cache_info'),
    }


NUMBER_WORDS = (
    'zero',
    'one',
    'two',
    'three',
    'four',
    'five',
    'six',
    'seven',
    'eight',
    'nine',
    'ten',
    'eleven',
    'twelve',
)


def test_readme_and_docs_state_the_patches_that_import_mlkd_applies():
    """The README once said four patches while eight were applied: the number and the list of the
    README's compatibility notes and of docs/architecture.md are the applied ones."""
    applied = compat.applied_patches()
    assert applied == compat.PATCHES and len(set(applied)) == len(applied)
    installed = _installed()
    assert set(installed) == set(applied)
    assert all(installed.values()), [name for name, ok in installed.items() if not ok]
    wrapped = Config._get_cfg_path
    compat.apply()  # idempotent: nothing is wrapped twice
    assert compat.applied_patches() == applied and Config._get_cfg_path is wrapped
    word = NUMBER_WORDS[len(applied)]
    for doc in ('README.md', osp.join('docs', 'architecture.md')):
        with open(osp.join(REPO, doc), encoding='utf-8') as f:
            text = f.read()
        counts = re.findall(r'\b(\w+) (?:small, tested )?patches\b', text)
        stated = [c for c in counts if c in NUMBER_WORDS or c.isdigit()]
        assert stated and all(c in (word, str(len(applied))) for c in stated), (doc, stated)
        bullets = [line[2:] for line in text.splitlines() if line.startswith('* ')]
        for name in applied:
            assert any(b.startswith(name) for b in bullets), (doc, name)


def test_config_text_is_formatted_once_and_unchanged():
    """mmengine formats the same text with yapf at every checkpoint; the memoised formatter returns
    what yapf returns, byte for byte, and formats a text seen before without calling yapf."""
    import mmengine.config.config as config_module
    from yapf.yapflib.yapf_api import FormatCode

    cfg = Config.fromfile(osp.join(REPO, 'configs', 'demo', '3d.py'))
    cfg.merge_from_dict({'model.distill_losses.pd.loss_weight': 7.25})  # a text not seen before
    before = config_module.FormatCode.cache_info()
    text = cfg.pretty_text
    middle = config_module.FormatCode.cache_info()
    assert text == cfg.pretty_text
    after = config_module.FormatCode.cache_info()
    assert (middle.misses, after.hits, after.misses) == (
        before.misses + 1,
        middle.hits + 1,
        middle.misses,
    )
    style = dict(
        based_on_style='pep8',
        blank_line_before_nested_class_or_def=True,
        split_before_expression_after_opening_paren=True,
    )
    raw = 'a=dict( b = 1,c=[1,2 ,3])\n'
    assert config_module.FormatCode(raw, style_config=style) == FormatCode(raw, style_config=style)
    # a changed config is formatted anew, not served the old text
    cfg.merge_from_dict({'model.distill_losses.pd.loss_weight': 8.5})
    assert 'loss_weight=8.5' in cfg.pretty_text and 'loss_weight=7.25' not in cfg.pretty_text
