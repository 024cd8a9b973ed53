"""tools/analysis_tools/sweep.py as a user runs it: a 2 × 2 grid of one-epoch runs, then
resumed."""

import csv
import glob
import json
import os
import os.path as osp
import shutil
import subprocess

import pytest
from conftest import REPO, SMALL_TOOL_RUN, load_tool, run_tool

SWEEP = 'tools/analysis_tools/sweep.py'
PD, NDD = 'model.distill_losses.pd.loss_weight', 'model.distill_losses.ndd.loss_weight'


def _sweep(
    work_dir: str, y_values: tuple[str, ...] = ('0.5', '10'), options: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """The demo's 3D config over PD ∈ {1, 100} × NDD ∈ ``y_values``, seed 0, small data and more
    ``--cfg-options``; asserts that the tool succeeds."""
    # A random teacher (teacher_ckpt=None) is enough to exercise the tool.
    proc = run_tool(
        SWEEP,
        'configs/demo/3d.py',
        '--x',
        PD,
        '1',
        '100',
        '--y',
        NDD,
        *y_values,
        '--seeds',
        '0',
        '--work-dir',
        work_dir,
        '--cfg-options',
        *SMALL_TOOL_RUN,
        'model.teacher_ckpt=None',
        'model.allow_random_teacher=True',
        *options,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_grid_writes_table_csv_heatmap_and_resumes(tmp_path):
    work = str(tmp_path / 'sweep')
    first = _sweep(work)
    assert '4 runs (2 × 2 × 1 seeds), 0 already finished' in first.stdout
    results = sorted(os.listdir(osp.join(work, 'results')))
    assert results == sorted(f'x={x}_y={y}_seed=0.json' for x in (1, 100) for y in (0.5, 10))
    stored = json.load(open(osp.join(work, 'results', 'x=100_y=0.5_seed=0.json')))
    assert (stored['x'], stored['y'], stored['seed']) == (100, 0.5, 0)
    assert 0.0 <= stored['val']['mAP'] <= 100.0 and 'test' not in stored

    with open(osp.join(work, 'sweep.csv'), newline='') as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and {(r['x'], r['y']) for r in rows} == {
        ('1', '0.5'),
        ('1', '10'),
        ('100', '0.5'),
        ('100', '10'),
    }
    for row in rows:  # the table holds the stored numbers, not something else
        cell = json.load(open(osp.join(work, 'results', f'x={row["x"]}_y={row["y"]}_seed=0.json')))
        assert float(row['mAP']) == cell['val']['mAP']
    table = open(osp.join(work, 'sweep.md')).read()
    assert f'| {NDD} \\ {PD} | 1 | 100 |' in table
    assert f'{stored["val"]["mAP"]:.2f} (n=1)' in table and '± 0.00' not in table  # no spread
    with open(osp.join(work, 'sweep.png'), 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'

    # Resume: finished cells are not trained again (no run folder reappears, results untouched);
    # a cell whose result is missing is.
    shutil.rmtree(osp.join(work, 'runs'))
    os.remove(osp.join(work, 'results', 'x=1_y=10_seed=0.json'))
    kept = {
        n: os.stat(osp.join(work, 'results', n)).st_mtime_ns
        for n in os.listdir(osp.join(work, 'results'))
    }
    again = _sweep(work)
    assert '4 runs (2 × 2 × 1 seeds), 3 already finished' in again.stdout
    assert os.listdir(osp.join(work, 'runs')) == ['x=1_y=10_seed=0']
    for name, mtime in kept.items():
        assert os.stat(osp.join(work, 'results', name)).st_mtime_ns == mtime
    assert osp.isfile(osp.join(work, 'results', 'x=1_y=10_seed=0.json'))
    assert not [n for n in os.listdir(osp.join(work, 'results')) if n.startswith('.tmp_')]


def test_unknown_key_is_named(tmp_path):
    proc = run_tool(
        SWEEP,
        'configs/demo/3d.py',
        '--x',
        'model.distill_losses.pd.nope',
        '1',
        '--y',
        NDD,
        '1',
        '--work-dir',
        str(tmp_path),
    )
    assert proc.returncode != 0 and 'model.distill_losses.pd.nope' in proc.stderr


def test_sweep_with_a_teacher_cache_runs_the_teacher_for_the_first_cell_only(tmp_path):
    work, cache = str(tmp_path / 'sweep'), str(tmp_path / 'cache')
    _sweep(work, y_values=('0.5',), options=(f'model.teacher_cache.dir={cache}',))
    assert os.listdir(cache) == ['seed0']
    manifest = json.load(open(osp.join(cache, 'seed0', 'manifest.json')))
    assert manifest['epochs'] == {'0': {'rows': 64, 'world_size': 1}}
    dumped = {}  # the configs the runs dumped into their work dirs
    for name in ('x=1_y=0.5_seed=0', 'x=100_y=0.5_seed=0'):
        dumped[name] = ''.join(
            open(p).read()
            for p in glob.glob(osp.join(work, 'runs', name, '**', '*.py'), recursive=True)
        )
    assert "mode='write'" in dumped['x=1_y=0.5_seed=0']
    assert "mode='read'" in dumped['x=100_y=0.5_seed=0']


def _sweep_tool(monkeypatch):
    monkeypatch.chdir(REPO)
    return load_tool('analysis_tools/sweep')


def test_duplicate_grid_points_are_refused(tmp_path, monkeypatch, capsys):
    sweep = _sweep_tool(monkeypatch)
    for flags, message in (
        (['--x', PD, '1', '1.0', '--y', NDD, '1'], '--x gives 1.0 more than once'),
        (['--x', PD, '1', '--y', NDD, '1', '--seeds', '0', '0'], '--seeds gives 0 more than once'),
        (['--x', PD, '1', '--y', PD, '2'], 'set the same key'),
        (
            ['--x', 'model.student', 'a/b', 'a-b', '--y', NDD, '1'],
            "--x values ['a/b', 'a-b'] name the same cell folder",
        ),
        # the demo's seeds go to the sampler: an axis there would be undone
        (
            ['--x', 'train_dataloader.sampler.seed', '1', '2', '--y', NDD, '1'],
            'which the run seed overwrites',
        ),
        (
            ['--x', PD, '1', '--y', 'train_dataloader.sampler', '{}'],
            'which the run seed overwrites',
        ),
    ):
        with pytest.raises(SystemExit):
            sweep.main(['configs/demo/3d.py', *flags, '--work-dir', str(tmp_path / 'w')])
        assert message in capsys.readouterr().err
    assert not osp.exists(tmp_path / 'w')


def test_list_index_keys_are_accepted_and_another_configs_cell_is_never_reused(
    tmp_path, monkeypatch
):
    """``param_scheduler.0.eta_max`` was called "not a key"; a finished cell made with other
    options (here another teacher) was taken as this sweep's."""
    from mlkd.apis.runs import StaleResultError, save_finished_run
    from mlkd.utils.cli import load_config

    sweep = _sweep_tool(monkeypatch)
    work = tmp_path / 'sweep'
    other = load_config('configs/demo/3d.py', {'model.teacher_ckpt': 'another_teacher.pth'})
    save_finished_run(
        str(work / 'results' / 'x=0.001_y=1_seed=0.json'),
        {'val': {'mAP': 99.0}},
        other,
    )
    args = [
        'configs/demo/3d.py',
        '--x',
        'param_scheduler.0.eta_max',
        '0.001',
        '--y',
        NDD,
        '1',
        '--work-dir',
        str(work),
        '--cfg-options',
        'model.teacher_ckpt=None',
        'model.allow_random_teacher=True',
    ]
    with pytest.raises(StaleResultError) as error:
        sweep.main(args)
    assert 'sweep cell x=0.001_y=1_seed=0' in str(error.value)
    assert "model.teacher_ckpt: 'another_teacher.pth' -> None" in str(error.value)
    assert not osp.exists(work / 'runs')
