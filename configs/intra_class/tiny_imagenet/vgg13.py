_base_ = [
    '../../_base_/models/cifar/vgg13.py',
    '../../_base_/recipes/intra_class/tiny_imagenet_teacher.py',
]
model = dict(head=_base_.single_label_head)
