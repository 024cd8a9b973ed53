_base_ = ['../../_base_/pairs/intra_class/digit_objects.py', '../../_base_/methods/kd_softmax.py']
# From the intra-class contrastive teacher.
model = dict(_base_.method, teacher_ckpt=_base_.intra_class_teacher_ckpt)
