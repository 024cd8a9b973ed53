from .class_map import ClassMapHead, pool_class_maps
from .ml_decoder import GroupFC, LabelQueryDecoder, MLDecoderHead

__all__ = ['ClassMapHead', 'pool_class_maps', 'MLDecoderHead', 'LabelQueryDecoder', 'GroupFC']
