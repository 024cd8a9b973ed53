# Multi-label vgg13_bn (ImageNet layout) with a linear multi-label head and mmpretrain's
# ImageNet-1K weights; see common/multi_label_classifier.py.
_base_ = [
    './common/imagenet_weights.py',
    './common/multi_label_classifier.py',
    '../taps/vgg13_bn.py',
]
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/vgg/vgg13_bn_batch256_imagenet_20210207-1a8b7864.pth'
model = dict(
    backbone=dict(
        type='VGG',
        depth=13,
        norm_cfg=dict(type='BN'),
        num_classes=-1,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=512),
)
taps = _base_.vgg13_bn_taps  # what a distiller may record of this network
