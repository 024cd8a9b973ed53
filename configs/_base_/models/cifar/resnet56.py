# Multi-label ResNet-56 (`resnet56` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=56, out_indices=(2,)), head=dict(in_channels=64)
)
