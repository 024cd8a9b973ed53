from .num_classes_check import NumClassesCheckHook
from .random_state import RandomStateHook
from .student_ema import StudentEMAHook
from .teacher_eval import TeacherEvalHook

__all__ = ['NumClassesCheckHook', 'RandomStateHook', 'StudentEMAHook', 'TeacherEvalHook']
