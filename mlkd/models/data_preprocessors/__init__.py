from .multi_view import MultiViewClsDataPreprocessor

__all__ = ['MultiViewClsDataPreprocessor']
