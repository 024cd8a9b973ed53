# What every CIFAR-layout model file of this folder builds: a CIFAR-layout backbone of CRD /
# mdistiller (mdistiller/models/cifar; set by each file) + global average pooling + a linear
# multi-label head; 80 classes (MS-COCO) by default, override `model.head.num_classes` per dataset.
# Trained from scratch: no ImageNet weights exist for the CIFAR-layout nets, so the 3D protocol's
# "all models are pre-trained on ImageNet-1K" cannot hold for them (open point, methods.md
# §4.4.5); the default init is the reference one (Kaiming fan-out convs, unit BN; mdistiller keeps
# PyTorch's default init for the ShuffleNets). Any input size works (global average pooling):
# 32x32 as in CRD, or 224x224 as in the 3D paper.
model = dict(
    type='ImageClassifier',
    backbone=dict(),  # set by each model file
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=None,  # set by each model file: the backbone's output channels
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
