from .label_coverage import LabelCoverageHook
from .loss_diagnostics import LossDiagnosticsHook
from .non_finite_guard import NonFiniteGuardHook
from .num_classes_check import NumClassesCheckHook
from .progress import ProgressBarHook
from .random_state import RandomStateHook
from .student_ema import StudentEMAHook
from .teacher_cache import TeacherCacheHook
from .teacher_eval import TeacherEvalHook
from .teacher_score import TeacherScoreHook

__all__ = [
    'LabelCoverageHook',
    'LossDiagnosticsHook',
    'NonFiniteGuardHook',
    'NumClassesCheckHook',
    'ProgressBarHook',
    'RandomStateHook',
    'StudentEMAHook',
    'TeacherCacheHook',
    'TeacherEvalHook',
    'TeacherScoreHook',
]
