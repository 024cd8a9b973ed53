# Multi-label vgg13_bn (ImageNet layout) with a linear multi-label head; 80 classes (MS-COCO) by
# default, override `model.head.num_classes` per dataset. The backbone starts from mmpretrain's
# ImageNet-1K weights (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch).
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/vgg/vgg13_bn_batch256_imagenet_20210207-1a8b7864.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(type='VGG', depth=13, norm_cfg=dict(type='BN'), num_classes=-1,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=512,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
