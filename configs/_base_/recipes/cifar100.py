# mdistiller's CIFAR-100 recipe (the data of datasets/cifar100.py, 240 epochs of SGD, batch 64)
# with mlkd's runtime: what a CIFAR-100 classifier or distillation config adds its model to. A
# classifier leaf merges `single_label_head` (models/common/single_label_head.py, 100 classes)
# into its CIFAR model file's head.
_base_ = [
    '../datasets/cifar100.py',
    '../schedules/sgd_cifar_240e.py',
    '../default_runtime.py',
    '../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
