"""tools/benchmarks/benchmark_inference.py: a tiny run of the tool gives every cell of its table
and its JSON (no speed is asserted: the numbers are measured on a quiet machine,
docs/benchmarks/inference.md; the round-robin timing: tests/benchmarks/test_common.py)."""

import json

from conftest import run_tool


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
