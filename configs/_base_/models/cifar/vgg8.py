# Multi-label VGG-8-BN: the CIFAR layout of CRD / mdistiller (`vgg8 = vgg8_bn` in
# mdistiller/models/cifar) with a linear multi-label head; 80 classes (MS-COCO) by default,
# override `model.head.num_classes` per dataset. Trained from scratch: no ImageNet weights exist
# for the CIFAR-layout nets, so the 3D protocol's "all models are pre-trained on ImageNet-1K"
# cannot hold for them (open point, methods.md §4.4.5); the default init is the reference one
# (Kaiming fan-out convs, unit BN). Any input size works (global average pooling): 32x32 as in CRD,
# or 224x224 as in the 3D paper.
model = dict(
    type='ImageClassifier',
    backbone=dict(type='CifarVGG', depth=8, batch_norm=True, out_indices=(4, )),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=80,
        in_channels=512,
        # L2D's task loss: BCE summed over batch and classes (paper loss weights assume this scale).
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
