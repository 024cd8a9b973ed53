"""CIFAR-layout backbones of CRD / mdistiller and any timm network (``TimmBackbone``), returning
mmpretrain-style stage tuples."""

from .cifar_four_stage_resnet import CifarBottleneck, CifarFourStageResNet
from .cifar_mobilenet_v2 import CifarInvertedResidual, CifarMobileNetV2
from .cifar_resnet import CifarBasicBlock, CifarResNet
from .cifar_shufflenet import ChannelShuffle, CifarShuffleNetV1, CifarShuffleNetV2
from .cifar_vgg import CifarVGG
from .timm_backbone import TimmBackbone
from .wide_resnet import WideBasicBlock, WideResNet, WideStage

__all__ = [
    'CifarResNet',
    'CifarBasicBlock',
    'CifarFourStageResNet',
    'CifarBottleneck',
    'WideResNet',
    'WideBasicBlock',
    'WideStage',
    'CifarVGG',
    'CifarMobileNetV2',
    'CifarInvertedResidual',
    'CifarShuffleNetV1',
    'CifarShuffleNetV2',
    'ChannelShuffle',
    'TimmBackbone',
]
