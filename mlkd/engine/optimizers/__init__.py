from .frozen_aware_constructor import FrozenAwareOptimWrapperConstructor
from .mixed_precision import MixedPrecisionOptimWrapper

__all__ = ['FrozenAwareOptimWrapperConstructor', 'MixedPrecisionOptimWrapper']
