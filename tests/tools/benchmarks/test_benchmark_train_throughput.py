"""tools/benchmarks/benchmark_train_throughput.py --tiny on CPU: the step variants (student,
live, cached) and the data variants are measured (numbers not asserted, only that they exist),
and the ratios and worker counts are those of the measured numbers."""

import json
import math

from conftest import load_tool

ARGS = ['--tiny', '--device', 'cpu', '--shapes', '16x2', '--method', '3d', '--precision', 'amp']
ARGS += ['--pipelines', 'l2d']


def test_tiny_run_reports_steps_data_and_workers(tmp_path, capsys):
    tool = load_tool('benchmarks/benchmark_train_throughput')
    out = tmp_path / 'throughput.json'
    results = tool.main([*ARGS, '--images', '4', '--out', str(out)])
    assert json.loads(out.read_text())['steps'] == json.loads(json.dumps(results['steps']))
    steps = {r['variant']: r for r in results['steps']}
    assert set(steps) == {'student', '3d live', '3d cached'}
    for row in steps.values():
        assert row['images_per_second'] > 0 and row['peak_bytes'] is None  # CPU
        ratio = row['step_ms'] / steps['student']['step_ms']
        assert math.isclose(row['vs_student'], ratio)
    assert math.isclose(
        steps['3d cached']['cached_vs_live'],
        steps['3d cached']['step_ms'] / steps['3d live']['step_ms'],
    )
    data = results['data']
    variants = {(r['implementation'], r['decoder']) for r in data['pipelines']}
    assert variants == {
        ('shipped (mmcv / mmpretrain)', 'pillow (as shipped)'),
        ('shipped (mmcv / mmpretrain)', 'cv2'),
        ('shipped, PillowLoadResize', 'pillow'),
        ('torchvision transforms.v2', 'torchvision'),
        ('torchvision transforms.v2', 'pil'),
        ('torchvision transforms.v2', 'cv2'),
    }
    assert all(r['images_per_second'] > 0 for r in data['pipelines'] + data['decoders'])
    assert len(data['decoders']) == 7
    worker = data['shipped_per_worker']['l2d']
    for row in results['workers_needed']:
        assert row['workers'] == math.ceil(row['step_images_per_second'] / worker)
    printed = capsys.readouterr().out
    assert '| 16 px, 2 | amp | 3d cached |' in printed and '| l2d | shipped' in printed
