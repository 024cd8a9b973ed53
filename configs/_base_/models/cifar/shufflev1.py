# Multi-label ShuffleNetV1 (g=3; `ShuffleV1` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_shufflenet.py']
model = dict(
    backbone=dict(type='CifarShuffleNetV1', groups=3, out_indices=(2,)), head=dict(in_channels=960)
)
taps = _base_.cifar_shufflenet_taps  # what a distiller may record of this network
