# Multi-label ResNet-56 (`resnet56` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_resnet56.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=56, out_indices=(2,)), head=dict(in_channels=64)
)
taps = _base_.cifar_resnet56_taps  # what a distiller may record of this network
