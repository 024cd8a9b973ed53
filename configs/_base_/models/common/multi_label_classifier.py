# What every model file of configs/_base_/models builds: a backbone (set by each file) + global
# average pooling + a linear multi-label head; 80 classes (MS-COCO) by default, override
# `model.head.num_classes` per dataset.
# * ImageNet-layout files (`../<net>_ml.py`) start the mmpretrain backbone from its ImageNet-1K
#   weights, `PRETRAINED` of imagenet_weights.py.
# * CIFAR-layout files (`../cifar/*.py`, the nets of CRD / mdistiller/models/cifar) train from
#   scratch: no ImageNet weights exist for them, so the 3D protocol's "all models are pre-trained
#   on ImageNet-1K" cannot hold (open point, methods.md §4.4.5); the default init is the
#   reference one (Kaiming fan-out convs, unit BN; mdistiller keeps PyTorch's default init for the
#   ShuffleNets). Any input size works (global average pooling): 32x32 as in CRD, or 224x224 as in
#   the 3D paper.
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
