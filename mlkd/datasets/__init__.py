from .multidigits import MultiDigits

__all__ = ['MultiDigits']
