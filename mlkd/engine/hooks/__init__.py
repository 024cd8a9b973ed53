from .num_classes_check import NumClassesCheckHook
from .student_ema import StudentEMAHook
from .teacher_eval import TeacherEvalHook

__all__ = ['NumClassesCheckHook', 'StudentEMAHook', 'TeacherEvalHook']
