"""tools/cache_teacher.py fills a cache that a training run reads bit-identically to live."""

import glob
import json
import os.path as osp

import pytest
import torch
from conftest import SMALL_TOOL_RUN, load_tool, read_scalars
from mmengine.runner import Runner

from mlkd.teacher_cache import TeacherCacheError
from mlkd.utils.cli import load_config

CONFIG = 'configs/kd/kd_multidigits.py'
#: Two epochs of two shuffled batches each: the cache is extended by an epoch, and a read run has
#: to find every sample of every epoch's own order; more batches would check nothing more.
OPTIONS = [
    *SMALL_TOOL_RUN,
    'train_cfg.max_epochs=2',
    'train_cfg.val_interval=2',
    'train_dataloader.dataset.num_samples=32',
    'val_dataloader.dataset.num_samples=16',
    'train_dataloader.batch_size=16',
    'default_hooks.logger.interval=1',
    'model.teacher_ckpt=None',
    'model.allow_random_teacher=True',
    'randomness.seed=4',
]


def _parsed(*extra):
    """``--cfg-options`` parsed as the command line parses them."""
    import argparse

    from mmengine.config import DictAction

    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    return parser.parse_args(['--cfg-options', *OPTIONS, *extra]).cfg_options


def _train(work_dir, *extra):
    cfg = load_config(CONFIG, _parsed(*extra))
    cfg.work_dir = work_dir
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner


@pytest.mark.parametrize(
    'layout', [[], ['data_preprocessor.channels_last=True']], ids=['contiguous', 'channels_last']
)
def test_tool_cache_trains_a_student_exactly_as_the_live_teacher(tmp_path, capsys, layout):
    tool = load_tool('cache_teacher')
    cache = str(tmp_path / 'cache')
    tool.main([CONFIG, '--cache-dir', cache, '--epochs', '1', '--cfg-options', *OPTIONS, *layout])
    tool.main([CONFIG, '--cache-dir', cache, '--epochs', '2', '--cfg-options', *OPTIONS, *layout])
    out = capsys.readouterr().out
    assert 'caching' in out and 'for epochs [1]' in out  # the second call extends the cache
    manifest = json.load(open(osp.join(cache, 'manifest.json')))
    assert sorted(manifest['epochs']) == ['0', '1'] and list(manifest['taps']) == ['t_logits']
    # The preprocessor's memory order is part of the fingerprint (other kernels, other bits).
    assert manifest['fingerprint']['teacher_channels_last'] == bool(layout)
    live = _train(str(tmp_path / 'live'), *layout)
    read = _train(
        str(tmp_path / 'read'),
        f'model.teacher_cache.dir={cache}',
        'model.teacher_cache.mode=read',
        *layout,
    )
    for key, value in live.model.state_dict().items():
        assert torch.equal(read.model.state_dict()[key], value), key
    losses = [
        [v for k, v in sorted(line.items()) if k.startswith('loss')]
        for line in read_scalars(live.work_dir)
        if 'loss' in line
    ]
    assert losses and losses == [
        [v for k, v in sorted(line.items()) if k.startswith('loss')]
        for line in read_scalars(read.work_dir)
        if 'loss' in line
    ]


def test_cache_written_under_autocast_is_refused_by_an_fp32_run(tmp_path):
    tool = load_tool('cache_teacher')
    cache = str(tmp_path / 'cache')
    tool.main(
        [
            CONFIG,
            '--cache-dir',
            cache,
            '--epochs',
            '1',
            '--amp',
            'bfloat16',
            '--cfg-options',
            *OPTIONS,
        ]
    )
    with pytest.raises(
        TeacherCacheError,
        match="teacher_precision differs: the cache was written with 'autocast-bfloat16'",
    ):
        _train(
            str(tmp_path / 'read'),
            f'model.teacher_cache.dir={cache}',
            'model.teacher_cache.mode=read',
        )


def test_cache_of_contiguous_inputs_is_refused_by_a_channels_last_run(tmp_path):
    tool = load_tool('cache_teacher')
    cache = str(tmp_path / 'cache')
    tool.main([CONFIG, '--cache-dir', cache, '--epochs', '1', '--cfg-options', *OPTIONS])
    with pytest.raises(
        TeacherCacheError,
        match='teacher_channels_last differs: the cache was written with False, this run has True',
    ):
        _train(
            str(tmp_path / 'read'),
            f'model.teacher_cache.dir={cache}',
            'model.teacher_cache.mode=read',
            'data_preprocessor.channels_last=True',
        )


def test_unseeded_config_is_refused(tmp_path):
    tool = load_tool('cache_teacher')
    with pytest.raises(TeacherCacheError, match='randomness.seed is None'):
        tool.main(
            [
                CONFIG,
                '--cache-dir',
                str(tmp_path / 'c'),
                '--epochs',
                '1',
                '--cfg-options',
                *OPTIONS,
                'randomness.seed=None',
            ]
        )


def test_epochs_filled_out_of_order_hold_the_bytes_of_a_fill_in_order(tmp_path):
    """tools/demo.py fills the epochs of a cache in shards (1, 3, ... beside 0, 2, ...): an epoch
    written without those before it must hold the same bytes."""
    tool = load_tool('cache_teacher')
    cfg = load_config(CONFIG, _parsed())
    in_order, shards = str(tmp_path / 'in_order'), str(tmp_path / 'shards')
    tool.fill_cache(cfg, in_order, 2, log=lambda text: None)
    tool.fill_cache(cfg, shards, [1], log=lambda text: None)
    logged = []
    tool.fill_cache(cfg, shards, [1, 0], log=logged.append)
    assert 'for epochs [0]' in logged[0]  # epoch 1 is there already
    names = sorted(
        osp.relpath(p, in_order) for p in glob.glob(osp.join(in_order, 'epoch_*', '*', '*.bin'))
    )
    assert len(names) == 4  # index.bin and t_logits.bin of two epochs
    for name in names:
        with open(osp.join(in_order, name), 'rb') as a, open(osp.join(shards, name), 'rb') as b:
            assert a.read() == b.read(), name
    assert json.load(open(osp.join(in_order, 'manifest.json'))) == json.load(
        open(osp.join(shards, 'manifest.json'))
    )
    with pytest.raises(ValueError, match=r'non-negative epoch numbers, got \[-1\]'):
        tool.fill_cache(cfg, shards, [-1])
