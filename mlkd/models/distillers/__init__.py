from .base import Distiller, build_frozen_teacher
from .label_sets import TeacherLabels, best_teacher_per_label, map_label_sets
from .multi_teacher import MultiTeacherDistiller
from .single_teacher import SingleTeacherDistiller
from .teacher_source import (
    CachedTeacher,
    CachingTeacher,
    LiveTeacher,
    TeacherSource,
    build_teacher_source,
)

__all__ = [
    'CachedTeacher',
    'CachingTeacher',
    'Distiller',
    'LiveTeacher',
    'MultiTeacherDistiller',
    'SingleTeacherDistiller',
    'TeacherLabels',
    'TeacherSource',
    'best_teacher_per_label',
    'build_frozen_teacher',
    'build_teacher_source',
    'map_label_sets',
]
