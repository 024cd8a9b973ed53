# CIFAR-100 classifier mobilenetv2 (CIFAR layout) with mdistiller's recipe: LinearClsHead + softmax
# cross-entropy, SGD lr 0.01, 240 epochs (teacher, or the "student alone" baseline).
_base_ = ['../_base_/models/cifar/mobilenetv2.py', '../_base_/recipes/cifar100.py']
model = dict(
    head=dict(
        _delete_=True,
        type='LinearClsHead',
        num_classes=100,
        in_channels=1280,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        topk=(1, 5),
    )
)
optim_wrapper = dict(optimizer=dict(lr=0.01))  # mdistiller: 0.01 for MobileNet / ShuffleNet
