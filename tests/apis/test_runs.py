"""mlkd.apis.runs: the tools' seed goes where the config's seed_key says; a run hands back the
checkpoint it saved last."""

import os.path as osp
import warnings

import pytest
from conftest import MULTIDIGITS_STUDENT, config_path, small_run_cfg
from mmengine.config import Config

from mlkd.apis.runs import quiet, set_run_seed, train_and_evaluate
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


def test_a_run_by_iterations_reports_its_last_checkpoint(tmp_path):
    """The checkpoint handed back is the one the run saved last (``iter_N.pth`` here), not an
    ``epoch_<max_epochs>.pth`` guessed from the config, as an absolute path (the work dir is
    relative here)."""
    cfg = small_run_cfg(
        MULTIDIGITS_STUDENT,
        osp.relpath(str(tmp_path / 'work')),
        train_samples=6,  # three iterations: mmengine's iteration loop sleeps 2 s per extra pass
        val_samples=4,
        batch_size=2,
    )
    cfg.train_cfg = dict(type='IterBasedTrainLoop', max_iters=3, val_interval=10)  # no validation
    cfg.param_scheduler = []
    cfg.log_processor = dict(by_epoch=False)
    for loader in (cfg.train_dataloader, cfg.val_dataloader):
        loader.dataset.serialize_data = False  # mmengine's serialisation runs gc.collect()
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', by_epoch=False, interval=2)
    result = train_and_evaluate(cfg, 'by iterations', progress=False, metrics=())
    assert result['checkpoint'] == osp.abspath(osp.join(cfg.work_dir, 'iter_3.pth'))
    assert osp.isfile(result['checkpoint'])


def test_quiet_hides_library_notices_and_shows_the_rest():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        with quiet():
            for module in ('torch.utils.data.dataloader', 'mmengine.runner.runner'):
                warnings.warn_explicit('notice', UserWarning, 'library.py', 1, module=module)
            warnings.warn('the run gets this wrong', UserWarning, stacklevel=1)
            warnings.warn('deprecated', DeprecationWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ['the run gets this wrong']


def test_a_list_of_seed_keys_gives_the_seed_to_each():
    """A study that draws its observed labels once per seed names the draw's seed beside the
    data order's; the initialisation stays at randomness.seed."""
    cfg = Config(
        dict(
            seed_key=['train_dataloader.sampler.seed', 'train_dataloader.dataset.draw.seed'],
            randomness=dict(seed=0),
            train_dataloader=dict(sampler=dict(seed=0), dataset=dict(draw=dict(seed=0))),
        )
    )
    assert set_run_seed(cfg, 3) == 'train_dataloader.sampler.seed'
    assert cfg.train_dataloader.sampler.seed == 3 and cfg.train_dataloader.dataset.draw.seed == 3
    assert cfg.randomness.seed == 0
    for bad in ([], ['train_dataloader.sampler.seed'] * 2, ['train_dataloader.sampler.seed', 4]):
        with pytest.raises(KeyError, match='seed_key'):
            set_run_seed(Config(dict(cfg.to_dict(), seed_key=bad)), 1)
