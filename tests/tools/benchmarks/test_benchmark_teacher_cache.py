"""tools/benchmarks/benchmark_teacher_cache.py runs on CPU with the demo pair (numbers not
asserted); the bytes it reports per sample are those of the teacher's outputs."""

import torch
from conftest import MULTIDIGITS_TEACHER, load_tool
from mmengine.registry import DefaultScope

from mlkd.models.builder import build_network


def test_benchmark_runs_and_reports_the_stored_bytes(capsys):
    bench = load_tool('benchmarks/benchmark_teacher_cache')
    results = bench.main(
        [
            '--pair',
            'demo',
            '--method',
            'kd',
            'fitnet',
            '--batch',
            '2',
            '--repeats',
            '1',
            '--warmup',
            '0',
            '--write-batches',
            '1',
            '--device',
            'cpu',
        ]
    )
    out = capsys.readouterr().out
    assert '| kd |' in out and '| fitnet |' in out and '(a) student step' in out
    # Independent count: the teacher's logits and its stage-2 map on one 32 px image, fp32.
    with DefaultScope.overwrite_default_scope('mlkd'):
        teacher = build_network(MULTIDIGITS_TEACHER, 'teacher').eval()
    stage2 = []
    teacher.backbone.layer2.register_forward_hook(lambda m, i, o: stage2.append(o))
    with torch.no_grad():
        logits = teacher(torch.zeros(1, 3, 32, 32), mode='tensor')
    assert results['methods']['kd']['bytes'] == {'index': 8, 't_logits': 4 * logits.shape[1]}
    assert results['methods']['fitnet']['bytes'] == {
        'index': 8,
        't_logits': 4 * logits.shape[1],
        't_stage2': 4 * stage2[0][0].numel(),
    }
    for info in results['methods'].values():
        assert info['live'] > 0 and info['cached'] > 0
        assert set(info['writes']) == {'fp32', 'channels_last', 'amp'}
        assert set(info['loss_shift']) == {'float16', 'bfloat16'}
