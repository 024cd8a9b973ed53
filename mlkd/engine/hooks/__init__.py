from .num_classes_check import NumClassesCheckHook

__all__ = ['NumClassesCheckHook']
