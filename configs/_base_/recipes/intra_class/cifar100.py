# The intra-class contrastive paper's configs on CIFAR-100 (configs/intra_class/cifar100): the data of
# datasets/cifar100.py, mlkd's runtime and the single-label head. cifar100_teacher.py and
# cifar100_student.py add the paper's schedules.
_base_ = [
    '../../datasets/cifar100.py',
    '../../default_runtime.py',
    '../../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
