_base_ = [
    '../../_base_/pairs/intra_class/cifar10_vgg13_to_vgg8.py',
    '../../_base_/methods/reviewkd.py',
]
model = _base_.method
