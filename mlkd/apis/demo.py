"""The demos: benchmarks on the bundled MultiDigits data, run by
:func:`mlkd.apis.benchmark.run_benchmark` (``tools/demo.py`` is their command line).

* :data:`DEMO`: teacher, plain student and every multi-label distillation method (``configs/demo/``;
  weights chosen on val, ``*-paper`` stages apply the papers' weights literally); docs/demo.md.
* :data:`MULTI_TEACHER`: a student distilled from two teachers of partial label sets (digits 0-6
  and 3-9) against the student distilled from each one alone (``configs/multi_teacher/``);
  docs/multi_teacher.md.
* :data:`RANKING`: the ranking benchmark on DigitScenes (``configs/ranking/``): teacher, plain
  student, the logit methods of the 3D paper's Table B.1 and its feature methods (RKD, PKT,
  ReviewKD). Its regime and every method's weights were chosen on val
  (docs/benchmarks/ranking_search.md), then frozen for one read of test.
* :data:`TASK_LOSSES`: the task losses of the Two-way paper's comparison (BCE, focal, ASL, Two-way,
  WARP, RML, softmax), each training the ranking benchmark's student on complete labels
  (``configs/ranking/task_losses/``); settings chosen on val, then one read of test
  (docs/benchmarks/task_losses.md).
* :data:`SINGLE_POSITIVE`: the single-positive losses of the SCL paper's comparison (AN, AN-LS,
  WAN, EPR, ROLE, EN, EN+CL, EN+SCL) on the ranking benchmark's data, one observed positive per
  training image (``configs/ranking/single_positive/``); a candidate regime, not yet chosen on val.
"""

from __future__ import annotations

from mlkd.apis.benchmark import Benchmark
from mlkd.apis.runs import METRICS

__all__ = ['BENCHMARKS', 'DEMO', 'MULTI_TEACHER', 'RANKING', 'SINGLE_POSITIVE', 'TASK_LOSSES']

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

MULTI_TEACHER = Benchmark(
    name='MultiDigits, two teachers of partial label sets',
    stages={
        'teacher-0to6': 'mlkd::multi_teacher/teacher_digits0to6.py',
        'teacher-3to9': 'mlkd::multi_teacher/teacher_digits3to9.py',
        'student': 'mlkd::demo/student.py',
        'L2D-0to6': 'mlkd::multi_teacher/l2d_digits0to6.py',
        'L2D-3to9': 'mlkd::multi_teacher/l2d_digits3to9.py',
        'L2D-both': 'mlkd::multi_teacher/l2d_two_teachers.py',
        'L2D-both-bestAP': 'mlkd::multi_teacher/l2d_two_teachers_best_ap.py',
    },
    default_stages=(
        'teacher-0to6',
        'teacher-3to9',
        'student',
        'L2D-0to6',
        'L2D-3to9',
        'L2D-both',
        'L2D-both-bestAP',
    ),
    teachers={'low': 'teacher-0to6', 'high': 'teacher-3to9'},
    fidelity_teacher=None,  # the plain student stands for neither partial teacher
    chart='multi_teacher.png',
)

#: Every stage of the ranking benchmark runs by default (the table's order).
_RANKING_STAGES = {
    'teacher': 'mlkd::ranking/teacher.py',
    'student': 'mlkd::ranking/student.py',
    'KD': 'mlkd::ranking/kd.py',
    'MSE': 'mlkd::ranking/mse.py',
    'PS': 'mlkd::ranking/ps.py',
    'MLD': 'mlkd::ranking/mld.py',
    'MDKD': 'mlkd::ranking/mdkd.py',
    'L2D': 'mlkd::ranking/l2d.py',
    '3D': 'mlkd::ranking/3d.py',
    'RKD': 'mlkd::ranking/rkd.py',
    'PKT': 'mlkd::ranking/pkt.py',
    'ReviewKD': 'mlkd::ranking/reviewkd.py',
}
RANKING = Benchmark(
    name='DigitScenes ranking',
    stages=_RANKING_STAGES,
    default_stages=tuple(_RANKING_STAGES),
    # ReviewKD reads four stages of teacher features: about 1.5 GB per epoch of 8,000 images in a
    # cache (22 GB per seed, 110 GB for five), and a run writing them took as long as a live one.
    live_teacher_stages=('ReviewKD',),
    chart='ranking.png',
)


def students_only(name: str, folder: str, leaves: dict[str, str], **settings) -> Benchmark:
    """A benchmark of students without a teacher, one stage per leaf of ``configs/<folder>/``
    (stage name -> file stem), all run by default, in that order."""
    stages = {stage: f'mlkd::{folder}/{leaf}.py' for stage, leaf in leaves.items()}
    return Benchmark(
        name=name,
        stages=stages,
        default_stages=tuple(stages),
        teachers={},
        fidelity_teacher=None,
        **settings,
    )


#: The task losses of the Two-way paper's comparison (its Tables B-C), each training the ranking
#: benchmark's student on complete labels (``configs/ranking/task_losses/``).
TASK_LOSSES = students_only(
    'DigitScenes task losses',
    'ranking/task_losses',
    {
        'BCE': 'bce',
        'focal': 'focal',
        'ASL': 'asl',
        'Two-way': 'two_way',
        'WARP': 'warp',
        'RML': 'rml',
        'softmax': 'softmax',
    },
    metrics=(*METRICS, 'mAP@sample'),  # the Two-way paper's second metric
    chart='task_losses.png',
)

#: The single-positive study (the SCL paper's Table B.1 rows): the ranking student with a linear
#: head, one observed positive per training image drawn per seed, under each single-positive loss
#: (``configs/ranking/single_positive/``), and the same network on complete labels (the positive
#: control's upper line).
SINGLE_POSITIVE = students_only(
    'DigitScenes single positive',
    'ranking/single_positive',
    {
        'full-labels': 'full_labels',
        'AN': 'an',
        'AN-LS': 'an_ls',
        'WAN': 'wan',
        'EPR': 'epr',
        'ROLE': 'role',
        'EN': 'en',
        'EN+CL': 'en_cl',
        'EN+SCL': 'en_scl',
    },
    chart='single_positive.png',
)

#: The benchmarks of ``tools/demo.py --benchmark``.
BENCHMARKS = {
    'demo': DEMO,
    'multi-teacher': MULTI_TEACHER,
    'ranking': RANKING,
    'task-losses': TASK_LOSSES,
    'single-positive': SINGLE_POSITIVE,
}
