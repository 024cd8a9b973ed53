# Multi-label ResNet-32 (`resnet32` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_resnet32.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=32, out_indices=(2,)), head=dict(in_channels=64)
)
taps = _base_.cifar_resnet32_taps  # what a distiller may record of this network
