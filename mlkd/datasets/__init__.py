from .image_list import MultiLabelImageList
from .multidigits import MultiDigits, export_image_folder

__all__ = ['MultiDigits', 'MultiLabelImageList', 'export_image_folder']
