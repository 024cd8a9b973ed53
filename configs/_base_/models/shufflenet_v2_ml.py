# Multi-label shufflenet_v2 (ImageNet layout) with a linear multi-label head and mmpretrain's
# ImageNet-1K weights; see common/multi_label_classifier.py.
_base_ = [
    './common/imagenet_weights.py',
    './common/multi_label_classifier.py',
    '../taps/shufflenet_v2.py',
]
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/shufflenet_v2/shufflenet_v2_batch1024_imagenet_20200812-5bf4721e.pth'
model = dict(
    backbone=dict(
        type='ShuffleNetV2',
        widen_factor=1.0,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=1024),
)
taps = _base_.shufflenet_v2_taps  # what a distiller may record of this network
