from .single_teacher import SingleTeacherDistiller
from .taps import Taps

__all__ = ['SingleTeacherDistiller', 'Taps']
