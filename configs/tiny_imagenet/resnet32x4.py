# Tiny ImageNet (200 classes, 64x64) classifier resnet32x4 (CIFAR layout; global pooling makes it
# size-agnostic) with the CIFAR recipe of mdistiller.
_base_ = ['../_base_/models/cifar/resnet32x4.py', '../_base_/recipes/tiny_imagenet.py']
model = dict(
    head=dict(
        _delete_=True,
        type='LinearClsHead',
        num_classes=200,
        in_channels=256,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        topk=(1, 5),
    )
)
