"""tools/demo.py as a newcomer runs it, shortened with --cfg-options: table, bar chart, results."""

import glob
import json
import os
import os.path as osp
import subprocess

from conftest import REPO, SMALL_TOOL_RUN, run_tool

#: Two epochs of half SMALL_TOOL_RUN's training samples (as many steps as its one epoch): with
#: ``--jobs 2`` a seed's teacher cache is then filled by two tasks side by side, an epoch each.
TWO_EPOCHS = ['train_cfg.max_epochs=2', 'train_dataloader.dataset.num_samples=32']


def run_demo(*args: str, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    proc = run_tool('tools/demo.py', *args, '--cfg-options', *SMALL_TOOL_RUN, *options)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_demo_prints_test_table_and_writes_chart(tmp_path):
    work = str(tmp_path / 'demo')
    proc = run_demo(
        '--stages',
        'teacher',
        'student',
        '3D',
        '--seeds',
        '0',
        '1',
        '--work-dir',
        work,
        '--jobs',
        '2',
        options=TWO_EPOCHS,
    )
    out = proc.stdout
    assert 'MultiDigits test split, 2 seed(s) (mean ± std)' in out
    assert '[seed 1] 3D: started' in out  # side by side: one line per start and end
    # Each seed's teacher cache is filled by two tasks, an epoch each, into one folder.
    for shard in (1, 2):
        assert (
            f'[seed 1] caching the teacher outputs (shard {shard} of 2), epochs '
            f'[{shard - 1}]: started'
        ) in out
        assert f'[seed 1] teacher outputs (shard {shard} of 2) cached in' in out
    assert 'mmengine - INFO' not in out + proc.stderr  # no log flood
    saved = json.load(open(osp.join(work, 'results.json')))
    assert [len(saved['results'][k]) for k in ('teacher', 'student', '3D')] == [1, 2, 2]
    # The schema: every stage's val and test metrics per seed, and the protocol they belong to.
    assert saved['seeds'] == [0, 1] and saved['stages'] == ['teacher', 'student', '3D']
    assert set(saved['protocol']) == {'commit', 'configs'}
    assert set(saved['protocol']['configs']) == {'teacher', 'student', '3D'}
    for name, runs in saved['results'].items():
        assert [run['seed'] for run in runs] == ([0] if name == 'teacher' else [0, 1])
        for run in runs:
            for split in ('val', 'test'):
                assert set(run[split]) == {'mAP', 'CF1_thr0.5', 'OF1_thr0.5'}
                assert all(0.0 <= v <= 100.0 for v in run[split].values())
            assert run['protocol'] == saved['protocol']
            # Distilled stages record their fidelity to the teacher (DistillFidelity), val and
            # test; the plain student is scored against the same teacher (its paired baseline).
            if name != 'teacher':
                assert all(len(run['fidelity'][split]) == 3 for split in ('val', 'test'))
    assert 'test fidelity/mAP_vs_teacher' in out  # the table's fidelity column
    # The teacher is trained once and shared; the distilled stages log per-term diagnostics.
    assert saved['teacher_ckpt'] == saved['results']['teacher'][0]['checkpoint']
    assert osp.isfile(saved['teacher_ckpt'])
    rows = [
        json.loads(line)
        for d, _, files in os.walk(osp.join(work, 'seed1', '3D'))
        for f in files
        if f == 'scalars.json'
        for line in open(osp.join(d, f))
    ]
    assert any('diag/loss_pd/grad_ratio' in r for r in rows)
    with open(osp.join(work, 'demo.png'), 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    student_map = saved['results']['student'][1]['test']['mAP']
    assert f'{student_map:.2f}' in out
    # 3D read its teacher from the seed's cache (filled once per seed, never written by 3D).
    manifest = json.load(open(osp.join(work, 'seed1', 'teacher_cache', 'manifest.json')))
    assert sorted(manifest['epochs']) == ['0', '1']
    # One stage after the other in this process (progress line) gives the same numbers.
    alone = str(tmp_path / 'alone')
    out = run_demo(
        '--stages',
        'student',
        '3D',
        '--seeds',
        '1',
        '--work-dir',
        alone,
        '--teacher-ckpt',
        saved['teacher_ckpt'],
        '--jobs',
        '1',
        options=TWO_EPOCHS,
    ).stdout
    assert 'epoch 2/2' in out and 'ETA' in out  # the progress line
    assert '[seed 1] teacher outputs cached in' in out  # one task, both epochs
    again = json.load(open(osp.join(alone, 'results.json')))['results']
    for name in ('student', '3D'):
        assert again[name][0]['val'] == saved['results'][name][1]['val']
        assert again[name][0]['test'] == saved['results'][name][1]['test']
    # The student scored against the given teacher as against the one the call trained.
    assert again['student'][0]['fidelity'] == saved['results']['student'][1]['fidelity']
    # Scoring it evaluated in a folder of its own: the config saved beside the student's
    # checkpoint is still the plain classifier's (tools/test.py is given that file).
    from mmengine.config import Config

    kept = Config.fromfile(osp.join(work, 'seed1', 'student', 'student.py'))
    assert kept.model.type == 'ImageClassifier', kept.model.type
    # The cache filled by two tasks holds the bytes of the one filled by one.
    files = glob.glob(osp.join('seed1', 'teacher_cache', 'epoch_*', '*', '*.bin'), root_dir=work)
    assert len(files) >= 4  # an index and the logits of each of two epochs, at least
    for path in files:
        with open(osp.join(work, path), 'rb') as two, open(osp.join(alone, path), 'rb') as one:
            assert two.read() == one.read(), path


def test_resume_never_reports_a_stale_result_of_another_protocol(tmp_path, monkeypatch, capsys):
    """A stage finished under other options (another number of epochs) was reported by
    ``--resume`` as this protocol's result."""
    import pytest
    from conftest import load_tool
    from mmengine.config import DictAction

    from mlkd.apis import DEMO, protocol_of
    from mlkd.utils.atomic import write_json_atomic

    monkeypatch.chdir(REPO)
    work = str(tmp_path / 'demo')
    options = {
        k: DictAction._parse_iterable(v) for k, v in (o.split('=', 1) for o in SMALL_TOOL_RUN)
    }
    earlier = protocol_of(DEMO, ['student'], dict(options, **{'train_cfg.max_epochs': 3}), work)
    stale = osp.join(work, 'seed0', 'student', 'result.json')
    write_json_atomic(stale, {'test': {'mAP': 99.0}, 'seconds': 1.0, 'protocol': earlier})
    args = ['--stages', 'student', '--work-dir', work, '--cfg-options', *SMALL_TOOL_RUN]
    # Refused before any training, with or without --resume, naming the stale file.
    for extra in (['--resume'], []):
        with pytest.raises(SystemExit, match='another protocol: the student config') as error:
            load_tool('demo').main(args + extra)
        assert stale in str(error.value)
    assert '99.00' not in capsys.readouterr().out
    assert json.load(open(stale))['test'] == {'mAP': 99.0}
