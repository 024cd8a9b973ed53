# Multi-label shufflenet_v2 (ImageNet layout) with a linear multi-label head; 80 classes (MS-COCO) by
# default, override `model.head.num_classes` per dataset. The backbone starts from mmpretrain's
# ImageNet-1K weights (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch).
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/shufflenet_v2/shufflenet_v2_batch1024_imagenet_20200812-5bf4721e.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(type='ShuffleNetV2', widen_factor=1.0,
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=1024,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
