_base_ = [
    '../../_base_/pairs/intra_class/cifar100_wrn_40_2_to_wrn_16_2.py',
    '../../_base_/methods/kd_softmax_rkd.py',
]
# From the intra-class contrastive teacher.
model = dict(_base_.method, teacher_ckpt=_base_.intra_class_teacher_ckpt)
