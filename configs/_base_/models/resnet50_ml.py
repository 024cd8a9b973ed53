# Multi-label resnet50 (ImageNet layout) with a linear multi-label head and mmpretrain's
# ImageNet-1K weights; see common/multi_label_classifier.py.
_base_ = ['./common/imagenet_weights.py', './common/multi_label_classifier.py', '../taps/resnet.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet50_8xb32_in1k_20210831-ea4938fc.pth'
model = dict(
    backbone=dict(
        type='ResNet',
        depth=50,
        num_stages=4,
        out_indices=(3,),
        style='pytorch',
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=2048),
)
taps = _base_.resnet_taps  # what a distiller may record of this network
