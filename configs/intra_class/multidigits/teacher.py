# Study teacher: the demo's CIFAR ResNet-18 at width 8 (0.18 M parameters), softmax head.
_base_ = [
    '../../_base_/models/digits_resnet_student.py',
    '../../_base_/recipes/intra_class/multidigits.py',
]
model = dict(
    backbone=dict(stem_channels=8, base_channels=8),
    head=dict(_base_.single_label_head, in_channels=64),
)
