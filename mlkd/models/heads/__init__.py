from .ml_decoder import GroupFC, LabelQueryDecoder, MLDecoderHead

__all__ = ['MLDecoderHead', 'LabelQueryDecoder', 'GroupFC']
