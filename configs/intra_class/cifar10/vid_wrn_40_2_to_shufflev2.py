_base_ = [
    '../../_base_/pairs/intra_class/cifar10_wrn_40_2_to_shufflev2.py',
    '../../_base_/methods/vid_3stages.py',
]
model = _base_.method
