# Multi-label ShuffleNetV2 (net size 1; `ShuffleV2` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py. The ImageNet-layout net with ImageNet-1K weights is
# `../shufflenet_v2_ml.py` (what the 3D protocol's pre-training implies for this student).
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_shufflenet.py']
model = dict(
    backbone=dict(type='CifarShuffleNetV2', net_size=1, out_indices=(3,)),
    head=dict(in_channels=1024),
)
taps = _base_.cifar_shufflenet_taps  # what a distiller may record of this network
