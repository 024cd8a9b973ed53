"""set_run_seed: the tools' seed goes where the config's seed_key says."""

import pytest
from conftest import config_path
from mmengine.config import Config

from mlkd.apis.runs import set_run_seed
from mlkd.utils.cli import load_config


def test_default_seeds_everything():
    cfg = Config(
        dict(
            randomness=dict(seed=0, deterministic=True),
            train_dataloader=dict(sampler=dict(type='EpochKeyedSampler')),
        )
    )
    assert set_run_seed(cfg, 3) == 'randomness.seed'
    assert cfg.randomness == dict(seed=3, deterministic=False)
    assert 'seed' not in cfg.train_dataloader.sampler


def test_the_benchmark_varies_the_data_order_and_keeps_the_initialisation():
    cfg = load_config(config_path('demo', 'kd.py'))
    assert set_run_seed(cfg, 3) == 'train_dataloader.sampler.seed'
    assert cfg.train_dataloader.sampler.seed == 3
    assert cfg.randomness.seed == 0  # every run of every seed starts from the same weights
    # A copy (a sweep's cell) gets its own seed; the config it was copied from keeps its own.
    cell = cfg.copy()
    set_run_seed(cell, 4)
    assert (cell.train_dataloader.sampler.seed, cfg.train_dataloader.sampler.seed) == (4, 3)


@pytest.mark.parametrize('key', ['train_dataloader.nowhere.seed', 'seed', 5])
def test_a_seed_key_leading_nowhere_is_refused(key):
    cfg = Config(dict(seed_key=key, randomness=dict(seed=0), train_dataloader=dict(sampler=dict())))
    with pytest.raises(KeyError, match='seed_key'):
        set_run_seed(cfg, 1)


def test_a_sampler_seed_without_a_fixed_initialisation_is_refused():
    cfg = Config(
        dict(
            seed_key='train_dataloader.sampler.seed',
            randomness=dict(seed=None),
            train_dataloader=dict(sampler=dict()),
        )
    )
    with pytest.raises(ValueError, match='randomness.seed'):
        set_run_seed(cfg, 1)
