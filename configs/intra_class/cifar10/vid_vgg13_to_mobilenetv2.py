_base_ = [
    '../../_base_/pairs/intra_class/cifar10_vgg13_to_mobilenetv2.py',
    '../../_base_/methods/vid.py',
]
model = _base_.method
