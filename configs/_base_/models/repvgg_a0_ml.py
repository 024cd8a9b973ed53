# Multi-label repvgg_a0 (ImageNet layout) with a linear multi-label head; 80 classes (MS-COCO) by
# default, override `model.head.num_classes` per dataset. The backbone starts from mmpretrain's
# ImageNet-1K weights (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch).
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/repvgg/repvgg-A0_8xb32_in1k_20221213-60ae8e23.pth'

model = dict(
    type='ImageClassifier',
    backbone=dict(type='RepVGG', arch='A0', out_indices=(3, ),
        init_cfg=dict(type='Pretrained', checkpoint=PRETRAINED, prefix='backbone')),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=1280,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
