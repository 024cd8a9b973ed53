"""tools/benchmarks/benchmark_distill_step.py: the variants are timed round-robin with the clock
given, warm-up rounds untimed, one median per variant; ``--clock cpu`` is refused on CUDA."""

import pytest
from conftest import load_tool


def test_steps_run_round_robin_and_report_medians_of_the_timed_rounds():
    bench = load_tool('benchmarks/benchmark_distill_step')
    calls = []
    now = [0.0]
    cost = {'a': [100.0, 1.0, 3.0, 2.0], 'b': [50.0, 5.0, 4.0, 6.0]}  # per call, in call order

    def step(name):
        def run():
            now[0] += cost[name][sum(c == name for c in calls)]
            calls.append(name)

        return run

    medians = bench.timed_interleaved(
        {'a': step('a'), 'b': step('b')}, repeats=3, device='cpu', warmup=1, clock=lambda: now[0]
    )
    assert calls == ['a', 'b'] * 4  # interleaved, not a a a a b b b b
    assert medians == {'a': 2.0, 'b': 5.0}  # warm-up costs (100, 50) left out


def test_cpu_clock_is_refused_on_cuda(monkeypatch, capsys):
    bench = load_tool('benchmarks/benchmark_distill_step')
    monkeypatch.setattr(
        'sys.argv', ['benchmark_distill_step.py', '--device', 'cuda', '--clock', 'cpu']
    )
    with pytest.raises(SystemExit) as exit_info:
        bench.main()
    assert exit_info.value.code != 0
    assert '--clock cpu' in capsys.readouterr().err
