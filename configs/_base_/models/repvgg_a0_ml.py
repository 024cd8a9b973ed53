# Multi-label repvgg_a0 (ImageNet layout) with a linear multi-label head and mmpretrain's
# ImageNet-1K weights; see common/multi_label_classifier.py.
_base_ = ['./common/imagenet_weights.py', './common/multi_label_classifier.py', '../taps/repvgg.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/repvgg/repvgg-A0_8xb32_in1k_20221213-60ae8e23.pth'
model = dict(
    backbone=dict(
        type='RepVGG',
        arch='A0',
        out_indices=(3,),
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=1280),
)
taps = _base_.repvgg_taps  # what a distiller may record of this network
