# The intra-class contrastive paper's configs on Tiny ImageNet (configs/intra_class/tiny_imagenet): the data of
# datasets/tiny_imagenet_crop_flip.py (random crop 64 with 8 px padding + flip, the views of the intra-class teacher), mlkd's runtime and the single-label head. tiny_imagenet_teacher.py and
# tiny_imagenet_student.py add the paper's schedules.
_base_ = [
    '../../datasets/tiny_imagenet_crop_flip.py',
    '../../default_runtime.py',
    '../../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
