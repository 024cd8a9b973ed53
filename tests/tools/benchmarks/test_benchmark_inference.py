"""tools/benchmarks/benchmark_inference.py: variants timed round-robin after untimed warm-up
rounds, one median each; a tiny run of the tool gives every cell of its table and its JSON (no
speed is asserted: the numbers are measured on a quiet machine, docs/benchmarks/inference.md)."""

import json

from conftest import load_tool, run_tool


def test_variants_run_round_robin_and_report_medians_of_the_timed_rounds():
    bench = load_tool('benchmarks/benchmark_inference')
    calls, now = [], [0.0]
    cost = {'a': [100.0, 1.0, 3.0, 2.0], 'b': [50.0, 5.0, 4.0, 6.0]}  # per call, in call order

    def step(name):
        def run():
            now[0] += cost[name][sum(c == name for c in calls)]
            calls.append(name)

        return run

    medians = bench.timed_round_robin(
        {'a': step('a'), 'b': step('b')}, repeats=3, warmup=1, clock=lambda: now[0]
    )
    assert calls == ['a', 'b'] * 4
    assert medians == {'a': 2.0, 'b': 5.0}


def test_a_tiny_run_fills_the_table(tmp_path):
    out = tmp_path / 'bench.json'
    run = run_tool(
        'tools/benchmarks/benchmark_inference.py',
        '--batch-sizes', '1', '2', '--repeats', '1', '--warmup', '0', '--out', str(out),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    for row in ('| student | 0.19 M | eager |', '| teacher | 1.62 M | onnxruntime |'):
        assert row in run.stdout
    assert 'student over teacher, onnxruntime' in run.stdout
    results = json.loads(out.read_text())
    cells = {(r['network'], r['backend'], r['batch']) for r in results['images_per_second']}
    assert cells == {
        (n, b, s) for n in ('student', 'teacher') for b in ('eager', 'onnxruntime') for s in (1, 2)
    }
    assert all(r['value'] > 0 for r in results['images_per_second'])
