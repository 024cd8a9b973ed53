_base_ = [
    '../../_base_/pairs/intra_class/cifar10_resnet50_to_resnet34.py',
    '../../_base_/methods/vid.py',
]
model = _base_.method
