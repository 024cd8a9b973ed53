# Multi-label VGG-8-BN (`vgg8 = vgg8_bn` in mdistiller/models/cifar), see
# ../common/multi_label_classifier.py.
_base_ = ['../common/multi_label_classifier.py', '../../taps/cifar_vgg.py']
model = dict(
    backbone=dict(type='CifarVGG', depth=8, batch_norm=True, out_indices=(4,)),
    head=dict(in_channels=512),
)
taps = _base_.cifar_vgg_taps  # what a distiller may record of this network
