"""mlkd.utils.run_logs: a run's LossDiagnosticsHook records read back by column."""

import json

from mlkd.utils.run_logs import read_diagnostic_series


def test_diagnostics_by_column_with_gaps_where_a_step_did_not_log(tmp_path):
    logs = tmp_path / '20260101_000000' / 'vis_data'
    logs.mkdir(parents=True)
    lines = [
        {'loss': 3.0, 'step': 1},  # a training line without diagnostics
        {'diag/loss_kd/value': 1.0, 'diag/loss_kd/grad_norm': 2.0, 'step': 1},
        {'diag/loss_cls/value': 0.5, 'step': 1},
        {'diag/loss_kd/value': 1.5, 'step': 9},
    ]
    (logs / 'scalars.json').write_text(''.join(json.dumps(line) + '\n' for line in lines))
    series = read_diagnostic_series(str(tmp_path))
    assert series == {
        'steps': [1, 9],
        'terms': {
            'loss_cls': {'value': [0.5, None]},
            'loss_kd': {'grad_norm': [2.0, None], 'value': [1.0, 1.5]},
        },
    }
    json.dumps(series)  # what a stored result holds


def test_a_resumed_run_drops_what_the_run_it_abandoned_logged_from_its_restart(tmp_path):
    """Trained to epoch 2 (iterations 1-8), then resumed from epoch 1's checkpoint: the new
    folder restarts at iteration 5 of epoch 2. The old iterations 5-8 and epoch 2's mAP are the
    abandoned run's; the new folder, stopped at iteration 6, has not evaluated epoch 2 yet."""
    from mlkd.utils.run_logs import read_run_log

    def folder(stamp, lines):
        logs = tmp_path / stamp / 'vis_data'
        logs.mkdir(parents=True)
        (logs / 'scalars.json').write_text(''.join(json.dumps(line) + '\n' for line in lines))

    first = [dict(loss=9.0 - i, epoch=1 + (i > 4), iter=i, step=i) for i in range(1, 9)]
    folder(
        '20260101_000000',
        [*first[:4], {'mAP': 30.0, 'step': 1}, *first[4:], {'mAP': 40.0, 'step': 2}],
    )
    folder('20260101_010000', [dict(loss=1.5, epoch=2, iter=i, step=i) for i in (5, 6)])
    run = read_run_log(str(tmp_path))
    assert [line['iter'] for line in run.train] == [1, 2, 3, 4, 5, 6]
    assert [line['loss'] for line in run.train[4:]] == [1.5, 1.5]
    assert run.evals == [{'mAP': 30.0, 'step': 1}]


def test_diagnostics_of_a_resumed_run_come_from_all_its_logs(tmp_path):
    from mlkd.utils.run_logs import read_diagnostics

    run = tmp_path / 'diag[1]'  # a glob character in the name
    for stamp, step in (('20260101_000000', 1), ('20260101_010000', 3)):
        logs = run / stamp / 'vis_data'
        logs.mkdir(parents=True)
        (logs / 'scalars.json').write_text(json.dumps({'diag/loss_kd/value': step, 'step': step}))
    assert read_diagnostics(str(run)) == {
        1: {'loss_kd': {'value': 1}},
        3: {'loss_kd': {'value': 3}},
    }
