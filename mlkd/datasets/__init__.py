from .cifar import CIFAR10, CIFAR100
from .dataset_wrappers import KeyedDataset
from .digit_scenes import DigitScenes
from .image_list import MultiLabelImageList
from .label_subset import LabelSubset
from .multidigits import MultiDigits, export_image_folder
from .multiglyphs import MultiGlyphs
from .samplers import EpochKeyedSampler
from .tiny_imagenet import TinyImageNet

__all__ = [
    'CIFAR10',
    'CIFAR100',
    'DigitScenes',
    'EpochKeyedSampler',
    'KeyedDataset',
    'LabelSubset',
    'MultiDigits',
    'MultiGlyphs',
    'MultiLabelImageList',
    'TinyImageNet',
    'export_image_folder',
]
from .coco import COCOMultiLabel  # noqa: E402
from .cub import CUBAttributes  # noqa: E402
from .imagenet_real import ImageNetReaL  # noqa: E402
from .nus_wide import NUSWIDE  # noqa: E402
from .transforms import RandomColorCutout  # noqa: E402
from .voc import VOCMultiLabel  # noqa: E402

__all__ += [
    'COCOMultiLabel',
    'RandomColorCutout',
    'VOCMultiLabel',
    'CUBAttributes',
    'ImageNetReaL',
    'NUSWIDE',
]
