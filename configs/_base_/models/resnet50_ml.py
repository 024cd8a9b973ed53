# Multi-label resnet50 (ImageNet layout) with a linear multi-label head; 80 classes (MS-COCO) by
# default, override `model.head.num_classes` per dataset. The backbone starts from mmpretrain's
# ImageNet-1K weights (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch).
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet50_8xb32_in1k_20210831-ea4938fc.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet', depth=50, num_stages=4, out_indices=(3, ), style='pytorch',
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=2048,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
