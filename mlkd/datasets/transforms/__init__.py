from .cutout import RandomColorCutout
from .uda_rand_augment import UDA_OPERATIONS, UDARandAugment, apply_uda_operation, uda_magnitude

__all__ = ['RandomColorCutout', 'UDARandAugment', 'UDA_OPERATIONS', 'apply_uda_operation',
           'uda_magnitude']
