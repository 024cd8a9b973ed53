_base_ = [
    '../_base_/pairs/cifar100_wrn_40_2_to_wrn_16_2.py',
    '../_base_/methods/reviewkd_mdistiller_3stages.py',
]
model = _base_.method
