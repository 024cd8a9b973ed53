_base_ = [
    '../../_base_/models/cifar/wrn_40_2.py',
    '../../_base_/recipes/intra_class/tiny_imagenet_teacher.py',
]
model = dict(head=_base_.single_label_head)
