# Multi-label ResNet-20 (`resnet20` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_resnet20.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=20, out_indices=(2,)), head=dict(in_channels=64)
)
taps = _base_.cifar_resnet20_taps  # what a distiller may record of this network
