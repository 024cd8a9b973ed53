_base_ = [
    '../_base_/pairs/cifar100_resnet32x4_to_shufflev2.py',
    '../_base_/methods/reviewkd_mdistiller_3stages.py',
]
model = _base_.method
