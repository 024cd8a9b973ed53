_base_ = [
    '../../_base_/pairs/intra_class/cifar100_vgg13_to_mobilenetv2.py',
    '../../_base_/methods/kd_softmax.py',
]
model = _base_.method
