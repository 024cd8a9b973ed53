# The study's KD + RKD (kd_rkd.py) from the intra-class contrastive teacher.
_base_ = ['./kd_rkd.py']
model = dict(teacher_ckpt=_base_.intra_class_teacher_ckpt)
