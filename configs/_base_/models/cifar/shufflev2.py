# Multi-label ShuffleNetV2 (net size 1): the CIFAR layout of CRD / mdistiller (`ShuffleV2` in
# mdistiller/models/cifar) with a linear multi-label head; 80 classes (MS-COCO) by default,
# override `model.head.num_classes` per dataset. Trained from scratch: no ImageNet weights exist
# for the CIFAR-layout nets, so the 3D protocol's "all models are pre-trained on ImageNet-1K"
# cannot hold for them (open point, methods.md §4.4.5); the default init is Kaiming fan-out convs
# and unit BN (that of the other CRD nets; mdistiller keeps PyTorch's default init for the
# ShuffleNets). Any input size works (global average pooling): 32x32 as in CRD, or 224x224 as in
# the 3D paper. The ImageNet-layout net with ImageNet-1K weights is `../shufflenet_v2_ml.py` (what
# the 3D protocol's pre-training implies for this student).
model = dict(
    type='ImageClassifier',
    backbone=dict(type='CifarShuffleNetV2', net_size=1, out_indices=(3, )),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=1024,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
