from .cutout import RandomColorCutout

__all__ = ['RandomColorCutout']
