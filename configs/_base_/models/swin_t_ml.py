# Multi-label swin_t (ImageNet layout) with a linear multi-label head; 80 classes (MS-COCO) by
# default, override `model.head.num_classes` per dataset. The backbone starts from mmpretrain's
# ImageNet-1K weights (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch).
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/swin-transformer/swin_tiny_224_b16x64_300e_imagenet_20210616_090925-66df6be6.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(type='SwinTransformer', arch='tiny', img_size=224, drop_path_rate=0.2,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=768,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
