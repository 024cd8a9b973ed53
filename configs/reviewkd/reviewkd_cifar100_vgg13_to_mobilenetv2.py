_base_ = [
    '../_base_/pairs/cifar100_vgg13_to_mobilenetv2.py',
    '../_base_/methods/reviewkd_mdistiller.py',
]
model = _base_.method
