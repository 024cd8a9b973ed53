"""tools/benchmarks/benchmark_distill_step.py: ``--clock cpu`` is refused on CUDA (the timing itself:
tests/benchmarks/test_common.py)."""

import pytest
from conftest import load_tool


def test_cpu_clock_is_refused_on_cuda(monkeypatch, capsys):
    bench = load_tool('benchmarks/benchmark_distill_step')
    monkeypatch.setattr(
        'sys.argv', ['benchmark_distill_step.py', '--device', 'cuda', '--clock', 'cpu']
    )
    with pytest.raises(SystemExit) as exit_info:
        bench.main()
    assert exit_info.value.code != 0
    assert '--clock cpu' in capsys.readouterr().err
