_base_ = [
    '../_base_/pairs/cifar100_resnet56_to_resnet20.py',
    '../_base_/methods/reviewkd_mdistiller_3stages.py',
]
model = _base_.method
