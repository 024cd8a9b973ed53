from .anchor_positive_views import AnchorPositiveViews
from .crop_box import CROP_META_KEYS, RandomResizedCropWithBox
from .cutout import RandomColorCutout
from .pillow_load_resize import PillowLoadResize
from .uda_rand_augment import UDA_OPERATIONS, UDARandAugment, apply_uda_operation, uda_magnitude

__all__ = [
    'AnchorPositiveViews',
    'PillowLoadResize',
    'CROP_META_KEYS',
    'RandomResizedCropWithBox',
    'RandomColorCutout',
    'UDARandAugment',
    'UDA_OPERATIONS',
    'apply_uda_operation',
    'uda_magnitude',
]
