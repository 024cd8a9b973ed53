# mdistiller's CIFAR recipe (240 epochs of SGD) on Tiny ImageNet (datasets/tiny_imagenet.py) with
# mlkd's runtime: what a Tiny ImageNet classifier or distillation config adds its model to. A
# classifier leaf merges `single_label_head` (models/common/single_label_head.py, 200 classes)
# into its CIFAR model file's head.
_base_ = [
    '../datasets/tiny_imagenet.py',
    '../schedules/sgd_cifar_240e.py',
    '../default_runtime.py',
    '../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
