"""mlkd.apis.sweep: the grid's keys and the teacher cache of its cells (the runs themselves:
tests/tools/test_sweep_tool.py, tools/analysis_tools/sweep.py as a user runs it)."""

import json

import pytest
from mmengine.config import Config

from mlkd.apis import sweep
from mlkd.utils.cli import load_config


def test_list_index_keys_resolve_and_a_missing_part_is_named():
    cfg = load_config('mlkd::demo/3d.py')
    assert sweep.resolve_key(cfg, 'param_scheduler.0.eta_max') == cfg.param_scheduler[0].eta_max
    with pytest.raises(KeyError, match='param_scheduler.9'):
        sweep.resolve_key(cfg, 'param_scheduler.9.eta_max')


def test_teacher_cache_is_written_once_per_seed_then_read(tmp_path):
    cfg = Config(
        dict(
            model=dict(teacher_cache=dict(dir=str(tmp_path), mode=None)),
            train_cfg=dict(max_epochs=2),
        )
    )
    assert sweep.use_teacher_cache(cfg.copy(), 3) == 'write'
    folder = tmp_path / 'seed3'
    folder.mkdir()
    (folder / 'manifest.json').write_text(json.dumps({'epochs': {'0': {}}}))
    written = cfg.copy()
    assert sweep.use_teacher_cache(written, 3) == 'write'  # epoch 1 is missing
    (folder / 'manifest.json').write_text(json.dumps({'epochs': {'0': {}, '1': {}}}))
    read = cfg.copy()
    assert sweep.use_teacher_cache(read, 3) == 'read'
    assert read.model.teacher_cache == dict(dir=str(folder), mode='read')
    assert (
        sweep.use_teacher_cache(Config(dict(model=dict(), train_cfg=dict(max_epochs=1))), 0) is None
    )


def test_a_metric_the_runs_do_not_report_is_refused_before_training(tmp_path):
    """It failed with a KeyError after every cell had trained."""
    with pytest.raises(sweep.SweepRequestError, match="metric 'top1' is not one the runs report"):
        sweep.run_sweep(
            'mlkd::demo/3d.py',
            ('model.distill_losses.pd.loss_weight', [1.0]),
            ('model.distill_losses.ndd.loss_weight', [1.0]),
            str(tmp_path / 'sweep'),
            metric='top1',
        )
    assert not (tmp_path / 'sweep').exists()
