"""tools/benchmarks/gpu_check.py on CPU in tiny shapes (one method): every check passes (peak
memory is CUDA-only), the overflow is injected and recovered from, the 2-process gloo run sees the
global batch; a failing check sets the exit code, and the checks can fail."""

import json

from conftest import load_tool

import mlkd
from mlkd.benchmarks import device_checks
from mlkd.benchmarks.device_checks import Check, Setup

# fp16 on CPU is slow: 16 px, batch 2, no timing, and the loss scale starts where 3D's
# gradients fit at init.
TINY = ['--device', 'cpu', '--image-size', '16', '--batch', '2', '--repeats', '0']
TINY += ['--init-scale', '256']


def test_every_check_passes_on_cpu(tmp_path, capsys):
    tool = load_tool('benchmarks/gpu_check')
    out = tmp_path / 'checks.json'
    assert tool.main([*TINY, '--method', '3d', '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    assert '| check | method | result | measured |' in printed
    checks = {(c['name'], c['method']): c for c in json.loads(out.read_text())['checks']}
    assert set(checks) == {
        ('fp16 step', '3d'),
        ('loss-scale overflow', '3d'),
        ('teacher cache', '3d'),
        ('channels-last', '3d'),
        ('peak memory', '3d'),
        ('metrics on device', ''),
        ('DDP 1 process', '3d'),
        ('DDP 2 processes', '3d'),
    }
    assert checks[('peak memory', '3d')]['status'] == 'skip'  # CUDA only
    assert all(c['status'] == 'pass' for k, c in checks.items() if k[0] != 'peak memory')
    overflow = checks[('loss-scale overflow', '3d')]['numbers']
    assert overflow['skipped'] and overflow['recovered']
    assert overflow['scale_after_overflow'] == overflow['scale'] / 2
    fp16 = checks[('fp16 step', '3d')]['numbers']
    assert fp16['grads_finite'] and fp16['loss_scale'] == 256 / 2 ** fp16['skipped_steps']
    # 3D's NDD compares samples: each rank logs the loss of the global batch; PD does not.
    global_terms = checks[('DDP 2 processes', '3d')]['numbers']['global_terms']
    assert '3d:loss_ndd' in global_terms and '3d:loss_pd' not in global_terms


def test_exit_code_is_one_when_a_check_fails(monkeypatch, capsys):
    tool = load_tool('benchmarks/gpu_check')
    rows = [Check('a', '', 'pass', ''), Check('b', '', 'skip', '')]
    monkeypatch.setattr(tool, 'run_checks', lambda setup, progress: rows)
    assert tool.main(TINY) == 0
    rows.append(Check('c', '3d', 'fail', 'measured'))
    assert tool.main(TINY) == 1
    assert '| c | 3d | FAIL | measured |' in capsys.readouterr().out


def test_fp16_and_overflow_checks_can_fail(monkeypatch):
    mlkd.register_all_modules()
    setup = Setup(device='cpu', methods=('fitnet',), batch=2, image_size=16, repeats=0)
    setup.init_scale = 2.0**10
    monkeypatch.setattr(device_checks, 'FP16_LOSS_RTOL', 0.0)  # fp16 never matches fp32 exactly
    monkeypatch.setattr(device_checks, 'OVERFLOW_FACTOR', 1.0)  # no overflow is injected
    fp16, overflow = device_checks.check_fp16_step(setup, 'fitnet', setup.batch_data())
    assert fp16.status == 'fail' and fp16.numbers['loss_rel_diff'] > 0
    assert overflow.status == 'fail' and 'NOT skipped' in overflow.measured
