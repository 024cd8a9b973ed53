from .frozen_aware_constructor import FrozenAwareOptimWrapperConstructor

__all__ = ['FrozenAwareOptimWrapperConstructor']
