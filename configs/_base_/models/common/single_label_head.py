# The single-label head of the CIFAR-layout classifiers (configs/cifar100, configs/tiny_imagenet,
# configs/intra_class): a classifier leaf merges it into the head of a CIFAR model file
# (../cifar/*.py, whose `in_channels` it keeps): linear layer + softmax cross-entropy, top-1 /
# top-5. The dataset's recipe fills in `num_classes`.
single_label_head = dict(
    type='LinearClsHead',
    num_classes=None,
    loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
    topk=(1, 5),
)
