# What every ImageNet-layout model file of `configs/_base_/models/` (`<net>_ml.py`) builds: an
# mmpretrain backbone (set by each file) that starts from mmpretrain's ImageNet-1K weights
# `PRETRAINED` (downloaded by mmengine on first use; set `init_cfg=None` to train from scratch),
# global average pooling and a linear multi-label head; 80 classes (MS-COCO) by default, override
# `model.head.num_classes` per dataset.
PRETRAINED = None  # set by each model file: its backbone's checkpoint
model = dict(
    type='ImageClassifier',
    backbone=dict(),  # set by each model file, with init_cfg loading PRETRAINED
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=None,  # set by each model file: the backbone's output channels
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
