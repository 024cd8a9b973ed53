# CIFAR-100 classifier resnet32x4 (CIFAR layout) with mdistiller's recipe: LinearClsHead + softmax
# cross-entropy, SGD lr 0.05, 240 epochs (teacher, or the "student alone" baseline).
_base_ = ['../_base_/models/cifar/resnet32x4.py', '../_base_/recipes/cifar100.py']
model = dict(
    head=dict(
        _delete_=True,
        type='LinearClsHead',
        num_classes=100,
        in_channels=256,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        topk=(1, 5),
    )
)
