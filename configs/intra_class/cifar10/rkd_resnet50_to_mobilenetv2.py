_base_ = [
    '../../_base_/pairs/intra_class/cifar10_resnet50_to_mobilenetv2.py',
    '../../_base_/methods/rkd.py',
]
model = _base_.method
