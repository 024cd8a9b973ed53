"""tools/cache_teacher.py fills a cache that a training run reads bit-identically to live."""

import json
import os.path as osp

import pytest
import torch
from conftest import (
    CACHE_RUN_CONFIG,
    CACHE_RUN_OPTIONS,
    load_tool,
    parsed_cfg_options,
    read_scalars,
)

from mlkd.engine import build_runner
from mlkd.teacher_cache import TeacherCacheError
from mlkd.utils.cli import load_config

CONFIG, OPTIONS = CACHE_RUN_CONFIG, CACHE_RUN_OPTIONS


def _parsed(*extra):
    return parsed_cfg_options(*OPTIONS, *extra)


def _train(work_dir, *extra):
    cfg = load_config(CONFIG, _parsed(*extra))
    cfg.work_dir = work_dir
    runner = build_runner(cfg)
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
