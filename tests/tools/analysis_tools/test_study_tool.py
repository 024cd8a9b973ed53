"""tools/analysis_tools/study.py as a user runs it: two configs, two seeds, one tiny epoch, val
only; then test read on the same checkpoints without training; the results compared by
demo_paired.py on either split; the refusals."""

import json
import os.path as osp

from conftest import SMALL_TOOL_RUN, run_tool

TOOL = 'tools/analysis_tools/study.py'
CONFIGS = ['configs/demo/student.py', 'configs/demo/teacher.py']


def study(*args: str, expect: int = 0):
    proc = run_tool(TOOL, *args)
    assert proc.returncode == expect, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_val_only_then_test_on_the_same_checkpoints_then_paired(tmp_path):
    work = str(tmp_path / 'work')
    argv = [*CONFIGS, '--seeds', '0', '1', '--work-dir', work, '--cfg-options', *SMALL_TOOL_RUN]
    val_out, test_out = str(tmp_path / 'val.json'), str(tmp_path / 'test.json')
    proc = study(*argv, '--val-only', '--out', val_out)
    assert 'val mAP' in proc.stdout and 'test mAP' not in proc.stdout
    chosen = json.load(open(val_out))
    assert chosen['stages'] == ['student', 'teacher'] and chosen['seeds'] == [0, 1]
    assert all('test' not in r for runs in chosen['results'].values() for r in runs)
    assert {r['commit'] for runs in chosen['results'].values() for r in runs} == {
        chosen['protocol']['commit']
    }
    # Metrics the stored runs do not hold: refused before anything; a misspelled one in a fresh
    # work dir: named after the first run (its validation's keys are known only then).
    proc = study(*argv, '--val-only', '--out', val_out, '--metrics', 'mAPP', expect=1)
    assert "stores no ['val/mAPP']" in proc.stderr and 'epoch 1/1' not in proc.stdout
    fresh = [CONFIGS[0], '--seeds', '0', '--val-only', '--work-dir', str(tmp_path / 'fresh')]
    proc = study(
        *fresh, '--out', 'y.json', '--metrics', 'mAPP', '--cfg-options', *SMALL_TOOL_RUN, expect=1
    )
    assert "logged no ['mAPP'] (it logged [" in proc.stderr and "'mAP'" in proc.stderr
    assert not osp.exists('y.json')
    proc = study(*argv, '--out', test_out)
    assert proc.stdout.count('reads test on the checkpoint of') == 4
    assert 'epoch 1/1' not in proc.stdout  # nothing trained
    read = json.load(open(test_out))
    for name, runs in read['results'].items():
        for before, after in zip(chosen['results'][name], runs):
            assert after['val'] == before['val'] and set(after['test']) == set(before['val'])
            assert after['config_sha256'] == before['config_sha256']
    for split in ('val', 'test'):
        out = str(tmp_path / f'paired_{split}')
        args = [test_out, '--split', split, '--stages', 'teacher', '--out', out]
        proc = run_tool('tools/analysis_tools/demo_paired.py', *args)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert '| teacher |' in open(out + '.md').read()
    # Without --stages there is nothing to compare here (teacher* is left out by default).
    proc = run_tool('tools/analysis_tools/demo_paired.py', test_out, '--out', str(tmp_path / 'p'))
    assert proc.returncode == 2 and "no stage to compare with ['student']" in proc.stderr
    # --out exists: refused before anything; two configs of one name: refused.
    proc = study(*argv, '--out', test_out, expect=1)
    assert 'exists' in proc.stderr
    proc = study(CONFIGS[0], CONFIGS[0], '--work-dir', work, '--out', 'x.json', expect=2)
    assert "configs of the same file name ['student']" in proc.stderr
    assert not osp.exists('x.json')


def test_the_results_name_the_commit_the_runs_started_on(tmp_path, monkeypatch):
    """A commit made while the runs train (hours, for a study) is not the code they ran: the
    results name the commit read before the first run."""
    from conftest import load_tool

    from mlkd.apis.runs import METRICS

    head = {'commit': 'a' * 40}
    monkeypatch.setattr('mlkd.apis.benchmark.git_commit', lambda: head['commit'])

    def run_study(study, work_dir, **call):  # the runs, without training; a commit meanwhile
        assert call['commit'] == 'a' * 40  # what each run trained is stored with
        head['commit'] = 'b' * 40
        result = dict(val=dict.fromkeys(METRICS, 1.0), config_sha256='0' * 64, cpu_seconds=1.0)
        return {seed: {name: dict(result) for name in study.runs} for seed in call['seeds']}

    monkeypatch.setattr('mlkd.apis.study.run_study', run_study)
    out = str(tmp_path / 'results.json')
    args = [*CONFIGS, '--seeds', '0', '--val-only', '--work-dir', str(tmp_path), '--out', out]
    load_tool('analysis_tools/study').main(args)
    with open(out) as file:
        assert json.load(file)['protocol']['commit'] == 'a' * 40


def test_a_study_split_over_two_machines_is_written_out_partial_then_continued(tmp_path):
    """Seed 0 trained in one work dir (a machine whose session ended); ``--stored-only`` writes
    what it holds, naming the runs it lacks; another work dir (the next machine) takes those runs
    with ``--reuse`` and trains only seed 1."""
    first, second = str(tmp_path / 'first'), str(tmp_path / 'second')
    partial, full = str(tmp_path / 'partial.json'), str(tmp_path / 'full.json')

    def call(*args, seeds=('0', '1'), **kwargs):
        argv = [*CONFIGS, '--seeds', *seeds, '--val-only', *args]
        return study(*argv, '--cfg-options', *SMALL_TOOL_RUN, **kwargs)

    call('--work-dir', first, '--out', str(tmp_path / 'seed0.json'), seeds=('0',))
    proc = call('--stored-only', '--work-dir', first, '--out', partial)
    assert (
        'epoch 1/1' not in proc.stdout
        and '2 runs not stored (student of seed 1, teacher of seed 1)' in proc.stdout
    )
    written = json.load(open(partial))
    assert written['protocol']['missing'] == ['student of seed 1', 'teacher of seed 1']
    assert [[r['seed'] for r in runs] for runs in written['results'].values()] == [[0], [0]]
    paired = [partial, '--split', 'val', '--out', str(tmp_path / 'p')]
    proc = run_tool('tools/analysis_tools/demo_paired.py', *paired)
    assert proc.returncode == 2 and 'partial study results file' in proc.stderr

    proc = call('--work-dir', second, '--reuse', partial, '--out', full)
    assert proc.stdout.count('taken from') == 2 and '[seed 0] student: taken from' in proc.stdout
    assert '[seed 1] student: val mAP' in proc.stdout  # trained here
    assert '[seed 0] student: val mAP' not in proc.stdout
    done = json.load(open(full))
    assert 'missing' not in done['protocol']
    trained_on = written['results']['student'][0]['commit']  # the commit that trained seed 0
    assert done['protocol']['reused'] == {partial: [trained_on]}
    assert done['results']['student'][0]['taken_from']['commit'] == trained_on
    for name in ('student', 'teacher'):
        assert done['results'][name][0]['val'] == written['results'][name][0]['val']
        assert [r['seed'] for r in done['results'][name]] == [0, 1]

    # Test cannot be read on the taken runs: their checkpoints are on the first machine.
    argv = [*CONFIGS, '--seeds', '0', '1', '--work-dir', second, '--out', str(tmp_path / 't.json')]
    proc = study(*argv, '--cfg-options', *SMALL_TOOL_RUN, expect=1)
    assert 'run student of seed 0:' in proc.stderr
    assert 'its checkpoint is on the machine that made it' in proc.stderr

    # A --reuse file that is not JSON, or not a results file: refused, named, nothing written.
    for content, error in (
        ('{', 'bad.json: not a JSON file'),
        ('{"runs": []}', 'bad.json: not a study results file'),
    ):
        (tmp_path / 'bad.json').write_text(content)
        args = ['--reuse', str(tmp_path / 'bad.json'), '--out', str(tmp_path / 'x.json')]
        proc = call('--work-dir', second, *args, seeds=('0',), expect=1)
        assert error in proc.stderr
        assert not osp.exists(tmp_path / 'x.json')
