_base_ = [
    '../../_base_/pairs/intra_class/cifar10_wrn_40_2_to_wrn_16_2.py',
    '../../_base_/methods/fitnet.py',
]
model = _base_.method
