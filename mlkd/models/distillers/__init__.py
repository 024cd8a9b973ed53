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
    'LiveTeacher',
    'SingleTeacherDistiller',
    'TeacherSource',
    'build_teacher_source',
]
