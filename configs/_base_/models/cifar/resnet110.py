# Multi-label ResNet-110 (`resnet110` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py']
model = dict(
    backbone=dict(type='CifarResNet', depth=110, out_indices=(2,)), head=dict(in_channels=64)
)
