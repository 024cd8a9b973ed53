_base_ = [
    '../../_base_/pairs/intra_class/cifar100_wrn_40_2_to_shufflev2.py',
    '../../_base_/methods/fitnet.py',
]
model = _base_.method
