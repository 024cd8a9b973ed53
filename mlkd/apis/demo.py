"""The demo: teacher, plain student and every multi-label distillation method on MultiDigits.

The stages and their configs (``configs/demo/``; weights chosen on val, ``*-paper`` stages apply
the papers' weights literally), run by :func:`mlkd.apis.benchmark.run_benchmark`;
``tools/demo.py`` is its command line and docs/demo.md its protocol and results.
"""

from __future__ import annotations

from mlkd.apis.benchmark import Benchmark

__all__ = ['DEMO']

DEMO = Benchmark(
    name='MultiDigits',
    stages={
        'teacher': 'mlkd::demo/teacher.py',
        'student': 'mlkd::demo/student.py',
        'KD': 'mlkd::demo/kd.py',
        'MSE': 'mlkd::demo/mse.py',
        'PS': 'mlkd::demo/ps.py',
        'MLD': 'mlkd::demo/mld.py',
        'MDKD': 'mlkd::demo/mdkd.py',
        '3D': 'mlkd::demo/3d.py',
        'L2D': 'mlkd::demo/l2d.py',
        '3D-paper': 'mlkd::demo/3d_paper_weights.py',
        'L2D-paper': 'mlkd::demo/l2d_paper_weights.py',
    },
    default_stages=('teacher', 'student', 'KD', 'MSE', 'PS', 'MLD', 'MDKD', '3D', 'L2D'),
    # Per-term diagnostics of the distilled stages, once per epoch (MultiDigits: 24 iterations).
    distill_hooks=(dict(type='LossDiagnosticsHook', interval=24),),
    chart='demo.png',
)
