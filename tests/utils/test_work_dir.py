"""A work dir belongs to one config (mlkd/utils/work_dir.py), as tools/train.py applies it."""

import json
import os
import os.path as osp

import pytest
from conftest import MULTIDIGITS_STUDENT, load_tool

from mlkd.utils.work_dir import RECORD_NAME, WorkDirConflictError, claim_work_dir


def _build(work_dir, *extra):
    train = load_tool('train')
    return train.build_cfg(
        train.parse_args([MULTIDIGITS_STUDENT, '--work-dir', str(work_dir), *extra])
    )


def _a_finished_run(work_dir, *extra):
    """A work dir as ``tools/train.py MULTIDIGITS_STUDENT extra`` leaves it (checkpoint, log)."""
    _build(work_dir, *extra)
    (work_dir / 'epoch_1.pth').write_bytes(b'the earlier run')
    (work_dir / 'last_checkpoint').write_text(str(work_dir / 'epoch_1.pth'))
    (work_dir / '20260101_000000' / 'vis_data').mkdir(parents=True)
    (work_dir / '20260101_000000' / 'vis_data' / 'scalars.json').write_text('{}')


def test_another_configs_run_is_refused_naming_the_keys_and_flags(tmp_path):
    work_dir = tmp_path / 'work'
    _a_finished_run(work_dir, '--cfg-options', 'train_cfg.max_epochs=3')
    with pytest.raises(WorkDirConflictError) as error:
        _build(work_dir, '--cfg-options', 'train_cfg.max_epochs=5')
    message = str(error.value)
    assert f"work dir '{work_dir}' holds a run of another config" in message
    assert 'train_cfg.max_epochs: 3 -> 5' in message
    assert f'another config ({MULTIDIGITS_STUDENT}; ' in message  # the config file named
    assert '--resume' in message and '--overwrite' in message
    assert (work_dir / 'epoch_1.pth').read_bytes() == b'the earlier run'
    # --resume or --overwrite say what to do: train in the work dir itself.
    for flag in ('--resume', '--overwrite'):
        cfg = _build(work_dir, flag, '--cfg-options', 'train_cfg.max_epochs=5')
        assert cfg.work_dir == str(work_dir)
    record = json.load(open(work_dir / RECORD_NAME))
    assert record['values']['train_cfg.max_epochs'] == '5'


def test_a_start_that_failed_before_training_does_not_take_the_work_dir(tmp_path):
    """A call refused while building (a teacher path that does not exist, a bad value) leaves a
    log and a config dump; the corrected call (another config) trains in the work dir itself."""
    work_dir = tmp_path / 'work'
    _build(work_dir, '--cfg-options', 'train_cfg.max_epochs=3')
    (work_dir / '20260101_000000' / 'vis_data').mkdir(parents=True)
    (work_dir / '20260101_000000' / 'vis_data' / 'config.py').write_text('')
    (work_dir / '20260101_000000' / '20260101_000000.log').write_text('FileNotFoundError: ...')
    cfg = _build(work_dir, '--cfg-options', 'train_cfg.max_epochs=5')
    assert cfg.work_dir == str(work_dir)
    assert json.load(open(work_dir / RECORD_NAME))['values']['train_cfg.max_epochs'] == '5'


def test_overwrite_moves_the_earlier_run_aside_whole(tmp_path):
    """--overwrite trains in the work dir itself, alone: the earlier run (checkpoints, pointer,
    logs, record) is moved to a replaced_* sub-folder, not mixed with the new one nor deleted."""
    import glob

    work_dir = tmp_path / 'work'
    _a_finished_run(work_dir, '--cfg-options', 'train_cfg.max_epochs=3')
    (work_dir / 'notes.txt').write_text('mine')  # not a run's file: stays
    (work_dir / 'my_config.py').write_text('mine')  # nor a .py that is not the run's dump
    dump = osp.basename(MULTIDIGITS_STUDENT)
    (work_dir / dump).write_text('model = dict()')  # mmengine's dump of the recorded config
    (work_dir / '20260101_000000_1').mkdir()  # mmengine's second log folder of one second
    cfg = _build(work_dir, '--overwrite', '--cfg-options', 'train_cfg.max_epochs=5')
    assert cfg.work_dir == str(work_dir)
    (aside,) = glob.glob(str(work_dir / 'replaced_*'))
    assert sorted(os.listdir(aside)) == sorted(
        [
            'epoch_1.pth',
            'last_checkpoint',
            '20260101_000000',
            '20260101_000000_1',
            RECORD_NAME,
            dump,
        ]
    )
    assert open(osp.join(aside, 'epoch_1.pth'), 'rb').read() == b'the earlier run'
    assert json.load(open(osp.join(aside, RECORD_NAME)))['values']['train_cfg.max_epochs'] == '3'
    kept = [osp.basename(aside), 'notes.txt', 'my_config.py', RECORD_NAME]
    assert sorted(os.listdir(work_dir)) == sorted(kept)
    assert json.load(open(work_dir / RECORD_NAME))['values']['train_cfg.max_epochs'] == '5'


def test_a_run_without_a_record_is_refused(tmp_path):
    work_dir = tmp_path / 'work'
    work_dir.mkdir()
    (work_dir / 'epoch_3.pth').write_bytes(b'made before mlkd recorded configs')
    with pytest.raises(WorkDirConflictError, match='holds a run whose config is not recorded'):
        _build(work_dir)


def test_the_same_config_again_goes_to_a_new_sub_folder(tmp_path):
    work_dir = tmp_path / 'work'
    _a_finished_run(work_dir)
    cfg = _build(work_dir)
    assert osp.dirname(cfg.work_dir) == str(work_dir) and cfg.work_dir != str(work_dir)
    assert osp.isfile(osp.join(cfg.work_dir, RECORD_NAME))
    assert (work_dir / 'epoch_1.pth').read_bytes() == b'the earlier run'  # nothing deleted
    assert _build(work_dir).work_dir != cfg.work_dir  # a third run: yet another folder


def test_an_empty_or_new_work_dir_is_used_as_is(tmp_path):
    assert _build(tmp_path / 'new').work_dir == str(tmp_path / 'new')
    assert sorted(os.listdir(tmp_path / 'new')) == [RECORD_NAME]
    # Started twice before any checkpoint or log: still no run there, so no sub-folder.
    assert _build(tmp_path / 'new').work_dir == str(tmp_path / 'new')


def test_distributed_runs_never_pick_a_sub_folder(tmp_path):
    from mmengine.config import Config

    work_dir = tmp_path / 'work'
    _a_finished_run(work_dir)
    cfg = _build(work_dir)  # the values as the earlier run
    cfg.work_dir = str(work_dir)
    with pytest.raises(WorkDirConflictError, match='holds a run of this config; pass --resume'):
        claim_work_dir(Config(cfg.to_dict()), distributed=True)


def test_setting_aside_keeps_a_resumed_run_and_stays_inside_the_work_dir(tmp_path, monkeypatch):
    """--resume with --overwrite continues the run in place (its checkpoints stay to be loaded);
    two set-asides in one second go to replaced_<ts> and replaced_<ts>~1 inside the work dir,
    whatever '~' its path holds; without a config name in the record no .py file is taken."""
    import time

    from mlkd.utils.work_dir import set_aside

    work_dir = tmp_path / 'runs~old' / 'work'
    _a_finished_run(work_dir)
    cfg = _build(work_dir, '--resume', '--overwrite')
    assert (work_dir / 'epoch_1.pth').exists() and cfg.work_dir == str(work_dir)
    monkeypatch.setattr(time, 'strftime', lambda fmt: fmt.replace('%Y%m%d_%H%M%S', '20260101'))
    record = json.load(open(work_dir / RECORD_NAME))
    (work_dir / RECORD_NAME).write_text(json.dumps(dict(record, config=None)))
    (work_dir / 'analysis.py').write_text('mine')
    first = set_aside(str(work_dir))
    (work_dir / 'epoch_2.pth').write_bytes(b'a later run')
    second = set_aside(str(work_dir))
    assert (first, second) == (str(work_dir / 'replaced_20260101'), f'{first}~1')
    assert (work_dir / 'analysis.py').exists()
