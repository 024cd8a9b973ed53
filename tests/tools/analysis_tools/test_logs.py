"""tools/analysis_tools/analyze_logs.py and collect_results.py on real (two-epoch) MultiDigits
runs."""

import csv
import os.path as osp
import statistics
from collections import defaultdict

import pytest
from conftest import assert_png, read_scalars, run_tool

ANALYZE = 'tools/analysis_tools/analyze_logs.py'
COLLECT = 'tools/analysis_tools/collect_results.py'


def _train_lines(work_dir):
    return [line for line in read_scalars(work_dir) if 'iter' in line]


def _val_maps(work_dir):
    """(epoch, mAP) of the validation lines, in epoch order."""
    return [(line['step'], line['mAP']) for line in read_scalars(work_dir) if 'mAP' in line]


def _markdown_rows(text):
    """Data rows of the Markdown tables in ``text``, as lists of cell strings."""
    rows = [line for line in text.splitlines() if line.startswith('| ')]
    return [[cell.strip() for cell in row.strip('|').split(' | ')] for row in rows]


def test_plot_curve_draws_every_loss_term_of_two_runs(tool_runs, tmp_path):
    runs = tool_runs['seeds']
    out = str(tmp_path / 'curves.png')
    result = run_tool(ANALYZE, 'plot_curve', runs[0], runs[1], '--legend', 's0', 's1', '--out', out)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_png(out)
    # one panel per loss term: total, task loss and each distillation term of 3D, then mAP
    assert '(loss, loss_cls, loss_pd, loss_ndd, mAP) of 2 run(s)' in result.stdout
    with open(str(tmp_path / 'curves.csv'), newline='') as f:
        points = list(csv.DictReader(f))
    for name, work_dir in (('s0', runs[0]), ('s1', runs[1])):
        lines = _train_lines(work_dir)
        assert len(lines) == 8  # 2 epochs x 4 iterations, logged every iteration
        for key in ('loss', 'loss_cls', 'loss_pd', 'loss_ndd'):
            plotted = [
                (int(p['x']), float(p['y'])) for p in points if p['run'] == name and p['key'] == key
            ]
            assert plotted == [
                (line['iter'], pytest.approx(line[key], rel=1e-12)) for line in lines
            ]
        plotted = [
            (int(p['x']), float(p['y'])) for p in points if p['run'] == name and p['key'] == 'mAP'
        ]
        assert plotted == [(e, pytest.approx(v, rel=1e-12)) for e, v in _val_maps(work_dir)]
        assert [e for e, _ in plotted] == [1, 2]


def test_plot_curve_by_epoch_averages_the_logged_values(tool_runs, tmp_path):
    work_dir = tool_runs['seeds'][0]
    out = str(tmp_path / 'by_epoch.png')
    result = run_tool(
        ANALYZE, 'plot_curve', work_dir, '--keys', 'loss_pd', '--xaxis', 'epoch', '--out', out
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_png(out)
    by_epoch = defaultdict(list)
    for line in _train_lines(work_dir):
        by_epoch[line['epoch']].append(line['loss_pd'])
    with open(str(tmp_path / 'by_epoch.csv'), newline='') as f:
        plotted = [(int(p['x']), float(p['y'])) for p in csv.DictReader(f)]
    assert plotted == [
        (e, pytest.approx(sum(v) / len(v), rel=1e-12)) for e, v in sorted(by_epoch.items())
    ]


def test_plot_curve_names_an_unknown_key(tool_runs, tmp_path):
    result = run_tool(
        ANALYZE,
        'plot_curve',
        tool_runs['seeds'][0],
        '--keys',
        'loss_nope',
        '--out',
        str(tmp_path / 'x.png'),
    )
    assert result.returncode != 0
    assert "no run logged 'loss_nope'" in result.stderr and 'loss_pd' in result.stderr
    assert not osp.exists(tmp_path / 'x.png')


def test_cal_train_time_matches_the_logged_times(tool_runs):
    work_dir = tool_runs['seeds'][0]
    result = run_tool(
        ANALYZE, 'cal_train_time', work_dir, '--legend', 'run0', '--style', 'markdown'
    )
    assert result.returncode == 0, result.stderr[-3000:]
    row = next(r for r in _markdown_rows(result.stdout) if r[0] == 'run0')
    lines = _train_lines(work_dir)
    # the first logged iteration of each epoch is left out by default
    kept = [line for line in lines if line['iter'] not in (1, 5)]
    times = [line['time'] for line in kept]
    assert row[1] == '6'
    assert row[2] == f'{statistics.fmean(times):.4f}'
    assert row[3] == f'{statistics.fmean(line["data_time"] for line in kept):.4f}'
    slowest = max(kept, key=lambda line: line['time'])
    assert row[4] == f'{slowest["time"]:.4f} (iter {slowest["iter"]})'
    epoch_means = [
        statistics.fmean(line['time'] for line in kept if line['epoch'] == e) for e in (1, 2)
    ]
    assert row[6] == f'{max(epoch_means):.4f} (epoch {epoch_means.index(max(epoch_means)) + 1})'

    everything = run_tool(
        ANALYZE, 'cal_train_time', work_dir, '--include-outliers', '--style', 'markdown'
    )
    row = _markdown_rows(everything.stdout)[1]
    assert row[1] == '8'
    assert row[2] == f'{statistics.fmean(line["time"] for line in lines):.4f}'


def test_collect_results_groups_seeds_as_mean_and_std(tool_runs, tmp_path):
    out = str(tmp_path / 'results.md')
    result = run_tool(COLLECT, tool_runs['root'], '--metrics', 'mAP', 'OF1_oracle', '--out', out)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = _markdown_rows(result.stdout)
    assert rows[0] == [
        'config',
        'teacher',
        'student',
        'method',
        'seeds',
        'epochs',
        'mAP (last)',
        'mAP (best)',
        'OF1_oracle (last)',
        'OF1_oracle (best)',
        'wall time',
    ]
    assert len(rows) == 2  # both seeds in one row
    row = dict(zip(rows[0], rows[1]))
    assert (
        row['config'],
        row['teacher'],
        row['student'],
        row['method'],
        row['seeds'],
        row['epochs'],
    ) == ('3d_multidigits', 'mldecoder_teacher', 'mldecoder_student', 'pd+ndd', '0, 1', '2')
    for key in ('mAP', 'OF1_oracle'):
        series = [
            [line[key] for line in read_scalars(tool_runs['seeds'][s]) if key in line]
            for s in (0, 1)
        ]
        last = [values[-1] for values in series]
        best = [max(values) for values in series]
        assert (
            row[f'{key} (last)'] == f'{statistics.fmean(last):.2f} ± {statistics.stdev(last):.2f}'
        )
        assert (
            row[f'{key} (best)'] == f'{statistics.fmean(best):.2f} ± {statistics.stdev(best):.2f}'
        )
    assert row['wall time'].count(':') == 2

    with open(out) as f:
        assert f.read().strip() == '\n'.join(
            line for line in result.stdout.splitlines() if line.startswith('|')
        )
    with open(str(tmp_path / 'results.csv'), newline='') as f:
        numbers = list(csv.DictReader(f))
    assert len(numbers) == 1 and numbers[0]['runs'] == '2'
    last = [_val_maps(tool_runs['seeds'][s])[-1][1] for s in (0, 1)]
    assert float(numbers[0]['mAP_last_mean']) == pytest.approx(statistics.fmean(last), rel=1e-9)
    assert float(numbers[0]['mAP_last_std']) == pytest.approx(statistics.stdev(last), rel=1e-9)
    wall = float(numbers[0]['wall_time_s_mean'])
    assert sum(line['time'] for line in _train_lines(tool_runs['seeds'][0])) / 2 < wall < 600


def test_collect_results_per_run_names_the_best_epoch(tool_runs):
    result = run_tool(
        COLLECT, tool_runs['seeds'][0], tool_runs['seeds'][1], '--per-run', '--style', 'ascii'
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for seed, work_dir in tool_runs['seeds'].items():
        line = next(text for text in result.stdout.splitlines() if work_dir in text)
        cells = [cell.strip() for cell in line.strip('|').split('|')]
        maps = _val_maps(work_dir)
        best_epoch, best = max(maps, key=lambda point: point[1])
        assert cells[5] == str(seed)
        assert cells[7] == f'{maps[-1][1]:.2f}'
        assert cells[8] == f'{best:.2f} (epoch {best_epoch})'


def test_collect_results_reports_a_missing_metric_and_folder(tool_runs, tmp_path):
    result = run_tool(COLLECT, tool_runs['root'], '--metrics', 'mAP_nope')
    assert result.returncode != 0 and 'no run logged mAP_nope' in result.stderr
    result = run_tool(COLLECT, str(tmp_path / 'absent'))
    assert result.returncode != 0 and 'absent' in result.stderr


def test_the_default_curves_of_a_single_label_run_are_its_accuracy():
    """Evaluation lines also carry the timing keys: data_time was taken for the run's metric."""
    from conftest import load_tool

    from mlkd.utils.run_logs import RunLog

    train = [dict(loss=1.0, loss_kd=0.5, time=0.2, data_time=0.1, epoch=1, iter=1, step=1)]
    evals = [
        {'data_time': 0.1, 'time': 0.2, 'teacher/accuracy/top1': 90.0, 'step': 1},
        {'accuracy/top1': 50.0, 'step': 1},
    ]
    run = RunLog(name='w', files=[], train=train, evals=evals)
    keys = load_tool('analysis_tools/analyze_logs').default_keys([run])
    assert keys == ['loss', 'loss_kd', 'accuracy/top1']
