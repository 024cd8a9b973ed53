from .frozen_aware_constructor import FrozenAwareOptimWrapperConstructor
from .guarded import GuardedOptimWrapper
from .mixed_precision import MixedPrecisionOptimWrapper

__all__ = [
    'FrozenAwareOptimWrapperConstructor',
    'GuardedOptimWrapper',
    'MixedPrecisionOptimWrapper',
]
