_base_ = [
    '../../_base_/pairs/intra_class/cifar100_vgg13_to_vgg8.py',
    '../../_base_/methods/ofd_vgg_teacher.py',
]
model = _base_.method
