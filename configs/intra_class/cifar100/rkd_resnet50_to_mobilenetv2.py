_base_ = [
    '../../_base_/pairs/intra_class/cifar100_resnet50_to_mobilenetv2.py',
    '../../_base_/methods/rkd.py',
]
model = _base_.method
