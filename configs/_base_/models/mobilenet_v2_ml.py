# Multi-label mobilenet_v2 (ImageNet layout) with a linear multi-label head and mmpretrain's
# ImageNet-1K weights; see common/multi_label_classifier.py.
_base_ = [
    './common/imagenet_weights.py',
    './common/multi_label_classifier.py',
    '../taps/mobilenet_v2.py',
]
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/mobilenet_v2/mobilenet_v2_batch256_imagenet_20200708-3b2dc3af.pth'
model = dict(
    backbone=dict(
        type='MobileNetV2',
        widen_factor=1.0,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=1280),
)
taps = _base_.mobilenet_v2_taps  # what a distiller may record of this network
