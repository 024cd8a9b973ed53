# Multi-label ResNet-50: the four-stage CIFAR layout of CRD / mdistiller (`ResNet50` in
# mdistiller/models/cifar/resnetv2.py: 3x3 stride-1 stem, no max-pool, bottlenecks 3-4-6-3 at
# strides 1, 2, 2, 2; last map 4x4 at 32x32, 8x8 at 64x64) with a linear multi-label head; 80
# classes (MS-COCO) by default, override `model.head` per dataset (the single-label leaves use a
# LinearClsHead with 10 / 100 / 200 classes). Trained from scratch; the default init is the
# reference one (Kaiming fan-out convs, unit BN). Parameter counts: docs/model_zoo.md. See
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_resnet34_50.py']
model = dict(
    backbone=dict(type='CifarFourStageResNet', depth=50, out_indices=(3,)),
    head=dict(in_channels=2048),
)
taps = _base_.cifar_resnet34_50_taps  # what a distiller may record of this network
