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
