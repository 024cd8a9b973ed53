"""mlkd.apis.teacher_cache: filling a teacher cache (the tool and the runs that read it:
tests/tools/test_cache_teacher.py)."""

import glob
import json
import os.path as osp

import pytest
from conftest import CACHE_RUN_CONFIG, CACHE_RUN_OPTIONS, REPO, parsed_cfg_options

from mlkd.apis.teacher_cache import fill_teacher_cache
from mlkd.utils.cli import load_config


def test_epochs_filled_out_of_order_hold_the_bytes_of_a_fill_in_order(tmp_path):
    """A benchmark fills the epochs of a cache in shards (1, 3, ... beside 0, 2, ...): an epoch
    written without those before it must hold the same bytes."""
    cfg = load_config(CACHE_RUN_CONFIG, parsed_cfg_options(*CACHE_RUN_OPTIONS))
    in_order, shards = str(tmp_path / 'in_order'), str(tmp_path / 'shards')
    fill_teacher_cache(cfg, in_order, 2, log=lambda text: None)
    fill_teacher_cache(cfg, shards, [1], log=lambda text: None)
    logged = []
    fill_teacher_cache(cfg, shards, [1, 0], log=logged.append)
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
        fill_teacher_cache(cfg, shards, [-1])


def test_a_multi_teacher_config_is_cached_one_named_teacher_at_a_time(tmp_path):
    cfg = load_config(osp.join(REPO, 'configs', 'multi_teacher', 'l2d_two_teachers.py'))
    with pytest.raises(ValueError, match=r"has teachers \['low', 'high'\].*--teacher NAME"):
        fill_teacher_cache(cfg, str(tmp_path / 'c'), 1)
    with pytest.raises(ValueError, match=r"has no teacher 'mid'; its teachers: \['low', 'high'\]"):
        fill_teacher_cache(cfg, str(tmp_path / 'c'), 1, teacher='mid')
    assert not osp.exists(tmp_path / 'c')
