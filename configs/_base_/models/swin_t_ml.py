# Multi-label swin_t (ImageNet layout) with a linear multi-label head and mmpretrain's ImageNet-1K
# weights; see common/multi_label_classifier.py.
_base_ = ['./common/imagenet_weights.py', './common/multi_label_classifier.py', '../taps/swin_t.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/swin-transformer/swin_tiny_224_b16x64_300e_imagenet_20210616_090925-66df6be6.pth'
model = dict(
    backbone=dict(
        type='SwinTransformer',
        arch='tiny',
        img_size=224,
        drop_path_rate=0.2,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone'),
    ),
    head=dict(in_channels=768),
)
taps = _base_.swin_t_taps  # what a distiller may record of this network
