# The intra-class contrastive paper's configs on CIFAR-10 (configs/intra_class/cifar10): the data of
# datasets/cifar10.py, mlkd's runtime and the single-label head. cifar10_teacher.py and
# cifar10_student.py add the paper's schedules.
_base_ = [
    '../../datasets/cifar10.py',
    '../../default_runtime.py',
    '../../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
