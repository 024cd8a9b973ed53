# Multi-label MobileNetV2 (T=6, width 0.5; `MobileNetV2 = mobile_half` in mdistiller/models/cifar),
# see ../common/multi_label_classifier.py. The ImageNet-layout net with ImageNet-1K weights is
# `../mobilenet_v2_ml.py` (what the 3D protocol's pre-training implies for this student).
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_mobilenetv2.py']
model = dict(
    backbone=dict(type='CifarMobileNetV2', expand_ratio=6, width_mult=0.5, out_indices=(7,)),
    head=dict(in_channels=1280),
)
taps = _base_.cifar_mobilenetv2_taps  # what a distiller may record of this network
