# Multi-label ResNet-8x4 (`resnet8x4` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_resnet8x4.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=8, width_multiplier=4, out_indices=(2,)),
    head=dict(in_channels=256),
)
taps = _base_.cifar_resnet8x4_taps  # what a distiller may record of this network
