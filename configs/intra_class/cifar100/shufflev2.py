_base_ = [
    '../../_base_/models/cifar/shufflev2.py',
    '../../_base_/recipes/intra_class/cifar100_student.py',
]
model = dict(head=_base_.single_label_head)
