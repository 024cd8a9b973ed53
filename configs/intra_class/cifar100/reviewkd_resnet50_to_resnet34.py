_base_ = [
    '../../_base_/pairs/intra_class/cifar100_resnet50_to_resnet34.py',
    '../../_base_/methods/reviewkd.py',
]
model = _base_.method
