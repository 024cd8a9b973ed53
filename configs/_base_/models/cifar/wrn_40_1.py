# Multi-label WRN-40-1 (`wrn_40_1` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_wrn.py']
model = dict(
    backbone=dict(type='WideResNet', depth=40, widen_factor=1, out_indices=(2,)),
    head=dict(in_channels=64),
)
taps = _base_.cifar_wrn_taps  # what a distiller may record of this network
