# DigitObjects study teacher: the ranking student's CIFAR ResNet-18 at width 16 (0.7 M parameters),
# softmax head.
_base_ = [
    '../../_base_/models/digits_resnet_student.py',
    '../../_base_/recipes/intra_class/digit_objects.py',
]
model = dict(head=dict(_base_.single_label_head, in_channels=128))
