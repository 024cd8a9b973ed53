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
        head['commit'] = 'b' * 40
        result = dict(val=dict.fromkeys(METRICS, 1.0), config_sha256='0' * 64, cpu_seconds=1.0)
        return {seed: {name: dict(result) for name in study.runs} for seed in call['seeds']}

    monkeypatch.setattr('mlkd.apis.study.run_study', run_study)
    out = str(tmp_path / 'results.json')
    args = [*CONFIGS, '--seeds', '0', '--val-only', '--work-dir', str(tmp_path), '--out', out]
    load_tool('analysis_tools/study').main(args)
    with open(out) as file:
        assert json.load(file)['protocol']['commit'] == 'a' * 40
