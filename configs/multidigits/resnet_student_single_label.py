# MultiDigits single-label classifier (one digit per image): the student-size CIFAR ResNet-18 with
# mmpretrain's LinearClsHead (softmax cross-entropy), top-1 / top-5 accuracy.
_base_ = [
    '../_base_/models/digits_resnet_student.py',
    '../_base_/recipes/multidigits_single_label.py',
]
model = dict(
    head=dict(
        _delete_=True,
        type='LinearClsHead',
        num_classes=10,
        in_channels=128,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        topk=(1, 5),
    )
)
